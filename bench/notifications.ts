// What push notifications cost, and how fast they go out (docs/notifications.md), on PostgreSQL
// or PGlite. A fake FCM (bench/lib/notification-fcm.ts: the tests' fake, checking the OAuth2
// exchange and every v1 message) runs in its own process; two servers of this tree run side by
// side, each on its own database (PGlite: its own data dir), seeded through the API
// (bench/lib/notification-seed.ts): on both, an FCM token for each receiver of the 1:1 load; on
// the "on" server also a group of --group members and its owner, each member holding a token.
// The difference that counts: the "on" server's app has an FCM provider pointed at the fake, so
// each of its sends fans out to the recipients' tokens and is delivered; the "off" server's app
// has none, so it makes no deliveries. (Two servers, not two apps on one server: an "off" app's
// sends would share the process and database with the "on" app's deliveries, and the cost
// would show on both sides.)
//
// 1. Send latency at a fixed offered load: 1:1 sends paced at --rate a second (default 200, on
//    PGlite 50: see DEFAULT_RATE; open loop: each sent at its planned time whatever the answers before it,
//    bench/lib/webhook-sends.ts), below what the server can deliver, to receivers holding a
//    token, in slices of --slice-seconds on each server in turns (bench/lib/side-by-side.ts:
//    alternating which goes first, after one uncounted slice each). A send's latency runs from
//    its planned time to its answer. After each "on" slice the bench waits until the fake has
//    every delivery, so the next slice (the "off" server's) never shares the cores with the "on"
//    server's backlog. Figures: p50 and p99 of
//    each side (medians over the slices), and the median of the slices' p99 ratios (on / off;
//    target ≤ 1.20).
// 2. Deliveries and their CPU: during the "on" slices, each delivery's arrival at the fake minus
//    its send's answer (p50, p99) and the deliveries a second; the server's CPU per send on each
//    side, counted from the slice's start to its last delivery ("on") or last answer ("off"),
//    whose difference is what one 1:1 notification costs the server (the same for PostgreSQL's
//    processes, and the fake's CPU per delivery).
// 3. A large group: --group-messages messages, one after the other, from the owner to the group,
//    every member holding a token: the time from the send's answer to the first and to the last
//    delivery at the fake, the deliveries a second (members over the time to the last one), and
//    the server's, PostgreSQL's and the fake's CPU per delivery meanwhile (nothing else running).
//
//   npx tsx bench/notifications.ts [--engine postgres|pglite] [--rate 200|50] [--slices 10]
//       [--slice-seconds 5] [--group 10000] [--group-messages 3]
//   npm run bench -- --engine postgres --only notifications [--notification-rate 200|50] [--notification-slices 10]
//       [--notification-slice-seconds 5] [--notification-group 10000]   (--notification-slices 0 skips it)
//
// Standalone, results go to .bench/notifications-<time>.json.
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import type { LoadResult } from './lib/load.js';
import type { FcmReport } from './lib/notification-fcm.js';
import { describeNotifications, type ArmSlice, type GroupMessageResult, type NotificationsResult } from './lib/notification-report.js';
import { addFcmProvider, api, GROUP, seedRecipients, startNotificationServer, usersFor, type FakeFcmProcess } from './lib/notification-seed.js';
import { postgresDatabases } from './lib/postgres.js';
import { postgresCpuMeter, startServerProcess } from './lib/processes.js';
import { median, takeTurns } from './lib/side-by-side.js';
import { call, now, paced, PAIRS, waitForArrivals, type Parley } from './lib/webhook-sends.js';

export { describeNotifications, type NotificationsResult } from './lib/notification-report.js';

/**
 * The offered 1:1 load's default by engine, sends a second. The 500 is past what the
 * "on" server delivers on a two-core machine that also runs PostgreSQL, the fake FCM and the
 * load generator: a 1:1 notification cost ~3.5 ms of CPU there (server, PostgreSQL and fake
 * together), and at 500 sends a second the deliveries came at 224–250 a second, the backlog
 * growing through each slice, so the slices measured a saturated server. 200 a second is the
 * highest rate tried that it kept up with. PGlite (the database in the server's own process)
 * delivered ~70 a second when offered 100. `keptUpSlices` says whether the server kept up in a
 * run (--rate to change it).
 */
export const DEFAULT_RATE = { postgres: 200, pglite: 50 } as const;

export interface NotificationsOptions {
  engine: 'pglite' | 'postgres';
  /** PostgreSQL only: a fresh database per server. */
  withPostgresDatabase?: <T>(run: (url: string) => Promise<T>) => Promise<T>;
  /** Offered 1:1 sends a second. */
  rate: number;
  /** Slices on each server (after one uncounted slice each), and their length. */
  slices: number;
  sliceSeconds: number;
  /** Members of the notified group, each holding a token. */
  groupSize: number;
  groupMessages: number;
  log: (line: string) => void;
}

/** An "on" slice whose last delivery came later than this after its last answer fell behind the offered rate. */
const KEPT_UP_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const micros = (seconds: number, per: number) => Math.round((seconds * 1e6) / Math.max(1, per));

type Meters = Record<string, () => () => number>;
const startMeters = (meters: Meters) => Object.entries(meters).map(([name, start]) => [name, start()] as const);
const readMeters = (started: ReturnType<typeof startMeters>, per: number) => Object.fromEntries(started.map(([name, read]) => [name, micros(read(), per)]));

const delivered = async (fcm: FakeFcmProcess) => (await call<{ delivered: number }>(fcm.info.port, '/_count')).delivered;

/** Both servers (and their databases), stopped and dropped whatever happens. */
async function withServers<T>(options: NotificationsOptions, fcm: FakeFcmProcess, run: (on: Parley, off: Parley) => Promise<T>): Promise<T> {
  const users = usersFor(options.groupSize);
  const start = async (databaseUrl: string | undefined, inner: (server: Parley) => Promise<T>) => {
    const server = await startNotificationServer({ engine: options.engine, users, fcm, ...(databaseUrl ? { databaseUrl } : {}) });
    try {
      return await inner(server);
    } finally {
      await server.stop();
    }
  };
  const database = (inner: (url: string | undefined) => Promise<T>) => (options.withPostgresDatabase ? options.withPostgresDatabase(inner) : inner(undefined));
  return database((onUrl) => database((offUrl) => start(onUrl, (on) => start(offUrl, (off) => run(on, off)))));
}

/** One 1:1 send (seed-0 to seed-1), answered 200, or an Error. */
async function probe(server: Parley): Promise<{ id: string; at: number }> {
  const agent = new http.Agent({ keepAlive: false });
  try {
    const sent = await api(agent, server, 'POST', '/v3/messages', { receiver: 'seed-1', receiverType: 'user', category: 'message', type: 'text', data: { text: 'probe' } }, 'seed-0');
    if (sent.status !== 200) throw new Error(`probe send answered ${sent.status}: ${JSON.stringify(sent.body)}`);
    return { id: String(sent.body.data.id), at: sent.at };
  } finally {
    agent.destroy();
  }
}

/** One slice of paced 1:1 sends on a server; "on": until the fake has each send's delivery. */
async function slice(options: NotificationsOptions, server: Parley, fcm: FakeFcmProcess, notifies: boolean, check: NotificationsResult['check']): Promise<LoadResult & { arm: ArmSlice }> {
  const before = await delivered(fcm);
  const meters = startMeters({
    server: server.cpuMeter,
    ...(options.engine === 'postgres' ? { postgres: postgresCpuMeter } : {}),
    ...(notifies ? { fakeFcm: fcm.cpuMeter } : {}),
  });
  const { result, answers } = await paced(server, options.rate, 0, options.sliceSeconds);
  const lastAnswer = now();
  if (notifies)
    await waitForArrivals(
      async () => (await delivered(fcm)) - before,
      async () => result.answered,
      5_000,
      120_000,
    );
  const cpuMicrosPerSend = readMeters(meters, result.answered);
  const arm: ArmSlice = { sendsPerSecond: Math.round(result.answered / options.sliceSeconds), p50Ms: result.sendP50Ms, p99Ms: result.sendP99Ms, failed: result.failed, cpuMicrosPerSend };
  check.failedSends += result.failed;
  if (notifies) {
    const report = await call<FcmReport>(fcm.info.port, '/_report', { sent: answers });
    const seconds = Math.max(0.001, (report.lastAt - report.firstAt) / 1000);
    arm.delivery = {
      deliveries: report.deliveries,
      missing: report.messages - report.arrived,
      duplicates: report.deliveries - report.arrived,
      p50Ms: report.p50Ms,
      p99Ms: report.p99Ms,
      maxMs: report.maxMs,
      tailMs: Math.max(0, Math.round(report.lastAt - lastAnswer)),
      perSecond: Math.round(report.deliveries / seconds),
      keptUp: false,
    };
    arm.delivery.keptUp = arm.delivery.missing === 0 && arm.delivery.tailMs <= KEPT_UP_MS;
    check.missing += arm.delivery.missing;
    check.duplicates += arm.delivery.duplicates;
  } else check.deliveredWhileOff += (await delivered(fcm)) - before;
  return { requestsPerSecond: arm.sendsPerSecond, p50Ms: arm.p50Ms, p99Ms: arm.p99Ms, requests: result.answered, errors: result.failed, non2xx: 0, cpuMicrosPerRequest: cpuMicrosPerSend, arm };
}

/** A message from the group's owner to the group: its answer, then its deliveries to the last. */
async function groupMessage(options: NotificationsOptions, server: Parley, fcm: FakeFcmProcess): Promise<GroupMessageResult> {
  const agent = new http.Agent({ keepAlive: false });
  try {
    const before = await delivered(fcm);
    const meters = startMeters({ server: server.cpuMeter, ...(options.engine === 'postgres' ? { postgres: postgresCpuMeter } : {}), fakeFcm: fcm.cpuMeter });
    const started = now();
    const sent = await api(
      agent,
      server,
      'POST',
      '/v3/messages',
      { receiver: GROUP, receiverType: 'group', category: 'message', type: 'text', data: { text: 'Hello everyone 👋' } },
      `seed-${options.groupSize}`,
    );
    if (sent.status !== 200) throw new Error(`group send answered ${sent.status}: ${JSON.stringify(sent.body)}`);
    await waitForArrivals(
      async () => (await delivered(fcm)) - before,
      async () => options.groupSize,
      10_000,
      600_000,
    );
    const report = await call<FcmReport>(fcm.info.port, '/_report', { sent: { [String(sent.body.data.id)]: sent.at } });
    return {
      members: options.groupSize,
      deliveries: report.deliveries,
      sendMs: Math.round(sent.at - started),
      firstDeliveryMs: Math.round(report.p50Ms),
      lastDeliveryMs: Math.round(report.lastMs),
      perSecond: Math.round(report.deliveries / Math.max(0.001, report.lastMs / 1000)),
      cpuMicrosPerDelivery: readMeters(meters, report.deliveries),
    };
  } finally {
    agent.destroy();
  }
}

const medianOf = <T>(rows: T[], pick: (row: T) => number) => Number(median(rows.map(pick)).toFixed(1));

export async function notificationsBench(options: NotificationsOptions): Promise<NotificationsResult> {
  const fcm: FakeFcmProcess = await startServerProcess('lib/notification-fcm.ts');
  try {
    return await withServers(options, fcm, async (on, off) => {
      const started = Date.now();
      const tag = crypto.randomBytes(3).toString('hex');
      await Promise.all([seedRecipients(on, { groupSize: options.groupSize, group: true, tag }), seedRecipients(off, { groupSize: options.groupSize, group: false, tag })]);
      const seedingSeconds = Number(((Date.now() - started) / 1000).toFixed(1));
      options.log(
        `notifications (${options.engine}): seeded through the API in ${seedingSeconds} s: on both servers an FCM token for each of the ${PAIRS} receivers of the 1:1 load; ` +
          `on the "on" server also a ${options.groupSize}-member group, each member holding a token`,
      );
      await addFcmProvider(on, fcm);
      // The "on" server delivers (its first send also gets an access token from the fake); the "off" one answers.
      const probed = await probe(on);
      await waitForArrivals(
        async () => (await call<FcmReport>(fcm.info.port, '/_report', { sent: { [probed.id]: probed.at } })).arrived,
        async () => 1,
        30_000,
        30_000,
      );
      const probeReport = await call<FcmReport>(fcm.info.port, '/_report', { sent: { [probed.id]: probed.at } });
      if (probeReport.arrived !== 1) throw new Error(`the probe's notification never reached the fake FCM (its problems: ${JSON.stringify(await call(fcm.info.port, '/_problems'))})`);
      await probe(off);
      const check: NotificationsResult['check'] = { failedSends: 0, missing: 0, duplicates: 0, deliveredWhileOff: 0, problems: [] };
      const slices: NotificationsResult['slices'] = [];
      await takeTurns({
        slices: options.slices,
        a: () => slice(options, on, fcm, true, check),
        b: () => slice(options, off, fcm, false, check),
        onSlice: (index, turn) => {
          const [a, b] = [(turn.a as LoadResult & { arm: ArmSlice }).arm, (turn.b as LoadResult & { arm: ArmSlice }).arm];
          slices.push({ on: a, off: b });
          const d = a.delivery!;
          options.log(
            `notifications slice ${index + 1}: send at ${options.rate}/s, on / off: p50 ${a.p50Ms} / ${b.p50Ms} ms, p99 ${a.p99Ms} / ${b.p99Ms} ms (${(a.p99Ms / b.p99Ms).toFixed(2)}); ` +
              `server CPU per send ${a.cpuMicrosPerSend.server} / ${b.cpuMicrosPerSend.server} µs` +
              (a.cpuMicrosPerSend.postgres !== undefined ? `, postgres ${a.cpuMicrosPerSend.postgres} / ${b.cpuMicrosPerSend.postgres} µs` : '') +
              `; ${d.deliveries} delivered (${d.perSecond}/s, answer to FCM p50 ${d.p50Ms} ms, p99 ${d.p99Ms} ms, last ${d.tailMs} ms after the last answer${d.keptUp ? '' : ': fell behind'})` +
              (d.missing || d.duplicates || a.failed || b.failed ? `; ${d.missing} missing, ${d.duplicates} twice, ${a.failed} / ${b.failed} sends failed` : ''),
          );
        },
      });
      // The group on the "on" server alone: the "off" one is idle, and all 1:1 deliveries are in.
      const group: GroupMessageResult[] = [];
      for (let n = 0; n < options.groupMessages; n++) {
        await sleep(1_000);
        const g = await groupMessage(options, on, fcm);
        group.push(g);
        check.missing += Math.max(0, g.members - g.deliveries);
        check.duplicates += Math.max(0, g.deliveries - g.members);
        const cpu = Object.entries(g.cpuMicrosPerDelivery)
          .map(([name, value]) => `${name} ${value} µs`)
          .join(', ');
        options.log(
          `notifications group message ${n + 1}: ${g.deliveries} of ${g.members} delivered; answered in ${g.sendMs} ms, first delivery ${g.firstDeliveryMs} ms and last ${g.lastDeliveryMs} ms after the answer (${g.perSecond} deliveries/s); CPU per delivery: ${cpu}`,
        );
      }
      check.problems = await call<string[]>(fcm.info.port, '/_problems');
      const meters = Object.keys(slices[0]?.on.cpuMicrosPerSend ?? {}).filter((name) => name !== 'fakeFcm');
      const cpuMicrosPerSend = Object.fromEntries(
        meters.map((name) => [name, [medianOf(slices, (s) => s.on.cpuMicrosPerSend[name]!), medianOf(slices, (s) => s.off.cpuMicrosPerSend[name]!)] as [number, number]]),
      );
      return {
        engine: options.engine,
        rate: options.rate,
        sliceSeconds: options.sliceSeconds,
        groupSize: options.groupSize,
        seedingSeconds,
        slices,
        p50Ms: [medianOf(slices, (s) => s.on.p50Ms), medianOf(slices, (s) => s.off.p50Ms)],
        p99Ms: [medianOf(slices, (s) => s.on.p99Ms), medianOf(slices, (s) => s.off.p99Ms)],
        p99Ratio: Number(median(slices.map((s) => s.on.p99Ms / s.off.p99Ms)).toFixed(3)),
        p50Ratio: Number(median(slices.map((s) => s.on.p50Ms / s.off.p50Ms)).toFixed(3)),
        cpuMicrosPerSend,
        cpuMicrosPerNotification: Object.fromEntries([
          ...Object.entries(cpuMicrosPerSend).map(([name, [w, wo]]) => [name, Number((w - wo).toFixed(1))]),
          ['fakeFcm', medianOf(slices, (s) => s.on.cpuMicrosPerSend.fakeFcm ?? 0)],
        ]),
        deliveryP50Ms: medianOf(slices, (s) => s.on.delivery!.p50Ms),
        deliveryP99Ms: medianOf(slices, (s) => s.on.delivery!.p99Ms),
        deliveriesPerSecond: medianOf(slices, (s) => s.on.delivery!.perSecond),
        keptUpSlices: slices.filter((s) => s.on.delivery!.keptUp).length,
        group,
        groupLastDeliveryMs: medianOf(group, (g) => g.lastDeliveryMs),
        groupDeliveriesPerSecond: medianOf(group, (g) => g.perSecond),
        groupCpuMicrosPerDelivery: Object.fromEntries(Object.keys(group[0]?.cpuMicrosPerDelivery ?? {}).map((name) => [name, medianOf(group, (g) => g.cpuMicrosPerDelivery[name]!)])),
        check,
      };
    });
  } finally {
    await fcm.stop();
  }
}

// Run on its own: npx tsx bench/notifications.ts [--engine postgres|pglite] ...
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string', default: 'postgres' },
      rate: { type: 'string' },
      slices: { type: 'string', default: '10' },
      'slice-seconds': { type: 'string', default: '5' },
      group: { type: 'string', default: '10000' },
      'group-messages': { type: 'string', default: '3' },
    },
  });
  const engine = values.engine === 'pglite' ? 'pglite' : 'postgres';
  const adminUrl = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const { postgresReachable, withPostgresDatabase } = postgresDatabases(adminUrl);
  if (engine === 'postgres' && !(await postgresReachable())) throw new Error(`PostgreSQL does not answer at ${adminUrl} (PARLEY_BENCH_DATABASE_URL)`);
  const result = await notificationsBench({
    engine,
    ...(engine === 'postgres' ? { withPostgresDatabase } : {}),
    rate: Number(values.rate ?? DEFAULT_RATE[engine]),
    slices: Number(values.slices),
    sliceSeconds: Number(values['slice-seconds']),
    groupSize: Number(values.group),
    groupMessages: Number(values['group-messages']),
    log: (line) => console.log(line),
  });
  console.log(describeNotifications(result));
  const at = new Date().toISOString();
  const file = path.join('.bench', `notifications-${at.replace(/[:.]/g, '-')}.json`);
  fs.mkdirSync('.bench', { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ at, notifications: result }, null, 2)}\n`);
  console.log(`\nresults written to ${file}`);
}
