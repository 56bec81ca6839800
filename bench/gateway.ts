// The WebSocket gateway under load (docs/realtime.md; docs/performance.md, "Real time"), on
// PostgreSQL, each figure beside the floor's in the same run: bench/ws-floor-server.ts, a bare
// `ws` server writing pre-serialised frames (no Parley, no database), driven by the same clients.
// The clients are @parley/client's (its built dist), in one or two generator processes
// (bench/lib/gateway-clients.ts: a process holds at most 20,000 open files here); the server,
// the floor and PostgreSQL run in their own. Users are seeded in bulk with an auth token each
// (bench/parley-server.ts, BENCH_TOKENS).
//
// 1. Idle sockets: --sockets authenticated clients (seed-1000 on), then the server's RSS after a
//    GC against its RSS before them, per socket; the floor's the same way.
// 2. Fan-out latency at a fixed load: --group connected members of the 1,000-member group
//    `members-1k` (seed-0 ..), messages sent to it by REST (apiKey, onBehalfOf seed-0) paced so
//    that members × messages a second = --deliveries (10,000 a second); a delivery's latency is
//    its arrival at the client minus its send request's start (t= in its text, stamped as the
//    request leaves). The floor writes the same number of frames a second of the same size to
//    as many sockets (t= stamped as it writes). --slices slices of --slice-seconds each, in turns.
// 3. Max deliveries a second: --burst messages sent at once (8 in flight) and the time until the
//    last member has the last; the floor's the same burst written as fast as it can.
// 4. One message to the group: from its send's start to the last member's arrival.
// 5. Reconnect storm: --storm clients (in groups of 10, chat-100 ..), a second node on the same
//    database; the first node gets SIGTERM (1012 to every socket) and starts again on its port,
//    the clients reconnect with their jittered backoff and resume. Messages (one to each group a
//    round) go through the second node before the stop, while it stops, once it is back, and
//    after all have resumed: each client must have each round's message once.
// 6. CPU: the server's, PostgreSQL's, the generators' (process.cpuUsage of each) and the bench's.
//
//   npx tsx bench/gateway.ts [--sockets 2000] [--group 1000] [--deliveries 10000] [--slices 4]
//       [--slice-seconds 5] [--burst 100] [--storm 2000]          (full: --sockets 19000 --storm 10000)
//   npm run bench -- --engine postgres --only gateway [--gateway-sockets 19000] [--gateway-storm 10000]
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { type Collected, GatewayClients, type StormState } from './lib/gateway-clients.js';
import { describeGateway, type GatewayResult, type Slice } from './lib/gateway-report.js';
import { postgresDatabases } from './lib/postgres.js';
import { postgresCpuMeter, startServerProcess, type ServerHandle } from './lib/processes.js';

export { describeGateway, type GatewayResult } from './lib/gateway-report.js';

export interface GatewayOptions {
  withPostgresDatabase: <T>(run: (url: string) => Promise<T>) => Promise<T>;
  sockets: number;
  group: number;
  deliveries: number;
  slices: number;
  sliceSeconds: number;
  burst: number;
  storm: number;
  log: (line: string) => void;
}

/** Sockets per generator process: under its 20,000 open files, with room for its own. */
const PER_GENERATOR = 9_500;
const GROUP = 'members-1k';
const now = () => performance.timeOrigin + performance.now();
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const load = () =>
  os
    .loadavg()
    .map((n) => n.toFixed(1))
    .join(' ');

type Server = ServerHandle<{ port: number; appId: string; apiKey: string }>;

/** Generators and the clients spread over them. */
class Fleet {
  constructor(readonly generators: GatewayClients[]) {}
  /** seed-<from> .. in parts of at most PER_GENERATOR, one per generator. */
  async connect(url: string, appId: string, secret: string, from: number, count: number, getToken = false) {
    const share = Math.ceil(count / this.generators.length);
    const parts = this.generators.map((g, i) => ({ g, from: from + share * i, count: Math.max(0, Math.min(share, count - share * i)) })).filter((p) => p.count > 0);
    const done = await Promise.all(parts.map((p) => p.g.connect({ url, appId, secret, from: p.from, count: p.count, window: 200, getToken })));
    return {
      opened: sum(done, (d) => d.opened),
      failed: sum(done, (d) => d.failed),
      ms: Math.max(...done.map((d) => d.ms)),
      retries: merge(done.map((d) => d.retries)),
      failedStates: merge(done.map((d) => d.failedStates)),
    };
  }
  mark(options: { record?: boolean; storm?: boolean } = {}) {
    return Promise.all(this.generators.map((g) => g.mark(options)));
  }
  async count() {
    return (await Promise.all(this.generators.map((g) => g.count()))).reduce((a, b) => a + b, 0);
  }
  collect(latencies = false): Promise<Collected[]> {
    return Promise.all(this.generators.map((g) => g.collect(latencies)));
  }
  async storm(rounds: number): Promise<StormState> {
    const parts = await Promise.all(this.generators.map((g) => g.storm(rounds)));
    const states: Record<string, number> = {};
    for (const part of parts) for (const [state, n] of Object.entries(part.states)) states[state] = (states[state] ?? 0) + n;
    return {
      states,
      restarted: parts.reduce((n, p) => n + p.restarted, 0),
      firstRestartAt: Math.min(...parts.map((p) => p.firstRestartAt)),
      lastRestartAt: Math.max(...parts.map((p) => p.lastRestartAt)),
      resumed: parts.reduce((n, p) => n + p.resumed, 0),
      lastResumedAt: Math.max(...parts.map((p) => p.lastResumedAt)),
      resumedAts: parts.flatMap((p) => p.resumedAts),
      rounds: parts[0]!.rounds.map((_, r) => ({ once: sum(parts, (p) => p.rounds[r]!.once), more: sum(parts, (p) => p.rounds[r]!.more), none: sum(parts, (p) => p.rounds[r]!.none) })),
      wireRepeats: parts.reduce((n, p) => n + p.wireRepeats, 0),
      closes: merge(parts.map((p) => p.closes)),
    };
  }
  close() {
    return Promise.all(this.generators.map((g) => g.close()));
  }
  /** Waits until the clients have `expected` bench events since the mark, or none came for `quietMs`. */
  async waitFor(expected: number, quietMs = 5_000, deadlineMs = 300_000): Promise<number> {
    const started = Date.now();
    let last = -1;
    let lastChange = Date.now();
    for (;;) {
      const count = await this.count();
      if (count >= expected) return count;
      if (count !== last) [last, lastChange] = [count, Date.now()];
      if (Date.now() - lastChange > quietMs || Date.now() - started > deadlineMs) return count;
      await sleep(50);
    }
  }
}
const sum = <T>(items: T[], pick: (item: T) => number) => items.reduce((n, item) => n + pick(item), 0);
function merge(counts: Array<Record<string, number>>): Record<string, number> {
  const all: Record<string, number> = {};
  for (const part of counts) for (const [k, n] of Object.entries(part)) all[k] = (all[k] ?? 0) + n;
  return all;
}

/** POST /v3/messages as `sender` (apiKey and onBehalfOf), its text carrying t= (the request's start) and `extra`. */
function send(agent: http.Agent, port: number, server: { appId: string; apiKey: string }, sender: string, guid: string, extra = ''): Promise<number> {
  const body = JSON.stringify({ receiver: guid, receiverType: 'group', category: 'message', type: 'text', data: { text: `t=${now().toFixed(3)} ${extra}Hello everyone 👋` } });
  return new Promise((resolve) => {
    const req = http.request(
      {
        agent,
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v3/messages',
        headers: { appid: server.appId, apikey: server.apiKey, onbehalfof: sender, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', () => resolve(0));
    req.end(body);
  });
}

function floorBroadcast(port: number, count: number, rate: number, bytes: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method: 'POST', path: `/broadcast?count=${count}&rate=${rate}&bytes=${bytes}` }, (res) => {
      res.resume();
      res.on('end', () => resolve());
    });
    req.on('error', reject);
    req.end();
  });
}

/** The server's RSS after a GC (SIGUSR2, --expose-gc), MB. */
async function rssAfterGc(server: ServerHandle<unknown>): Promise<number> {
  server.child.kill('SIGUSR2');
  await sleep(2_000);
  return server.rssMb();
}

/** Waits until the process used under 5% of a core for a second (up to `maxMs`). */
async function quiet(server: ServerHandle<unknown>, maxMs = 60_000): Promise<void> {
  const started = Date.now();
  while (Date.now() - started < maxMs) {
    const meter = server.cpuMeter();
    await sleep(1_000);
    if (meter() < 0.05) return;
  }
}

function percentile(values: Float64Array, p: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return Number(sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!.toFixed(1));
}
const joined = (parts: Collected[]) => {
  const all = new Float64Array(sum(parts, (p) => p.latencies?.length ?? 0));
  let at = 0;
  for (const p of parts) if (p.latencies) all.set(p.latencies, (at += p.latencies.length) - p.latencies.length);
  return all;
};

/** CPU seconds of each party over `run`: the server's, PostgreSQL's, the generators', the bench's. */
async function metered<T>(server: () => ServerHandle<unknown>, fleet: Fleet, run: () => Promise<T>): Promise<{ value: T; cpu: Record<string, number> }> {
  const generatorCpu = async () => sum(await fleet.collect(), (p) => p.cpuTotalMicros) / 1e6;
  // The server may be another process by the end (a restart): each process's share, read every
  // 50 ms while it lives (a process gone reads as nothing, so its last reading counts).
  let serverSeconds = 0;
  let current = server();
  let serverCpu = current.cpuMeter();
  let reading = 0;
  const watch = setInterval(() => {
    reading = Math.max(reading, serverCpu());
    if (server() === current) return;
    serverSeconds += reading;
    [current, reading] = [server(), 0];
    serverCpu = current.cpuMeter();
  }, 50);
  const [pgCpu, benchCpu, generatorsBefore] = [postgresCpuMeter(), process.cpuUsage(), await generatorCpu()];
  try {
    const value = await run();
    const bench = process.cpuUsage(benchCpu);
    const round = (n: number) => Number(n.toFixed(2));
    return {
      value,
      cpu: {
        server: round(serverSeconds + Math.max(reading, serverCpu())),
        postgres: round(pgCpu()),
        generators: round((await generatorCpu()) - generatorsBefore),
        bench: round((bench.user + bench.system) / 1e6),
      },
    };
  } finally {
    clearInterval(watch);
  }
}

export async function gatewayBench(options: GatewayOptions): Promise<GatewayResult> {
  const { log } = options;
  const storm = Math.ceil(options.storm / 10) * 10;
  const users = 1_000 + Math.max(options.sockets, storm);
  const secret = `bench-${process.pid}-${Date.now()}`;
  const loadAtStart = load();
  const generators = await Promise.all(Array.from({ length: Math.max(1, Math.ceil(Math.max(options.sockets, storm, 2 * options.group) / PER_GENERATOR)) }, () => GatewayClients.start()));
  const fleet = new Fleet(generators);
  const floor = await startServerProcess<{ port: number }>('ws-floor-server.ts', {}, { extraNodeArgs: ['--expose-gc'] });
  try {
    return await options.withPostgresDatabase(async (databaseUrl) => {
      // Log level error: a stopping server logs a warning with a stack for each request it refuses (each reconnecting socket's).
      const serverEnv = {
        BENCH_LOG_LEVEL: 'error',
        BENCH_ENGINE: 'postgres',
        DATABASE_URL: databaseUrl,
        BENCH_HISTORY: '',
        BENCH_USERS: String(users),
        BENCH_TOKENS: String(users),
        BENCH_TOKEN_SECRET: secret,
        BENCH_CHAT_GROUPS: String(users / 10),
      };
      let server: Server = await startServerProcess('parley-server.ts', serverEnv, { extraNodeArgs: ['--expose-gc'] });
      const info = server.info;
      const parleyUrl = `ws://127.0.0.1:${info.port}/v3/ws`;
      const floorUrl = `ws://127.0.0.1:${floor.info.port}/v3/ws`;
      const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
      log(`gateway: ${users} users seeded with a token each; ${generators.length} generator process(es); load average ${loadAtStart}`);
      try {
        // 1. Idle sockets: Parley's, then the floor's.
        const idle = async (target: ServerHandle<unknown>, url: string) => {
          await quiet(target);
          const before = await rssAfterGc(target);
          const cpu = target.cpuMeter();
          const connected = await fleet.connect(url, info.appId, secret, 1_000, options.sockets);
          const connectCpu = cpu();
          await quiet(target);
          const after = await rssAfterGc(target);
          const generatorRssMb = sum(await fleet.collect(), (p) => p.rssMb);
          await fleet.close();
          return {
            ...connected,
            rssBeforeMb: before,
            rssAfterMb: after,
            kbPerSocket: Math.round(((after - before) * 1024) / Math.max(1, connected.opened)),
            connectCpuSeconds: Number(connectCpu.toFixed(2)),
            generatorRssMb,
          };
        };
        const idleParley = await idle(server, parleyUrl);
        log(
          `gateway idle: Parley ${idleParley.opened} sockets (${idleParley.failed} not greeted: ${JSON.stringify(idleParley.failedStates)}) in ${idleParley.ms} ms (retries on the way: ${JSON.stringify(idleParley.retries)}), ` +
            `RSS ${idleParley.rssBeforeMb} → ${idleParley.rssAfterMb} MB: ${idleParley.kbPerSocket} KB a socket`,
        );
        const idleFloor = await idle(floor, floorUrl);
        log(`gateway idle: floor ${idleFloor.opened} sockets in ${idleFloor.ms} ms, RSS ${idleFloor.rssBeforeMb} → ${idleFloor.rssAfterMb} MB: ${idleFloor.kbPerSocket} KB a socket`);

        // 2–4 on G members of the group, connected to both.
        const g = Math.min(options.group, 1_000);
        // With a getToken(), as an app's clients have: a server still busy with the idle sockets'
        // departures may answer an auth late (4001), and the client tries once more.
        await quiet(server);
        const [onParley, onFloor] = [await fleet.connect(parleyUrl, info.appId, secret, 0, g, true), await fleet.connect(floorUrl, info.appId, secret, 0, g, true)];
        log(`gateway: ${onParley.opened} members of ${GROUP} on Parley (retries on the way: ${JSON.stringify(onParley.retries)}), ${onFloor.opened} on the floor`);
        await quiet(server);
        // The size of Parley's frame, for the floor's.
        await fleet.mark();
        await send(agent, info.port, info, 'seed-0', GROUP);
        // Deliveries expected: to the members greeted on each side (a client refused while connecting is not one).
        const members = { parley: onParley.opened, floor: onFloor.opened };
        await fleet.waitFor(members.parley, 2_000);
        const frameBytes = Math.max(...(await fleet.collect()).map((p) => p.frameBytes));
        // Messages a second for the deliveries asked, to the members greeted (the floor writes as many frames a second).
        const perSecond = options.deliveries / Math.max(1, members.parley);
        const sends = Math.round(perSecond * options.sliceSeconds);
        const parleySlice = async (): Promise<Slice> => {
          await fleet.mark({ record: true });
          const [serverCpu, pgCpu] = [server.cpuMeter(), postgresCpuMeter()];
          const started = now();
          const answers: Promise<number>[] = [];
          for (let i = 0; i < sends; i++) {
            const wait = started + (i * 1000) / perSecond - now();
            if (wait > 0) await sleep(wait);
            answers.push(send(agent, info.port, info, 'seed-0', GROUP, `n=${i} `));
          }
          const failed = (await Promise.all(answers)).filter((s) => s !== 200).length;
          const got = await fleet.waitFor(sends * members.parley);
          return sliceOf(await fleet.collect(true), sends * members.parley, got, started, { server: serverCpu(), postgres: pgCpu() }, failed);
        };
        const floorSlice = async (): Promise<Slice> => {
          await fleet.mark({ record: true });
          const floorCpu = floor.cpuMeter();
          const started = now();
          await floorBroadcast(floor.info.port, sends, perSecond, frameBytes);
          const got = await fleet.waitFor(sends * members.floor);
          return sliceOf(await fleet.collect(true), sends * members.floor, got, started, { server: floorCpu() }, 0);
        };
        const fanout: Array<{ parley: Slice; floor: Slice }> = [];
        for (let i = -1; i < options.slices; i++) {
          const first = i % 2 === 0 ? await parleySlice() : await floorSlice();
          const second = i % 2 === 0 ? await floorSlice() : await parleySlice();
          if (i < 0) continue;
          const turn = i % 2 === 0 ? { parley: first, floor: second } : { parley: second, floor: first };
          fanout.push(turn);
          log(
            `gateway fan-out slice ${i + 1}: ${options.deliveries} deliveries/s offered to ${g} sockets: Parley p50 ${turn.parley.p50Ms} ms, p99 ${turn.parley.p99Ms} ms (${turn.parley.deliveriesPerSecond}/s, ${turn.parley.missing} missing); ` +
              `floor p50 ${turn.floor.p50Ms} ms, p99 ${turn.floor.p99Ms} ms; CPU s: ${JSON.stringify(turn.parley.cpu)} / floor ${JSON.stringify(turn.floor.cpu)}`,
          );
        }

        // 3. Max deliveries a second: a burst, to the last arrival.
        const burst = async (side: 'parley' | 'floor') => {
          await fleet.mark();
          const started = now();
          if (side === 'floor') await floorBroadcast(floor.info.port, options.burst, 0, frameBytes);
          else {
            let next = 0;
            await Promise.all(
              Array.from({ length: 8 }, async () => {
                while (next < options.burst) await send(agent, info.port, info, 'seed-0', GROUP, `b=${next++} `);
              }),
            );
          }
          const got = await fleet.waitFor(options.burst * members[side]);
          const lastAt = Math.max(...(await fleet.collect()).map((p) => p.lastAt));
          return Math.round(got / ((lastAt - started) / 1000));
        };
        const max = { parley: [] as number[], floor: [] as number[] };
        for (let i = 0; i < 3; i++) {
          for (const side of i % 2 === 0 ? (['parley', 'floor'] as const) : (['floor', 'parley'] as const)) max[side].push(await burst(side));
          log(`gateway max: burst ${i + 1} of ${options.burst} messages × ${g} members: Parley ${max.parley[i]} deliveries/s, floor ${max.floor[i]}`);
        }

        // 4. One message, to the last member.
        const one = { parley: [] as number[], floor: [] as number[] };
        for (let i = 0; i < 5; i++) {
          for (const side of ['parley', 'floor'] as const) {
            await sleep(500);
            await fleet.mark();
            const started = now();
            if (side === 'floor') await floorBroadcast(floor.info.port, 1, 0, frameBytes);
            else await send(agent, info.port, info, 'seed-0', GROUP, 'one ');
            await fleet.waitFor(members[side]);
            one[side].push(Number((Math.max(...(await fleet.collect()).map((p) => p.lastAt)) - started).toFixed(1)));
          }
        }
        log(`gateway one message to ${g} members, to the last: Parley ${one.parley.join(', ')} ms; floor ${one.floor.join(', ')} ms`);
        await fleet.close();

        // 5. Reconnect storm.
        const stormRun = await metered(
          () => server,
          fleet,
          () => reconnectStorm(options, fleet, { server, serverEnv, secret, agent, storm }, (restarted) => (server = restarted)),
        );
        log(`gateway storm CPU s: ${JSON.stringify(stormRun.cpu)} (the server's: the stopped process's and the restarted one's, the second node's not counted)`);
        return {
          at: new Date().toISOString(),
          load: { start: loadAtStart, end: load(), cores: os.cpus().length },
          sockets: options.sockets,
          group: g,
          deliveries: options.deliveries,
          frameBytes,
          idle: { parley: idleParley, floor: idleFloor },
          fanout,
          max,
          one,
          storm: { ...stormRun.value, cpu: stormRun.cpu },
        };
      } finally {
        agent.destroy();
        await server.stop();
      }
    });
  } finally {
    await floor.stop();
    await Promise.all(generators.map((gen) => gen.stop()));
  }
}

function sliceOf(parts: Collected[], expected: number, got: number, started: number, cpu: Record<string, number>, failedSends: number): Slice {
  const latencies = joined(parts);
  const lastAt = Math.max(...parts.map((p) => p.lastAt));
  const round = (n: number) => Number(n.toFixed(2));
  return {
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    maxMs: percentile(latencies, 100),
    deliveriesPerSecond: Math.round(got / Math.max(0.001, (lastAt - started) / 1000)),
    missing: expected - got,
    failedSends,
    cpu: Object.fromEntries([...Object.entries(cpu).map(([k, v]) => [k, round(v)]), ['generators', round(sum(parts, (p) => p.cpuMicros) / 1e6)]]),
  };
}

/** Step 5: SIGTERM, restart on the same port, every client back and resumed, nothing lost. */
async function reconnectStorm(
  options: GatewayOptions,
  fleet: Fleet,
  run: { server: Server; serverEnv: Record<string, string>; secret: string; agent: http.Agent; storm: number },
  restarted: (server: Server) => void,
): Promise<GatewayResult['storm']> {
  const { log } = options;
  const info = run.server.info;
  const other: Server = await startServerProcess('parley-server.ts', { ...run.serverEnv, BENCH_REUSE: '1' });
  try {
    const groups = run.storm / 10;
    // Round r: one message to each of the clients' groups (chat-100 ..), from its first member, through the other node.
    const round = async (r: number) => {
      let next = 0;
      const statuses: number[] = [];
      await Promise.all(
        Array.from({ length: 16 }, async () => {
          for (let j = next++; j < groups; j = next++) statuses.push(await send(run.agent, other.info.port, info, `seed-${1000 + 10 * j}`, `chat-${100 + j}`, `s=${r} `));
        }),
      );
      return statuses.filter((s) => s !== 200).length;
    };
    // The storm's clients have a getToken(), as an app's do: a 4001 gets one more try with a fresh token.
    const connected = await fleet.connect(`ws://127.0.0.1:${info.port}/v3/ws`, info.appId, run.secret, 1_000, run.storm, true);
    log(`gateway storm: ${connected.opened} clients connected (${connected.failed} not greeted) in ${connected.ms} ms (retries on the way: ${JSON.stringify(connected.retries)})`);
    await quiet(run.server);
    await fleet.mark({ storm: true });
    let failedSends = await round(0);
    await fleet.waitFor(run.storm, 5_000);
    const t0 = now();
    const stopped = run.server.stop();
    failedSends += await round(1);
    await stopped;
    const t1 = now();
    const again: Server = await startServerProcess('parley-server.ts', { ...run.serverEnv, BENCH_REUSE: '1', BENCH_PORT: String(info.port) }, { extraNodeArgs: ['--expose-gc'] });
    again.info.apiKey = info.apiKey;
    restarted(again);
    const t2 = now();
    failedSends += await round(2);
    let state = await fleet.storm(4);
    const deadline = Date.now() + 300_000;
    while (state.resumed < connected.opened && Date.now() < deadline) {
      await sleep(250);
      state = await fleet.storm(4);
    }
    const t3 = state.lastResumedAt;
    failedSends += await round(3);
    for (let tries = 0; tries < 100; tries++) {
      state = await fleet.storm(4);
      if (state.rounds[3]!.none === 0) break;
      await sleep(100);
    }
    await sleep(1_000);
    state = await fleet.storm(4);
    await fleet.close();
    const s = (ms: number) => Number((ms / 1000).toFixed(2));
    const result = {
      clients: connected.opened,
      stopSeconds: s(t1 - t0),
      restartSeconds: s(t2 - t1),
      allResumedSeconds: s(t3 - t0),
      // Half and nine in ten of the clients had resumed this long after the SIGTERM.
      resumedP50Seconds: s(percentile(Float64Array.from(state.resumedAts), 50) - t0),
      resumedP90Seconds: s(percentile(Float64Array.from(state.resumedAts), 90) - t0),
      afterReadySeconds: s(t3 - t2),
      restarted: state.restarted,
      resumed: state.resumed,
      lastRestartSeconds: s(state.lastRestartAt - t0),
      rounds: state.rounds,
      wireRepeats: state.wireRepeats,
      failedSends,
      states: state.states,
      closes: state.closes,
    };
    log(
      `gateway storm: SIGTERM → exit ${result.stopSeconds} s (1012 to all by ${result.lastRestartSeconds} s), started again in ${result.restartSeconds} s; ` +
        `${result.resumed} of ${result.clients} resumed, half by ${result.resumedP50Seconds} s, 90% by ${result.resumedP90Seconds} s, the last ${result.allResumedSeconds} s after SIGTERM (${result.afterReadySeconds} s after it was back); ` +
        `rounds (once/more/none): ${result.rounds.map((r) => `${r.once}/${r.more}/${r.none}`).join(', ')}; ${result.wireRepeats} repeats on the wire; ${failedSends} sends failed; ` +
        `states at the end ${JSON.stringify(result.states)}, closes on the way ${JSON.stringify(result.closes)}`,
    );
    return result;
  } finally {
    await other.stop();
  }
}

// Run on its own: npx tsx bench/gateway.ts [--sockets 2000] ...
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      sockets: { type: 'string', default: '2000' },
      group: { type: 'string', default: '1000' },
      deliveries: { type: 'string', default: '10000' },
      slices: { type: 'string', default: '4' },
      'slice-seconds': { type: 'string', default: '5' },
      burst: { type: 'string', default: '100' },
      storm: { type: 'string', default: '2000' },
    },
  });
  const adminUrl = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const { postgresReachable, withPostgresDatabase } = postgresDatabases(adminUrl);
  if (!(await postgresReachable())) throw new Error(`PostgreSQL does not answer at ${adminUrl} (PARLEY_BENCH_DATABASE_URL)`);
  const result = await gatewayBench({
    withPostgresDatabase,
    sockets: Number(values.sockets),
    group: Number(values.group),
    deliveries: Number(values.deliveries),
    slices: Number(values.slices),
    sliceSeconds: Number(values['slice-seconds']),
    burst: Number(values.burst),
    storm: Number(values.storm),
    log: (line) => console.log(line),
  });
  console.log(describeGateway(result));
  const file = path.join('.bench', `gateway-${result.at.replace(/[:.]/g, '-')}.json`);
  fs.mkdirSync('.bench', { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ gateway: result }, null, 2)}\n`);
  console.log(`\nresults written to ${file}`);
}
