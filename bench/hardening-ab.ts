// What the edge checks and rate limits cost a send (issue "Hardening"): send at 64 connections
// on a server with them and on one without them (BENCH_WITHOUT=edgeChecks,rateLimits, see
// bench/parley-server.ts). Both servers run side by side, each on a fresh database, and take the
// load in turns (lib/side-by-side.ts). The figure is the median of the slices' ratios (with /
// without), and the servers' CPU per send.
import { withServerPair } from './lib/server-pair.js';
import { type SendTurns, sendTurns } from './lib/side-by-side.js';

export interface HardeningAbResult extends SendTurns {
  /** The parts the second server left out. */
  without: string;
  connections: number;
  sliceSeconds: number;
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
    const turns = await sendTurns('hardening', options.slices, { with: pair.with.scenarios, without: pair.without.scenarios }, options.log);
    return { without: options.without, connections: options.connections, sliceSeconds: options.sliceSeconds, ...turns };
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
