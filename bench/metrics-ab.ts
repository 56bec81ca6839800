// What the metrics cost a send (docs/metrics.md): send at 64 connections on a server with the
// metrics on (PARLEY_METRICS_PORT, scraped every 5 s meanwhile, three times Prometheus's usual
// rate) and on one without them (the same settings and BENCH_WITHOUT=metrics, see
// bench/parley-server.ts). Both servers run side by side, each on a fresh database seeded alike,
// and take the load in turns (lib/side-by-side.ts), as the hardening A/B does. The figures are
// the median of the slices' ratios (with / without) and the servers' CPU per send.
//
//   npm run bench -- --engine postgres --only metrics [--metrics-slices 12] [--metrics-slice-seconds 5]
import http from 'node:http';
import { withServerPair, type PairInfo } from './lib/server-pair.js';
import { median, takeTurns } from './lib/side-by-side.js';

export interface MetricsSlice {
  /** Sends per second, with the metrics and without. */
  with: number;
  without: number;
  /** The servers' CPU per send, µs. */
  withCpuMicros: number;
  withoutCpuMicros: number;
  withP99Ms: number;
  withoutP99Ms: number;
}

type Pair = [withMetrics: number, without: number];

export interface MetricsAbResult {
  connections: number;
  sliceSeconds: number;
  oneToOne: MetricsSlice[];
  group: MetricsSlice[];
  /** Medians of the slices' ratios of sends a second, with / without: 1 is free, 0.97 costs 3%. */
  medianRatio: { oneToOne: number; group: number };
  /** Medians of the servers' CPU per send, µs, with / without. */
  medianCpuMicros: { oneToOne: Pair; group: Pair };
  /** Scrapes of the server with metrics during the slices, and the median scrape's size and time. */
  scrapes: { count: number; medianBytes: number; medianMs: number };
}

interface Options {
  withPostgresDatabase: <T>(run: (url: string) => Promise<T>) => Promise<T>;
  /** Slices of each scenario on each server (after one warm-up slice each, not counted). */
  slices: number;
  connections: number;
  sliceSeconds: number;
  users: number;
  log: (line: string) => void;
}

/** One GET /metrics: its size and how long it took. */
function scrape(port: number): Promise<{ bytes: number; ms: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path: '/metrics' }, (res) => {
        let bytes = 0;
        res.on('data', (chunk: Buffer) => (bytes += chunk.length));
        res.on('end', () => (res.statusCode === 200 ? resolve({ bytes, ms: performance.now() - started }) : reject(new Error(`GET /metrics answered ${res.statusCode}`))));
      })
      .on('error', reject);
  });
}

export async function metricsAB(options: Options): Promise<MetricsAbResult> {
  const env = { PARLEY_METRICS_PORT: '0' };
  return withServerPair(options, { with: env, without: { ...env, BENCH_WITHOUT: 'metrics' } }, async (pair) => {
    const metricsPort = (pair.with.server.info as PairInfo & { metricsPort: number | null }).metricsPort;
    if (!metricsPort) throw new Error('the server with metrics has no metrics port');
    if ((pair.without.server.info as PairInfo & { metricsPort: number | null }).metricsPort) throw new Error('the server without metrics serves them');
    const scrapes: Array<{ bytes: number; ms: number }> = [];
    let failed: unknown;
    const timer = setInterval(
      () =>
        void scrape(metricsPort).then(
          (s) => scrapes.push(s),
          (error: unknown) => (failed = error),
        ),
      5_000,
    );
    try {
      const result: MetricsAbResult = {
        connections: options.connections,
        sliceSeconds: options.sliceSeconds,
        oneToOne: [],
        group: [],
        medianRatio: { oneToOne: 0, group: 0 },
        medianCpuMicros: { oneToOne: [0, 0], group: [0, 0] },
        scrapes: { count: 0, medianBytes: 0, medianMs: 0 },
      };
      for (const kind of ['oneToOne', 'group'] as const) {
        await takeTurns({
          slices: options.slices,
          a: pair.with.scenarios[kind],
          b: pair.without.scenarios[kind],
          onSlice: (index, { a: w, b: wo }) => {
            const row: MetricsSlice = {
              with: w.requestsPerSecond,
              without: wo.requestsPerSecond,
              withCpuMicros: w.cpuMicrosPerRequest?.server ?? 0,
              withoutCpuMicros: wo.cpuMicrosPerRequest?.server ?? 0,
              withP99Ms: w.p99Ms,
              withoutP99Ms: wo.p99Ms,
            };
            result[kind].push(row);
            options.log(
              `metrics A/B ${kind === 'oneToOne' ? '1:1' : 'group'} slice ${index + 1}: ${row.with} vs ${row.without} sends/s ` +
                `(${(row.with / row.without).toFixed(3)}), server CPU per send ${row.withCpuMicros} / ${row.withoutCpuMicros} µs`,
            );
          },
        });
        const rows = result[kind];
        result.medianRatio[kind] = Number(median(rows.map((r) => r.with / r.without)).toFixed(3));
        result.medianCpuMicros[kind] = [median(rows.map((r) => r.withCpuMicros)), median(rows.map((r) => r.withoutCpuMicros))];
      }
      if (failed) throw failed;
      result.scrapes = {
        count: scrapes.length,
        medianBytes: median(scrapes.map((s) => s.bytes)),
        medianMs: Number(median(scrapes.map((s) => s.ms)).toFixed(1)),
      };
      return result;
    } finally {
      clearInterval(timer);
    }
  });
}

export function describeMetrics(result: MetricsAbResult): string {
  const cpu = (pair: Pair) => `${pair[0]} / ${pair[1]} µs`;
  return (
    `metrics A/B (postgres, ${result.connections} conn, ${result.oneToOne.length} slices of ${result.sliceSeconds} s per scenario and server, taken in turns): ` +
    `send with metrics (scraped every 5 s) / without, median of the slices' ratios: 1:1 ${result.medianRatio.oneToOne}, group ${result.medianRatio.group}; ` +
    `server CPU per send with / without: 1:1 ${cpu(result.medianCpuMicros.oneToOne)}, group ${cpu(result.medianCpuMicros.group)}; ` +
    `${result.scrapes.count} scrapes, median ${result.scrapes.medianBytes} bytes in ${result.scrapes.medianMs} ms`
  );
}
