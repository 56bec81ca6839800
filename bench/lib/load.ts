import autocannon from 'autocannon';

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  errors: number;
  non2xx: number;
  /** CPU microseconds per measured request, per probe of LoadOptions.cpu. */
  cpuMicrosPerRequest?: Record<string, number>;
}

/** A scenario's result against its baseline, as the bench reports it (its ratio is computed from these). */
export interface ScenarioReport {
  scenario: string;
  engine: string;
  connections: number;
  result: LoadResult;
  baseline: string;
  baselineRate: number;
  serverRssMb?: number;
}

export interface LoadOptions {
  url: string;
  connections: number;
  durationSeconds: number;
  method?: 'GET' | 'POST' | 'PUT' | 'DELETE';
  headers?: Record<string, string>;
  /** A body per request, for writes that must differ (unique ids). */
  body?: () => string;
  /** A path per request (overrides the url's path), for requests spread over resources. */
  path?: () => string;
  /** Body, path and extra headers of each request together (e.g. a sender header matching the body). */
  request?: () => { body?: string; path?: string; headers?: Record<string, string> };
  /** Seconds of unmeasured load first, so the JIT has compiled the hot paths. Default 2. */
  warmupSeconds?: number;
  /** CPU meters (a process's, PostgreSQL's), started for the measured part: each returns its reading. */
  cpu?: Record<string, () => () => number>;
}

/** Drives a server with autocannon for a while and summarises throughput and latency. */
export async function runLoad(options: LoadOptions): Promise<LoadResult> {
  const warmup = options.warmupSeconds ?? 2;
  if (warmup > 0) await drive(options, warmup);
  const probes = Object.entries(options.cpu ?? {});
  const meters = probes.map(([, start]) => start());
  const result = await drive(options, options.durationSeconds);
  const cpuMicrosPerRequest = Object.fromEntries(probes.map(([name], n) => [name, Math.round((meters[n]!() * 1e6) / Math.max(1, result.requests.total))]));
  return {
    requestsPerSecond: Math.round(result.requests.average),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result.requests.total,
    errors: result.errors + result.timeouts,
    non2xx: result.non2xx,
    ...(probes.length > 0 ? { cpuMicrosPerRequest } : {}),
  };
}

function drive(options: LoadOptions, durationSeconds: number) {
  const makeBody = options.body;
  const makePath = options.path;
  const makeRequest = options.request;
  const perRequest = makeBody || makePath || makeRequest;
  return autocannon({
    url: options.url,
    connections: options.connections,
    duration: durationSeconds,
    method: options.method ?? 'GET',
    headers: { ...(makeBody || makeRequest ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(perRequest
      ? {
          requests: [
            {
              setupRequest: (request: any) => {
                const made = makeRequest?.() ?? {};
                return {
                  ...request,
                  ...(makeBody ? { body: makeBody() } : {}),
                  ...(makePath ? { path: makePath() } : {}),
                  ...(made.body !== undefined ? { body: made.body } : {}),
                  ...(made.path !== undefined ? { path: made.path } : {}),
                  ...(made.headers ? { headers: { ...request.headers, ...made.headers } } : {}),
                };
              },
            },
          ],
        }
      : {}),
  });
}
