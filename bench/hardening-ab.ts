// What the edge checks and rate limits cost a send (issue "Hardening"): send at 64 connections
// on a server with them and on one without them (BENCH_WITHOUT=edgeChecks,rateLimits, see
// bench/parley-server.ts). Both servers run side by side, each on a fresh database, and take the
// load in turns (lib/side-by-side.ts). The figure is the median of the slices' ratios (with /
// without), and the servers' CPU per send.
import { withServerPair } from './lib/server-pair.js';
import { median, takeTurns } from './lib/side-by-side.js';

export interface HardeningSlice {
  /** Sends per second, with the parts and without. */
  with: number;
  without: number;
  /** The servers' CPU per send, µs. */
  withCpuMicros: number;
  withoutCpuMicros: number;
}

export interface HardeningAbResult {
  /** The parts the second server left out. */
  without: string;
  connections: number;
  sliceSeconds: number;
  oneToOne: HardeningSlice[];
  group: HardeningSlice[];
  /** Medians of the slices' ratios, with / without: 1 is free, 0.95 costs 5%. */
  medianRatio: { oneToOne: number; group: number };
  /** Medians of the servers' CPU per send, µs, with / without. */
  medianCpuMicros: { oneToOne: [number, number]; group: [number, number] };
}

interface Options {
  withPostgresDatabase: <T>(run: (url: string) => Promise<T>) => Promise<T>;
  /** Slices of each scenario on each server (after one warm-up slice each, not counted). */
  slices: number;
  connections: number;
  sliceSeconds: number;
  users: number;
  /** The parts the second server leaves out (BENCH_WITHOUT): both by default, or one to find which costs. */
  without: string;
  log: (line: string) => void;
}

export async function hardeningAB(options: Options): Promise<HardeningAbResult> {
  return withServerPair(options, { with: {}, without: { BENCH_WITHOUT: options.without } }, async (pair) => {
    const result: HardeningAbResult = {
      without: options.without,
      connections: options.connections,
      sliceSeconds: options.sliceSeconds,
      oneToOne: [],
      group: [],
      medianRatio: { oneToOne: 0, group: 0 },
      medianCpuMicros: { oneToOne: [0, 0], group: [0, 0] },
    };
    for (const kind of ['oneToOne', 'group'] as const) {
      await takeTurns({
        slices: options.slices,
        a: pair.with.scenarios[kind],
        b: pair.without.scenarios[kind],
        onSlice: (index, { a: w, b: wo }) => {
          const row = {
            with: w.requestsPerSecond,
            without: wo.requestsPerSecond,
            withCpuMicros: w.cpuMicrosPerRequest?.server ?? 0,
            withoutCpuMicros: wo.cpuMicrosPerRequest?.server ?? 0,
          };
          result[kind].push(row);
          options.log(
            `hardening A/B ${kind === 'oneToOne' ? '1:1' : 'group'} slice ${index + 1}: ${row.with} vs ${row.without} sends/s ` +
              `(${(row.with / row.without).toFixed(3)}), server CPU per send ${row.withCpuMicros} / ${row.withoutCpuMicros} µs`,
          );
        },
      });
      const rows = result[kind];
      result.medianRatio[kind] = Number(median(rows.map((r) => r.with / r.without)).toFixed(3));
      result.medianCpuMicros[kind] = [median(rows.map((r) => r.withCpuMicros)), median(rows.map((r) => r.withoutCpuMicros))];
    }
    return result;
  });
}

export function describeHardening(result: HardeningAbResult): string {
  const cpu = (pair: [number, number]) => `${pair[0]} / ${pair[1]} µs`;
  return (
    `hardening A/B (postgres, ${result.connections} conn, ${result.oneToOne.length} slices of ${result.sliceSeconds} s per scenario and server, taken in turns): ` +
    `send with all / without ${result.without}, median of the slices' ratios: 1:1 ${result.medianRatio.oneToOne}, group ${result.medianRatio.group}; ` +
    `server CPU per send with / without: 1:1 ${cpu(result.medianCpuMicros.oneToOne)}, group ${cpu(result.medianCpuMicros.group)}`
  );
}
