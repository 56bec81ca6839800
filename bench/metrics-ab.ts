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
import { median, type SendTurns, sendTurns } from './lib/side-by-side.js';

export interface MetricsAbResult extends SendTurns {
  connections: number;
  sliceSeconds: number;
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
      const turns = await sendTurns('metrics', options.slices, { with: pair.with.scenarios, without: pair.without.scenarios }, options.log);
      if (failed) throw failed;
      const summary = { count: scrapes.length, medianBytes: median(scrapes.map((s) => s.bytes)), medianMs: Number(median(scrapes.map((s) => s.ms)).toFixed(1)) };
      return { connections: options.connections, sliceSeconds: options.sliceSeconds, ...turns, scrapes: summary };
    } finally {
      clearInterval(timer);
    }
  });
}

export function describeMetrics(result: MetricsAbResult): string {
  const cpu = (pair: [number, number]) => `${pair[0]} / ${pair[1]} µs`;
  return (
    `metrics A/B (postgres, ${result.connections} conn, ${result.oneToOne.length} slices of ${result.sliceSeconds} s per scenario and server, taken in turns): ` +
    `send with metrics (scraped every 5 s) / without, median of the slices' ratios: 1:1 ${result.medianRatio.oneToOne}, group ${result.medianRatio.group}; ` +
    `server CPU per send with / without: 1:1 ${cpu(result.medianCpuMicros.oneToOne)}, group ${cpu(result.medianCpuMicros.group)}; ` +
    `${result.scrapes.count} scrapes, median ${result.scrapes.medianBytes} bytes in ${result.scrapes.medianMs} ms`
  );
}
