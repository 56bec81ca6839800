// What the edge checks and rate limits cost a send (issue "Hardening"): send at 64 connections
// on a server with them and on one without them (BENCH_WITHOUT=edgeChecks,rateLimits, see
// bench/parley-server.ts), round after round, alternating which goes first, each server on a
// fresh database. Runs on a shared machine swing by ±15%, so the figure is the median of each
// round's ratio (with / without), not one pair.
import { runLoad } from './lib/load.js';
import { postgresCpuMeter, startServerProcess } from './lib/processes.js';
import { sendScenarios } from './lib/send-load.js';

export interface HardeningArm {
  oneToOne: number;
  group: number;
  /** The server's CPU per send, µs (1:1, group). */
  serverCpuMicros: [number, number];
}

export interface HardeningAbResult {
  /** The parts the second server left out. */
  without: string;
  connections: number;
  durationSeconds: number;
  rounds: Array<{ with: HardeningArm; without: HardeningArm }>;
  /** Medians of the rounds' ratios, with / without: 1 is free, 0.95 costs 5%. */
  medianRatio: { oneToOne: number; group: number };
}

interface Options {
  withPostgresDatabase: <T>(run: (url: string) => Promise<T>) => Promise<T>;
  rounds: number;
  connections: number;
  durationSeconds: number;
  users: number;
  /** The parts the second server leaves out (BENCH_WITHOUT): both by default, or one to find which costs. */
  without: string;
  log: (line: string) => void;
}

async function arm(options: Options, without: boolean): Promise<HardeningArm> {
  return options.withPostgresDatabase(async (url) => {
    const server = await startServerProcess<{ port: number; appId: string; apiKey: string; chatGroups: number }>('parley-server.ts', {
      BENCH_ENGINE: 'postgres',
      DATABASE_URL: url,
      BENCH_USERS: String(options.users),
      BENCH_HISTORY: '',
      ...(without ? { BENCH_WITHOUT: options.without } : {}),
    });
    try {
      const target = { base: `http://127.0.0.1:${server.info.port}`, headers: { appid: server.info.appId, apikey: server.info.apiKey }, users: options.users, chatGroups: server.info.chatGroups };
      const cpu = { server: server.cpuMeter, postgres: postgresCpuMeter };
      const sends = sendScenarios(target, (load) => runLoad({ ...load, cpu }), options.connections, options.durationSeconds);
      const oneToOne = await sends.oneToOne();
      const group = await sends.group();
      return {
        oneToOne: oneToOne.requestsPerSecond,
        group: group.requestsPerSecond,
        serverCpuMicros: [oneToOne.cpuMicrosPerRequest?.server ?? 0, group.cpuMicrosPerRequest?.server ?? 0],
      };
    } finally {
      await server.stop();
    }
  });
}

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

export async function hardeningAB(options: Options): Promise<HardeningAbResult> {
  const rounds: HardeningAbResult['rounds'] = [];
  for (let round = 0; round < options.rounds; round++) {
    // Alternating which goes first, so a machine that speeds up or slows down favours neither.
    const first = round % 2 === 0;
    const a = await arm(options, !first);
    const b = await arm(options, first);
    const [withParts, withoutParts] = first ? [a, b] : [b, a];
    rounds.push({ with: withParts, without: withoutParts });
    options.log(
      `hardening A/B round ${round + 1}: 1:1 ${withParts.oneToOne} vs ${withoutParts.oneToOne} sends/s (${(withParts.oneToOne / withoutParts.oneToOne).toFixed(3)}), ` +
        `group ${withParts.group} vs ${withoutParts.group} (${(withParts.group / withoutParts.group).toFixed(3)})`,
    );
  }
  return {
    without: options.without,
    connections: options.connections,
    durationSeconds: options.durationSeconds,
    rounds,
    medianRatio: {
      oneToOne: Number(median(rounds.map((r) => r.with.oneToOne / r.without.oneToOne)).toFixed(3)),
      group: Number(median(rounds.map((r) => r.with.group / r.without.group)).toFixed(3)),
    },
  };
}

export function describeHardening(result: HardeningAbResult): string {
  return (
    `hardening A/B (postgres, ${result.connections} conn, ${result.rounds.length} rounds of ${result.durationSeconds} s): ` +
    `send with all / without ${result.without}, median of the rounds' ratios: 1:1 ${result.medianRatio.oneToOne}, group ${result.medianRatio.group}`
  );
}
