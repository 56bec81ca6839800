// npm run bench: load scenarios against Parley, each reported as a ratio to a baseline measured
// in the same run (these machines are shared and noisy, so only same-run ratios compare).
//
//   npm run bench [-- --engine pglite|postgres|all] [--duration 8] [--only NAME]
//                    [--users 100000] [--history 1000,1000000] [--import-messages 1000000]
//                    [--crash-senders 128] [--crash-kills 3] [--crash-acks 50] [--soak-minutes 20]
//                    [--ab-slices 12] [--ab-slice-seconds 5] [--ab-without edgeChecks,rateLimits]
//                    [--webhook-rounds 3] [--moderation-slices 12] [--moderation-slice-seconds 5]
//                    [--moderation rules=10,keywords=10000] [--notification-rate 200|50] [--notification-slices 10]
//                    [--notification-slice-seconds 5] [--notification-group 10000] [--memory-idle-seconds 30]
//                    [--metrics-slices 12] [--metrics-slice-seconds 5]
//                    [--gateway-sockets 2000] [--gateway-storm 2000] [--gateway-group 1000] [--gateway-deliveries 10000]
//                    [--gateway-slices 4] [--gateway-burst 100]
//
// With PostgreSQL it also runs the crash scenario, import memory (eight maximal import calls at
// once), the hardening A/B (send with and without the edge checks and rate limits, both servers
// side by side taking --ab-slices slices in turns; 0 skips it), the moderation A/B (send with and
// without an app's moderation rules, bench/moderation-ab.ts; --moderation-slices 0 skips it), the
// metrics A/B (send with the metrics on and scraped, and off, bench/metrics-ab.ts; --metrics-slices 0 skips it), a soak of mixed traffic (--soak-minutes 0 skips it) and webhooks (bench/webhooks.ts).
// On both engines, notifications (bench/notifications.ts: send latency at a fixed load with push
// notifications on and off, deliveries to a fake FCM, a large group's; --notification-slices 0 skips it).
// With PostgreSQL, the gateway (bench/gateway.ts: idle sockets and their RSS, fan-out latency at a
// fixed load, max deliveries a second, a reconnect storm, each against a bare `ws` floor;
// --gateway-slices 0 skips it; full sizes: --gateway-sockets 19000 --gateway-storm 10000).
//
// Baselines: no-database Fastify routes (for reads: a user, and a 50-message history page), and
// raw single-row INSERTs over the pg driver at the same concurrency (for writes); with PostgreSQL, the floors of the history page and the send (bench/floors.ts). Every server runs in its own process; autocannon
// drives it from this one, over loopback.
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { describe as describeImport, importThroughput, type ImportBenchResult } from './import.js';
import { describe as describeMemory, importMemory, type ImportMemoryResult } from './import-memory.js';
import { describe as describeSoak, soak, type SoakResult } from './soak.js';
import { describeCrash, runCrashScenario, type CrashReport } from './lib/crash.js';
import { runLoad, type LoadOptions, type LoadResult, type ScenarioReport } from './lib/load.js';
import { postgresDatabases } from './lib/postgres.js';
import { sendScenarios } from './lib/send-load.js';
import { describeHardening, hardeningAB, type HardeningAbResult } from './hardening-ab.js';
import { describeModeration, moderationAB, type ModerationAbResult } from './moderation-ab.js';
import { describeMetrics, metricsAB, type MetricsAbResult } from './metrics-ab.js';
import { webhooksBench, type WebhooksResult } from './webhooks.js';
import { DEFAULT_RATE as NOTIFICATION_RATE, describeNotifications, notificationsBench, type NotificationsResult } from './notifications.js';
import { floorScenarios } from './floors.js';
import { describeGateway, gatewayBench, type GatewayResult } from './gateway.js';
import { describeMemory as describeQuickStartMemory, memoryBench, type MemoryResult as QuickStartMemoryResult } from './memory.js';
import { anotherPageEachTime } from './lib/history-load.js';
import { postgresCpuMeter, startServerProcess, type ServerHandle } from './lib/processes.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'all' },
    duration: { type: 'string', default: '8' },
    only: { type: 'string' },
    users: { type: 'string', default: '100000' },
    history: { type: 'string', default: '1000,1000000' },
    'import-messages': { type: 'string', default: '1000000' },
    // e.g. `--connections 64` to measure one concurrency of the targets only.
    connections: { type: 'string', default: '16,64' },
    // Crash under load (PostgreSQL): senders, kills, and acknowledged sends per sender before each kill.
    'crash-senders': { type: 'string', default: '128' },
    'crash-kills': { type: 'string', default: '3' },
    'crash-acks': { type: 'string', default: '50' },
    // Soak (PostgreSQL): minutes of mixed traffic, with the server's RSS each minute; 0 skips it.
    'soak-minutes': { type: 'string', default: '20' },
    // The A/B of the edge checks' and rate limits' cost (bench/hardening-ab.ts): slices of each
    // scenario on each server, taken in turns, and their length in seconds.
    'ab-slices': { type: 'string', default: '12' },
    'ab-slice-seconds': { type: 'string', default: '5' },
    // What the second server leaves out: edgeChecks,rateLimits (both), or one of them.
    'ab-without': { type: 'string', default: 'edgeChecks,rateLimits' },
    'webhook-rounds': { type: 'string', default: '3' },
    // The A/B of moderation's cost (bench/moderation-ab.ts): slices as the hardening A/B's, and
    // what the moderated server's app holds (BENCH_MODERATION of bench/parley-server.ts).
    'moderation-slices': { type: 'string', default: '12' },
    'moderation-slice-seconds': { type: 'string', default: '5' },
    moderation: { type: 'string', default: 'rules=10,keywords=10000' },
    // The A/B of the metrics' cost (bench/metrics-ab.ts): slices as the hardening A/B's.
    'metrics-slices': { type: 'string', default: '12' },
    'metrics-slice-seconds': { type: 'string', default: '5' },
    // Notifications (bench/notifications.ts): the offered 1:1 sends a second (by engine when
    // absent), slices of it on each server (0 skips the bench) and their length, the notified
    // group's members.
    'notification-rate': { type: 'string' },
    'notification-slices': { type: 'string', default: '10' },
    'notification-slice-seconds': { type: 'string', default: '5' },
    'notification-group': { type: 'string', default: '10000' },
    // The quick start's memory (bench/memory.ts, embedded engine): seconds of each idle phase.
    'memory-idle-seconds': { type: 'string', default: '30' },
    // The gateway (bench/gateway.ts, PostgreSQL): idle sockets, the storm's clients, the
    // connected members of the 1,000-member group, the fixed load's deliveries a second, its
    // slices (0 skips the bench), messages of each burst of the max-rate test.
    'gateway-sockets': { type: 'string', default: '2000' },
    'gateway-storm': { type: 'string', default: '2000' },
    'gateway-group': { type: 'string', default: '1000' },
    'gateway-deliveries': { type: 'string', default: '10000' },
    'gateway-slices': { type: 'string', default: '4' },
    'gateway-burst': { type: 'string', default: '100' },
  },
});
const duration = Number(values.duration);
const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const CONCURRENCIES = values.connections!.split(',').filter(Boolean).map(Number);
const { postgresReachable, withPostgresDatabase } = postgresDatabases(ADMIN_URL);

interface Row extends ScenarioReport {
  ratio: number;
}
const rows: Row[] = [];
const wanted = (name: string) => !values.only || name.includes(values.only);
/** The scenarios that drive a Parley server with autocannon (and need the Fastify baselines). */
const LOAD_SCENARIOS = ['get user', 'list users', 'list members', 'history page', 'add 25 members', 'send message', 'create user'];

function report(row: ScenarioReport) {
  const ratio = row.result.requestsPerSecond / row.baselineRate;
  rows.push({ ...row, ratio });
  const r = row.result;
  const flags = r.errors || r.non2xx ? `  (${r.errors} errors, ${r.non2xx} non-2xx)` : '';
  const cpu = Object.entries(r.cpuMicrosPerRequest ?? {})
    .map(([name, micros]) => `${name} ${micros} µs`)
    .join(', ');
  console.log(
    `${row.scenario.padEnd(40)} ${row.engine.padEnd(8)} ${String(row.connections).padStart(3)} conn ` +
      `${String(r.requestsPerSecond).padStart(7)} req/s  p50 ${String(r.p50Ms).padStart(4)} ms  p99 ${String(r.p99Ms).padStart(4)} ms  ` +
      `${(ratio * 100).toFixed(0).padStart(4)}% of ${row.baseline}${cpu ? `  (CPU/req: ${cpu})` : ''}${flags}`,
  );
}

/** Raw single-row INSERT rate over the pg driver, measured in its own process. */
function rawInsertRate(url: string, connections: number, seconds = duration): Promise<{ insertsPerSecond: number; p50Ms: number; p99Ms: number; postgresCpuMicros: number; clientCpuMicros: number }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('bench/raw-insert.ts')], {
      env: { ...process.env, DATABASE_URL: url, BENCH_CONNECTIONS: String(connections), BENCH_DURATION: String(seconds) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!)) : reject(new Error(`raw-insert exited ${code}`))));
  });
}

// --- read baseline ------------------------------------------------------------------------
const fastify = new Map<number, LoadResult>();
// The Fastify page rate moves by up to 2x within minutes on these machines (seen 3,409 and
// 6,064 req/s in runs minutes apart), so each history page scenario is compared with the mean
// of the Fastify page measured right before and right after it (fastifyPageRate), as the sends
// are with raw INSERTs; the server stays up for that while history pages are measured.
let baselineServer: ServerHandle<{ port: number }> | undefined;
/** Measures (and logs) the Fastify page rate now, at this concurrency. */
async function fastifyPageRate(connections: number, when: string): Promise<number> {
  const server = baselineServer!;
  const page = await runLoad({ url: `http://127.0.0.1:${server.info.port}/v3/users/seed-1/messages?limit=50`, connections, durationSeconds: duration, cpu: { server: server.cpuMeter } });
  console.log(
    `baseline: no-database Fastify, 50-message page${when}, ${connections} connections: ${page.requestsPerSecond} req/s (p99 ${page.p99Ms} ms, server CPU ${page.cpuMicrosPerRequest!.server} µs/req)`,
  );
  return page.requestsPerSecond;
}
if (LOAD_SCENARIOS.some(wanted)) {
  const server = await startServerProcess<{ port: number }>('baseline-server.ts');
  baselineServer = server;
  const serverCpu = { server: server.cpuMeter };
  for (const connections of CONCURRENCIES) {
    const result = await runLoad({ url: `http://127.0.0.1:${server.info.port}/v3/users/bench-user`, connections, durationSeconds: duration, cpu: serverCpu });
    fastify.set(connections, result);
    console.log(`baseline: no-database Fastify, ${connections} connections: ${result.requestsPerSecond} req/s (p99 ${result.p99Ms} ms, server CPU ${result.cpuMicrosPerRequest!.server} µs/req)`);
  }
  if (!wanted('history page')) {
    await server.stop();
    baselineServer = undefined;
  }
}

// --- Parley -------------------------------------------------------------------------------
/** PostgreSQL's commit latency on this machine, as one connection's INSERT sees it (ms, p50). */
let commitLatencyMs: number | null = null;

async function parleyScenarios(engine: 'pglite' | 'postgres', databaseUrl?: string) {
  if (!LOAD_SCENARIOS.some(wanted)) return;
  // Raw INSERT rates by concurrency, kept as measured; rawInsert measures and logs another.
  const inserts = new Map<number, number>();
  const rawInsert = async (connections: number, when = ''): Promise<number> => {
    const raw = await rawInsertRate(databaseUrl!, connections);
    console.log(
      `baseline: raw pg INSERT${when}, ${connections} connections: ${raw.insertsPerSecond} inserts/s (p99 ${raw.p99Ms} ms; CPU/insert: postgres ${raw.postgresCpuMicros} µs, client ${raw.clientCpuMicros} µs)`,
    );
    return raw.insertsPerSecond;
  };
  if (databaseUrl) {
    // What kind of machine this is for writes: one connection's INSERT waits for its own
    // commit, so its latency is the commit's (fsync) plus a round trip. Where it is long, raw
    // INSERTs are slow and their p99 high, and coalesced writes gain the most over them.
    const one = await rawInsertRate(databaseUrl, 1, 3);
    commitLatencyMs = one.p50Ms;
    console.log(`machine: one connection's INSERT and commit take ${one.p50Ms} ms (p50; ${one.insertsPerSecond} inserts/s)`);
  }
  if (databaseUrl && (wanted('create user') || wanted('add 25 members'))) {
    for (const connections of CONCURRENCIES) inserts.set(connections, await rawInsert(connections));
  }
  const users = Number(values.users);
  const histories = wanted('history page') ? values.history!.split(',').filter(Boolean).map(Number) : [];
  const server = await startServerProcess<{ port: number; appId: string; apiKey: string; addGroups: number; chatGroups: number; historyPairs: Array<[string, string]> }>('parley-server.ts', {
    BENCH_ENGINE: engine,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    BENCH_USERS: String(users),
    BENCH_HISTORY: histories.join(','),
  });
  const base = `http://127.0.0.1:${server.info.port}`;
  const headers = { appid: server.info.appId, apikey: server.info.apiKey };
  const seeded = `${Math.round(users / 1000)}k users`;
  // Each scenario's CPU per request: the server's, and PostgreSQL's when it serves the data.
  const cpu = { server: server.cpuMeter, ...(databaseUrl ? { postgres: postgresCpuMeter } : {}) };
  const load = (options: LoadOptions) => runLoad({ ...options, cpu });
  let addCursor = 0;
  try {
    // Reads first, at every concurrency, then writes: the writes leave PostgreSQL autovacuum
    // work that would otherwise compete with the reads measured after them.
    for (const connections of CONCURRENCIES) {
      const readBaseline = fastify.get(connections)!.requestsPerSecond;
      if (wanted('get user')) {
        const result = await load({ url: `${base}/v3/users/seed-500`, connections, durationSeconds: duration, headers });
        report({ scenario: `get user (${seeded})`, engine, connections, result, baseline: 'Fastify', baselineRate: readBaseline });
      }
      if (wanted('list users')) {
        for (const page of [1, 500]) {
          const result = await load({ url: `${base}/v3/users?perPage=100&page=${page}`, connections, durationSeconds: duration, headers });
          report({ scenario: `list users (100/page, page ${page}, ${seeded})`, engine, connections, result, baseline: 'Fastify', baselineRate: readBaseline });
        }
      }
      if (wanted('list members')) {
        for (const size of ['1k', '100k'].filter((s) => users >= (s === '1k' ? 1000 : 100_000))) {
          const result = await load({ url: `${base}/v3/groups/members-${size}/members?perPage=100`, connections, durationSeconds: duration, headers });
          report({ scenario: `list members (100/page, ${size}-member group)`, engine, connections, result, baseline: 'Fastify', baselineRate: readBaseline });
        }
      }
      if (wanted('history page')) {
        // The newest 50 messages of a 1:1 conversation, as its viewer reads its history with the other (historyPairs).
        for (const [index, size] of histories.entries()) {
          const [viewer, other] = server.info.historyPairs[index]!;
          const label = size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`;
          const before = await fastifyPageRate(connections, ` (before history page ${label})`);
          const result = await load({
            url: `${base}/v3/users/${other}/messages?limit=50`,
            connections,
            durationSeconds: duration,
            headers: { ...headers, onbehalfof: viewer },
          });
          const between = await fastifyPageRate(connections, ` (after history page ${label})`);
          report({ scenario: `history page (50 of ${label} messages)`, engine, connections, result, baseline: 'Fastify page', baselineRate: Math.round((before + between) / 2) });
          // The same page again and again is answered from the copy the server kept (checked
          // against the database each time); here each request asks for another page, older
          // ones, so each is built: the cost of a first read. (A long conversation only: the
          // pages of a short one would all be kept after the first round.)
          if (size < 100_000) continue;
          const cold = await load({ ...(await anotherPageEachTime({ base, headers, viewer, other, size })), connections, durationSeconds: duration });
          const after = await fastifyPageRate(connections, ` (after history page, another each time, ${label})`);
          report({ scenario: `history page, another each time (${label})`, engine, connections, result: cold, baseline: 'Fastify page', baselineRate: Math.round((between + after) / 2) });
        }
      }
    }
    for (const connections of CONCURRENCIES) {
      const readBaseline = fastify.get(connections)!.requestsPerSecond;
      if (wanted('add 25 members')) {
        // Request i adds 25 users to group i mod G: every (group, user) pair is new, and
        // concurrent requests go to different groups.
        let i = addCursor;
        const groups = server.info.addGroups;
        const pool = Math.min(users, 2000);
        const result = await load({
          url: `${base}/v3/groups/add-0/members`,
          method: 'POST',
          connections,
          durationSeconds: duration,
          headers,
          path: () => `/v3/groups/add-${i % groups}/members`,
          body: () => {
            const slice = (Math.floor(i++ / groups) * 25) % pool;
            return JSON.stringify({ participants: Array.from({ length: 25 }, (_, k) => `seed-${slice + k}`) });
          },
        });
        addCursor = i;
        const raw = inserts.get(connections);
        report({ scenario: 'add 25 members to a group', engine, connections, result, baseline: raw ? 'raw INSERT' : 'Fastify', baselineRate: raw ?? readBaseline });
      }
      if (wanted('send message')) {
        // The raw INSERT rate moves by up to 2x within minutes on these machines (it is bound by
        // PostgreSQL's CPU and commits), so each send scenario is compared with the mean of raw
        // INSERT runs right before and right after it.
        const rawAround = databaseUrl ? [await rawInsert(connections, ' (before send 1:1)')] : [];
        const baselineOf = (before: number | undefined, after: number | undefined) =>
          before !== undefined && after !== undefined ? { baseline: 'raw INSERT', baselineRate: Math.round((before + after) / 2) } : { baseline: 'Fastify', baselineRate: readBaseline };
        const sends = sendScenarios({ base, headers, users, chatGroups: server.info.chatGroups }, load, connections, duration);
        const oneToOne = await sends.oneToOne();
        if (databaseUrl) rawAround.push(await rawInsert(connections, ' (between the sends)'));
        report({ scenario: 'send message (1:1)', engine, connections, result: oneToOne, ...baselineOf(rawAround[0], rawAround[1]), serverRssMb: server.rssMb() });
        const groups = server.info.chatGroups;
        const group = await sends.group();
        if (databaseUrl) rawAround.push(await rawInsert(connections, ' (after send group)'));
        report({
          scenario: `send message (group, ${groups} groups of 10)`,
          engine,
          connections,
          result: group,
          ...baselineOf(rawAround[1], rawAround[2]),
          serverRssMb: server.rssMb(),
        });
      }
      if (wanted('create user')) {
        let n = 0;
        const tag = crypto.randomBytes(3).toString('hex');
        const result = await load({
          url: `${base}/v3/users`,
          method: 'POST',
          connections,
          durationSeconds: duration,
          headers,
          body: () => JSON.stringify({ uid: `bench-${tag}-${n++}`, name: 'Bench user', metadata: { n } }),
        });
        const raw = inserts.get(connections);
        report({
          scenario: 'create user',
          engine,
          connections,
          result,
          baseline: raw ? 'raw INSERT' : 'Fastify',
          baselineRate: raw ?? readBaseline,
          serverRssMb: server.rssMb(),
        });
      }
    }
    console.log(`  ${engine} server RSS at the end: ${server.rssMb()} MB`);
  } finally {
    await server.stop();
  }
  if (databaseUrl) await floorScenarios({ databaseUrl, connections: CONCURRENCIES, durationSeconds: duration, wanted, fastifyPage: baselineServer && fastifyPageRate, rawInsert, report });
}

const engines = values.engine === 'all' ? ['postgres', 'pglite'] : [values.engine!];
const imports: ImportBenchResult[] = [];
const memory: ImportMemoryResult[] = [];
const soaks: SoakResult[] = [];
const hardening: HardeningAbResult[] = [];
const moderation: ModerationAbResult[] = [];
const metrics: MetricsAbResult[] = [];
const crashes: CrashReport[] = [];
const webhooks: WebhooksResult[] = [];
const notifications: NotificationsResult[] = [];
const quickStartMemory: QuickStartMemoryResult[] = [];
const gateway: GatewayResult[] = [];
/** The notifications bench on this engine, unless skipped. */
async function notificationsOn(engine: 'pglite' | 'postgres') {
  if (!wanted('notifications') || Number(values['notification-slices']) <= 0) return;
  const result = await notificationsBench({
    engine,
    ...(engine === 'postgres' ? { withPostgresDatabase } : {}),
    rate: Number(values['notification-rate'] ?? NOTIFICATION_RATE[engine]),
    slices: Number(values['notification-slices']),
    sliceSeconds: Number(values['notification-slice-seconds']),
    groupSize: Number(values['notification-group']),
    groupMessages: 3,
    log: (line) => console.log(line),
  });
  notifications.push(result);
  console.log(describeNotifications(result));
}

/**
 * Crash under load (bench/lib/crash.ts): many senders, a `parley serve` killed with SIGKILL
 * several times under them, the checks that nothing acknowledged is lost or stored twice.
 */
async function crashUnderLoad(databaseUrl: string) {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-crash-'));
  const senders = Number(values['crash-senders']);
  try {
    const report = await runCrashScenario({
      engine: 'postgres',
      env: { ...process.env, PARLEY_DATA_DIR: dataDir, PARLEY_PORT: '0', PARLEY_HOST: '127.0.0.1', DATABASE_URL: databaseUrl },
      dataDir,
      databaseUrl,
      senders,
      kills: Number(values['crash-kills']),
      acksPerKill: senders * Number(values['crash-acks']),
      log: (line) => console.log(line),
    });
    crashes.push(report);
    console.log(describeCrash(report));
    if (report.problems.length > 0) process.exitCode = 1;
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
for (const engine of engines) {
  // Import throughput (bench/import.ts): N messages in batches of 5,000, against COPY.
  const importOptions = { messages: Number(values['import-messages']), batch: 5_000, concurrency: 4 };
  if (engine === 'postgres') {
    if (!(await postgresReachable())) {
      console.log(`postgres: not reachable at ${ADMIN_URL}; skipped`);
      continue;
    }
    await withPostgresDatabase((url) => parleyScenarios('postgres', url));
    if (wanted('crash')) await withPostgresDatabase(crashUnderLoad);
    if (wanted('import messages')) {
      const result = await withPostgresDatabase((url) => importThroughput({ engine: 'postgres', databaseUrl: url, ...importOptions }));
      imports.push(result);
      console.log(describeImport(result));
    }
    // Eight maximal import calls at once: with the server's bound on calls in flight, and as if there were none.
    for (const perServer of wanted('import memory') ? [undefined, 8] : []) {
      memory.push(await withPostgresDatabase((url) => importMemory({ engine: 'postgres', databaseUrl: url, calls: 8, perServer })));
      console.log(describeMemory(memory[memory.length - 1]!));
    }
    if (wanted('hardening') && Number(values['ab-slices']) > 0) {
      const result = await hardeningAB({
        withPostgresDatabase,
        slices: Number(values['ab-slices']),
        connections: 64,
        sliceSeconds: Number(values['ab-slice-seconds']),
        users: Math.min(Number(values.users), 10_000),
        without: values['ab-without']!,
        log: (line) => console.log(line),
      });
      hardening.push(result);
      console.log(describeHardening(result));
    }
    if (wanted('moderation') && Number(values['moderation-slices']) > 0) {
      const result = await moderationAB({
        withPostgresDatabase,
        slices: Number(values['moderation-slices']),
        connections: 64,
        sliceSeconds: Number(values['moderation-slice-seconds']),
        users: Math.min(Number(values.users), 10_000),
        moderation: values.moderation!,
        log: (line) => console.log(line),
      });
      moderation.push(result);
      console.log(describeModeration(result));
    }
    if (wanted('metrics') && Number(values['metrics-slices']) > 0) {
      const result = await metricsAB({
        withPostgresDatabase,
        slices: Number(values['metrics-slices']),
        connections: 64,
        sliceSeconds: Number(values['metrics-slice-seconds']),
        users: Math.min(Number(values.users), 10_000),
        log: (line) => console.log(line),
      });
      metrics.push(result);
      console.log(describeMetrics(result));
    }
    if (wanted('soak') && Number(values['soak-minutes']) > 0) {
      soaks.push(await withPostgresDatabase((url) => soak({ engine: 'postgres', databaseUrl: url, minutes: Number(values['soak-minutes']), rate: 1500 })));
      console.log(describeSoak(soaks[soaks.length - 1]!));
    }
    if (wanted('webhooks')) webhooks.push(await webhooksBench({ withPostgresDatabase, rounds: Number(values['webhook-rounds']), durationSeconds: duration, log: console.log }));
    await notificationsOn('postgres');
    if (wanted('gateway') && Number(values['gateway-slices']) > 0) {
      const result = await gatewayBench({
        withPostgresDatabase,
        sockets: Number(values['gateway-sockets']),
        group: Number(values['gateway-group']),
        deliveries: Number(values['gateway-deliveries']),
        slices: Number(values['gateway-slices']),
        sliceSeconds: 5,
        burst: Number(values['gateway-burst']),
        storm: Number(values['gateway-storm']),
        log: (line) => console.log(line),
      });
      gateway.push(result);
      console.log(describeGateway(result));
    }
  } else {
    if (values.only && wanted('gateway')) console.log('gateway: PostgreSQL only; skipped on pglite');
    await parleyScenarios('pglite');
    if (values.only && wanted('crash')) console.log('crash: PostgreSQL only here (test/e2e/crash.test.ts runs a small one on PGlite); skipped on pglite');
    if (values.only && wanted('webhooks')) console.log('webhooks: PostgreSQL only; skipped on pglite');
    if (wanted('import messages')) {
      const result = await importThroughput({ engine: 'pglite', ...importOptions });
      imports.push(result);
      console.log(describeImport(result));
    }
    await notificationsOn('pglite');
    // The quick start's RSS (bench/memory.ts): first start, idle, restart, load; --only memory.
    if (wanted('memory')) {
      const result = await memoryBench({ idleSeconds: Number(values['memory-idle-seconds']), durationSeconds: duration, connections: 64 });
      quickStartMemory.push(result);
      console.log(describeQuickStartMemory(result));
    }
  }
}

await baselineServer?.stop();

// Each run is kept (a partial run, --only, must not erase the last full one), and the newest
// is also latest.json.
const at = new Date().toISOString();
const results = `${JSON.stringify({ at, duration, only: values.only ?? null, engine: values.engine, commitLatencyMs, fastify: Object.fromEntries(fastify), rows, imports, crashes, memory, soaks, hardening, moderation, metrics, webhooks, notifications, quickStartMemory, gateway }, null, 2)}\n`;
const kept = `.bench/run-${at.replace(/[:.]/g, '-')}.json`;
fs.mkdirSync('.bench', { recursive: true });
fs.writeFileSync(kept, results);
fs.writeFileSync('.bench/latest.json', results);
console.log(`\nresults written to ${kept} and .bench/latest.json`);
