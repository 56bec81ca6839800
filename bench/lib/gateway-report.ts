// The gateway bench's results (bench/gateway.ts) and their summary, ratios to the same run's floor.
import { median } from './side-by-side.js';

/** One slice of the fan-out at a fixed load, on Parley or on the floor. */
export interface Slice {
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  deliveriesPerSecond: number;
  missing: number;
  failedSends: number;
  /** CPU seconds over the slice: the server's (or the floor's), PostgreSQL's, the generators'. */
  cpu: Record<string, number>;
}

export interface IdleResult {
  opened: number;
  failed: number;
  ms: number;
  rssBeforeMb: number;
  rssAfterMb: number;
  kbPerSocket: number;
  connectCpuSeconds: number;
  generatorRssMb: number;
  /** Why clients retried while connecting (close codes), and the states of those never greeted. */
  retries: Record<string, number>;
  failedStates: Record<string, number>;
}

export interface GatewayResult {
  at: string;
  /** Load averages (1, 5, 15 min) at the start and the end, and the cores. */
  load: { start: string; end: string; cores: number };
  sockets: number;
  group: number;
  deliveries: number;
  frameBytes: number;
  idle: { parley: IdleResult; floor: IdleResult };
  fanout: Array<{ parley: Slice; floor: Slice }>;
  /** Deliveries a second of each burst. */
  max: { parley: number[]; floor: number[] };
  /** One message to the group: ms from its send's start to the last member's arrival. */
  one: { parley: number[]; floor: number[] };
  storm: {
    clients: number;
    stopSeconds: number;
    restartSeconds: number;
    allResumedSeconds: number;
    resumedP50Seconds: number;
    resumedP90Seconds: number;
    afterReadySeconds: number;
    restarted: number;
    resumed: number;
    lastRestartSeconds: number;
    rounds: Array<{ once: number; more: number; none: number }>;
    wireRepeats: number;
    failedSends: number;
    states: Record<string, number>;
    /** Why clients went reconnecting during the storm (close codes), and how many ended unauthorized. */
    closes: Record<string, number>;
    /** CPU seconds over the storm (server: both of its processes). */
    cpu?: Record<string, number>;
  };
}

const m = (values: number[]) => Number(median(values).toFixed(1));

/** The medians a summary shows. */
export function gatewayFigures(r: GatewayResult) {
  const side = (pick: (turn: GatewayResult['fanout'][number]) => number) => m(r.fanout.map(pick));
  const cpu = (which: 'parley' | 'floor', meter: string) => m(r.fanout.map((t) => t[which].cpu[meter] ?? 0));
  return {
    p50: [side((t) => t.parley.p50Ms), side((t) => t.floor.p50Ms)],
    p99: [side((t) => t.parley.p99Ms), side((t) => t.floor.p99Ms)],
    p99Ratio: m(r.fanout.map((t) => t.parley.p99Ms / Math.max(0.1, t.floor.p99Ms))),
    maxRatio: Number(median(r.max.parley.map((p, i) => p / r.max.floor[i]!)).toFixed(3)),
    max: [m(r.max.parley), m(r.max.floor)],
    one: [m(r.one.parley), m(r.one.floor)],
    cpu: { server: cpu('parley', 'server'), postgres: cpu('parley', 'postgres'), generators: cpu('parley', 'generators'), floor: cpu('floor', 'server'), floorGenerators: cpu('floor', 'generators') },
  };
}

export function describeGateway(r: GatewayResult): string {
  const f = gatewayFigures(r);
  const missing = r.fanout.reduce((n, t) => n + t.parley.missing, 0);
  const refused = r.idle.parley.failedStates.unauthorized ?? 0;
  const lost = r.storm.rounds.reduce((n, x) => n + x.none, 0);
  const twice = r.storm.rounds.reduce((n, x) => n + x.more, 0);
  return [
    `\ngateway (PostgreSQL; load average ${r.load.start} at the start, ${r.load.end} at the end, ${r.load.cores} cores):`,
    `  idle sockets: Parley ${r.idle.parley.opened} (${r.idle.parley.failed} not greeted, ${refused} of them refused 4001), ${r.idle.parley.kbPerSocket} KB RSS each; floor ${r.idle.floor.opened}, ${r.idle.floor.kbPerSocket} KB each ` +
      `(${(r.idle.parley.kbPerSocket / Math.max(1, r.idle.floor.kbPerSocket)).toFixed(1)}x); connecting took ${r.idle.parley.ms} / ${r.idle.floor.ms} ms; 50,000 sockets at Parley's: ${Math.round((r.idle.parley.kbPerSocket * 50_000) / 1024)} MB`,
    `  fan-out at ${r.deliveries} deliveries/s to ${r.group} sockets (medians of ${r.fanout.length} slices): p50 ${f.p50[0]} / floor ${f.p50[1]} ms, p99 ${f.p99[0]} / floor ${f.p99[1]} ms (target p99 ≤ 200 ms); ${missing} missing`,
    `    CPU s a ${r.fanout[0] ? 'slice' : ''}: server ${f.cpu.server}, PostgreSQL ${f.cpu.postgres}, generators ${f.cpu.generators}; floor ${f.cpu.floor}, its generators ${f.cpu.floorGenerators}`,
    `  max deliveries/s: Parley ${f.max[0]}, floor ${f.max[1]}: ${(f.maxRatio * 100).toFixed(0)}% (target ≥ 60%)`,
    `  one message to ${r.group} members, to the last: Parley ${f.one[0]} ms, floor ${f.one[1]} ms`,
    `  reconnect storm, ${r.storm.clients} clients: stop ${r.storm.stopSeconds} s, start ${r.storm.restartSeconds} s, all resumed ${r.storm.allResumedSeconds} s after SIGTERM ` +
      `(${r.storm.afterReadySeconds} s after the restart; half by ${r.storm.resumedP50Seconds} s, 90% by ${r.storm.resumedP90Seconds} s); ${r.storm.resumed} resumed, ${r.storm.states.unauthorized ?? 0} gave up (unauthorized); ${lost} messages missed, ${twice} seen twice, ${r.storm.wireRepeats} repeats on the wire`,
  ].join('\n');
}
