// Webhook delivery and the live event stream under load (issue 22, "Done when"), PostgreSQL:
//
// 1. Send cost: send 1:1 at 64 connections on a server with one enabled webhook on message_sent
//    (posting to a receiver that answers 200 at once) against the same server with none, round
//    after round, alternating which goes first, each on a fresh database; the figure is the
//    median of the rounds' ratios (with / without; target ≥ 0.90), as in bench/hardening-ab.ts.
// 2. Delivery throughput: a backlog is preloaded, then delivered with nothing else running. The
//    server (webhook on, receiver timeout raised to 60 s) gets 20,000 sends over 2,000
//    conversations at 64 connections while the receiver holds every delivery unanswered, so the
//    dispatcher's lanes in flight wait and the rest stays in the log and the deliveries table.
//    Once the fan-out has made every delivery, the receiver answers the held ones and then each
//    at once: the deliveries from that moment to the last one's arrival over that time is the
//    dispatcher's rate (target ≥ 5,000 events/s), with the server's and PostgreSQL's CPU per
//    delivery. (A backlog cannot be preloaded otherwise without changing the server: a disabled
//    webhook gets no deliveries, and a new one starts at the end of the log; a receiver that
//    fails would make them failed or put their lanes off for the retry delay.) The rate at which
//    deliveries arrived during scenario 1's sends, with the dispatcher sharing the cores with
//    them, is reported per round too.
// 3. Commit-to-receiver latency: sends paced at 1,000/s (open loop: each sent at its planned
//    time, whatever the answers before it) for 2 s of warm-up and 10 s measured; per message, the
//    receiver's arrival time minus the time the send's 200 answer reached the client (the commit
//    as a client sees it), p50/p99 (target p99 ≤ 250 ms), and the mean of each second's sends
//    (a backlog carried in from the warm-up shows as high first seconds, a stall as one high
//    second in the middle).
// 4. SSE fan-out: 1,000 readers of GET /v3/events?triggers=message_sent, sends paced at 100/s for
//    5 s; per event and stream, arrival minus the send's answer (p50/p99 over all), whether every
//    stream saw every event, the server's RSS and CPU.
// 5. After a quiet spell: 20 sends, each 1.5 s after the last (bench/lib/quiet-latency.ts); per
//    message, arrival minus the send's answer: the wait the feed's idle pace would add.
//
// Statistics: PostgreSQL on these machines runs with autovacuum off, and every bench database
// starts with empty webhook tables, so their statements are planned without statistics as they
// grow. A default deployment's autoanalyze gathers them (within a minute or so). Scenarios 2 and
// 3 therefore run twice, each on a fresh database: as is, and with the webhook tables analysed
// once the backlog (2) or the warm-up's deliveries (3) are there.
//
// The receiver and the 1,000 stream readers run in their own process (bench/webhook-receiver.ts):
// parsing 5,000 deliveries a second or 100,000 stream events a second in this process would
// delay autocannon and the send loop's clock, and so the measured answer times.
import pg from 'pg';
import { runLoad } from './lib/load.js';
import { postgresCpuMeter, startServerProcess, type ServerHandle } from './lib/processes.js';
import { sendScenarios } from './lib/send-load.js';
import { burst, call, now, paced, PAIRS, waitForArrivals, type PacedResult, type Parley } from './lib/webhook-sends.js';
import { quietLatency, type QuietLatencyResult } from './lib/quiet-latency.js';
import type { ReceiverReport } from './webhook-receiver.js';

const USERS = 10_000;
const LATENCY_RATE = 1_000;
const LATENCY_SECONDS = 10;
const STREAMS = 1_000;
const STREAM_RATE = 100;
const STREAM_SECONDS = 5;
const WARMUP_SECONDS = 2;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length === 0 ? 0 : sorted.length % 2 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
};

/** The delivery of a preloaded backlog (scenario 2). */
export interface DrainResult {
  /** Messages sent (each one message_sent event, each owed to the webhook), over how many conversations. */
  messages: number;
  conversations: number;
  /** The preload's send rate (the receiver holding every delivery), req/s. */
  preloadSendsPerSecond: number;
  /** Deliveries pending when the receiver started answering (the rest had arrived, held). */
  pending: number;
  /** Delivered after the release, in how long, and the rate. */
  drained: number;
  drainSeconds: number;
  drainPerSecond: number;
  /** Messages never delivered within the wait; of them, events the fan-out passed without making a delivery (lost). */
  missing: number;
  lost: number;
  /** CPU per delivery while draining, µs: the server's, PostgreSQL's, the receiver's. */
  cpuMicrosPerDelivery: { server: number; postgres: number; receiver: number };
  /** Requests the receiver got beyond one per message. */
  duplicates: number;
}

/** What the webhook arm's dispatcher did while its sends ran (scenario 1). */
export interface DuringSends {
  messages: number;
  /** Distinct messages delivered when the sends ended, and the rate from the first arrival. */
  delivered: number;
  perSecond: number;
  /** The backlog then: deliveries pending, events not fanned out yet. */
  pending: number;
  notFannedOut: number;
}

export interface WebhookArm {
  sendsPerSecond: number;
  p99Ms: number;
  cpuMicrosPerSend: Record<string, number>;
  delivery?: DuringSends;
}

export interface WebhooksResult {
  connections: number;
  durationSeconds: number;
  rounds: Array<{ with: WebhookArm; without: WebhookArm }>;
  /** Send 1:1, with the webhook / without, median of the rounds' ratios (target ≥ 0.90). */
  medianRatio: number;
  /** The preloaded backlog's delivery (target ≥ 5,000/s), as is and with the webhook tables analysed. */
  throughput?: { asIs: DrainResult; analysed: DrainResult };
  /** Commit to receiver at 1,000 sends/s (target p99 ≤ 250 ms), as is and analysed. */
  latency?: { asIs: LatencyResult; analysed: LatencyResult };
  sse?: SseResult;
  /** Commit to receiver for sends that each follow a quiet spell. */
  quiet?: QuietLatencyResult;
}

export type LatencyResult = PacedResult & { arrived: number; p50Ms: number; p99Ms: number; maxMs: number; meanBySecondMs: number[] };

export interface SseResult {
  streams: number;
  rate: number;
  events: number;
  /** Events that reached every stream; streams that saw every event; streams that ended. */
  eventsAtEveryStream: number;
  completeStreams: number;
  closedStreams: number;
  outOfOrder: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  /** The server's RSS before the streams, with them open, and at the end (MB). */
  serverRssMb: [number, number, number];
  /** Cores used while the events went out (CPU seconds per second): server, PostgreSQL, the readers' process. */
  coresUsed: { server: number; postgres: number; readers: number };
  /** The server's CPU per event per stream, µs. */
  serverMicrosPerStreamEvent: number;
}

interface Options {
  withPostgresDatabase: <T>(run: (url: string) => Promise<T>) => Promise<T>;
  rounds: number;
  durationSeconds: number;
  log: (line: string) => void;
}

function startParley(url: string, webhookUrl?: string, env: NodeJS.ProcessEnv = {}): Promise<Parley> {
  return startServerProcess('parley-server.ts', {
    ...env,
    BENCH_ENGINE: 'postgres',
    DATABASE_URL: url,
    BENCH_USERS: String(USERS),
    BENCH_HISTORY: '',
    PARLEY_WEBHOOK_ALLOW_PRIVATE: '1',
    ...(webhookUrl ? { BENCH_WEBHOOK_URL: webhookUrl } : {}),
  });
}

// --- 1 and 2: send with and without the webhook; a preloaded backlog's delivery --------------
async function arm(options: Options, receiver: ServerHandle<{ port: number; url: string }>, withWebhook: boolean): Promise<WebhookArm> {
  return options.withPostgresDatabase(async (url) => {
    await call(receiver.info.port, '/_reset');
    const server = await startParley(url, withWebhook ? receiver.info.url : undefined);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const target = { base: `http://127.0.0.1:${server.info.port}`, headers: { appid: server.info.appId, apikey: server.info.apiKey }, users: USERS, chatGroups: server.info.chatGroups };
      const cpu = { server: server.cpuMeter, postgres: postgresCpuMeter };
      const sent = await sendScenarios(target, (load) => runLoad({ ...load, cpu }), 64, options.durationSeconds).oneToOne();
      const result: WebhookArm = { sendsPerSecond: sent.requestsPerSecond, p99Ms: sent.p99Ms, cpuMicrosPerSend: sent.cpuMicrosPerRequest ?? {} };
      if (withWebhook) result.delivery = await duringSends(receiver, db);
      return result;
    } finally {
      await db.end();
      await server.stop();
    }
  });
}

const backlogQuery = `
  select (select count(*) from messages) as messages,
         (select count(*) from webhook_deliveries where status = 'pending') as pending,
         (select count(*) from events e join event_cursors c on c.app_id = e.app_id and c.consumer = 'webhooks' where e.id > c.event_id) as unfanned`;

async function backlog(db: pg.Client): Promise<{ messages: number; pending: number; notFannedOut: number }> {
  const row = (await db.query<{ messages: string; pending: string; unfanned: string }>(backlogQuery)).rows[0]!;
  return { messages: Number(row.messages), pending: Number(row.pending), notFannedOut: Number(row.unfanned) };
}

/** What autovacuum's autoanalyze would have done by now on a default deployment. */
async function analyseWebhookTables(db: pg.Client): Promise<void> {
  await db.query('analyze event_deliveries, event_lanes, event_cursors, events');
}

const uniqueAt = async (receiver: ServerHandle<{ port: number }>) => (await call<{ unique: number }>(receiver.info.port, '/_count')).unique;

async function duringSends(receiver: ServerHandle<{ port: number }>, db: pg.Client): Promise<DuringSends> {
  const end = now();
  const delivered = await uniqueAt(receiver);
  const left = await backlog(db);
  const report = await call<Required<ReceiverReport>>(receiver.info.port, '/_report', { sent: {} });
  return { ...left, delivered, perSecond: Math.round(delivered / Math.max(0.001, (end - report.firstAnyAt) / 1000)) };
}

const PRELOAD = 20_000;

async function throughput(options: Options, receiver: ServerHandle<{ port: number; url: string }>, analyse: boolean): Promise<DrainResult> {
  return options.withPostgresDatabase(async (url) => {
    await call(receiver.info.port, '/_reset');
    await call(receiver.info.port, '/_hold');
    const server = await startParley(url, receiver.info.url, { PARLEY_WEBHOOK_TIMEOUT_MS: '60000' });
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const started = now();
      const sent = await burst(server, PRELOAD, 64);
      const preloadSendsPerSecond = Math.round(sent / ((now() - started) / 1000));
      // Every delivery made (the fan-out has read the whole log) before the receiver answers.
      for (let waited = 0; (await backlog(db)).notFannedOut > 0 && waited < 30_000; waited += 100) await sleep(100);
      const { pending } = await backlog(db);
      const lost = Number(
        (
          await db.query<{ n: string }>(`select count(*) as n from events e where e.trigger = 'message_sent'
           and not exists (select 1 from webhook_deliveries d where d.app_id = e.app_id and d.event_id = e.id)`)
        ).rows[0]!.n,
      );
      if (analyse) await analyseWebhookTables(db);
      const before = await uniqueAt(receiver);
      const meters = [server.cpuMeter(), postgresCpuMeter(), receiver.cpuMeter()];
      const mark = now();
      await call(receiver.info.port, '/_release');
      await waitForArrivals(
        () => uniqueAt(receiver),
        async () => sent - lost,
        10_000,
        120_000,
      );
      const [serverCpu, postgresCpu, receiverCpu] = meters.map((read) => read());
      const report = await call<Required<ReceiverReport>>(receiver.info.port, '/_report', { sent: {}, mark });
      const delivered = await uniqueAt(receiver);
      const drained = delivered - before;
      const drainSeconds = Math.max(0.001, (report.lastAnyAt - mark) / 1000);
      const perDelivery = (seconds: number) => Math.round((seconds * 1e6) / Math.max(1, drained));
      return {
        messages: sent,
        conversations: PAIRS,
        preloadSendsPerSecond,
        pending,
        drained,
        drainSeconds: Number(drainSeconds.toFixed(2)),
        drainPerSecond: Math.round(drained / drainSeconds),
        missing: sent - delivered,
        lost,
        cpuMicrosPerDelivery: { server: perDelivery(serverCpu!), postgres: perDelivery(postgresCpu!), receiver: perDelivery(receiverCpu!) },
        duplicates: report.received - delivered,
      };
    } finally {
      await call(receiver.info.port, '/_release');
      await db.end();
      await server.stop();
    }
  });
}

async function latencyAtRate(options: Options, receiver: ServerHandle<{ port: number; url: string }>, analyse: boolean): Promise<LatencyResult> {
  return options.withPostgresDatabase(async (url) => {
    await call(receiver.info.port, '/_reset');
    const server = await startParley(url, receiver.info.url);
    const db = new pg.Client({ connectionString: url });
    await db.connect();
    try {
      const warm = await paced(server, LATENCY_RATE, 0, WARMUP_SECONDS);
      if (analyse) await analyseWebhookTables(db);
      const { result, answers } = await paced(server, LATENCY_RATE, 0, LATENCY_SECONDS);
      const all = warm.result.answered + result.answered;
      await waitForArrivals(
        () => uniqueAt(receiver),
        async () => all,
        10_000,
        30_000,
      );
      const report = await call<ReceiverReport>(receiver.info.port, '/_report', { sent: answers });
      return { ...result, arrived: report.arrived, p50Ms: report.p50Ms, p99Ms: report.p99Ms, maxMs: report.maxMs, meanBySecondMs: report.meanBySecondMs ?? [] };
    } finally {
      await db.end();
      await server.stop();
    }
  });
}

async function sseFanOut(options: Options): Promise<SseResult> {
  return options.withPostgresDatabase(async (url) => {
    const server = await startParley(url, undefined, { PARLEY_STREAMS_PER_APP: String(STREAMS) });
    const rssBefore = server.rssMb();
    const readers = await startServerProcess<{ port: number }>('webhook-receiver.ts', {
      BENCH_RECEIVER: 'streams',
      BENCH_STREAMS: String(STREAMS),
      BENCH_STREAM_URL: `http://127.0.0.1:${server.info.port}/v3/events?triggers=message_sent`,
      BENCH_APP_ID: server.info.appId,
      BENCH_API_KEY: server.info.apiKey,
    });
    try {
      const counts = () => call<{ received: number; fewestPerStream: number; closed: number }>(readers.info.port, '/_count');
      // Warm-up: a second of sends, until every stream has had them (so every stream is live).
      const warm = await paced(server, STREAM_RATE, 0, 1);
      const warmEvents = warm.result.answered;
      await waitForArrivals(
        async () => (await counts()).fewestPerStream,
        async () => warmEvents,
        5_000,
        30_000,
      );
      const rssOpen = server.rssMb();
      const meters = [server.cpuMeter(), postgresCpuMeter(), readers.cpuMeter()];
      const started = now();
      const { result, answers } = await paced(server, STREAM_RATE, 0, STREAM_SECONDS);
      const expected = (warmEvents + result.answered) * STREAMS;
      await waitForArrivals(
        async () => (await counts()).received,
        async () => expected,
        5_000,
        60_000,
      );
      const [serverCpu, postgresCpu, readersCpu] = meters.map((read) => read());
      const elapsed = (now() - started) / 1000;
      const report = await call<ReceiverReport>(readers.info.port, '/_report', { sent: answers });
      const cores = (seconds: number) => Number((seconds / elapsed).toFixed(2));
      return {
        streams: STREAMS,
        rate: STREAM_RATE,
        events: result.answered,
        eventsAtEveryStream: report.arrived,
        completeStreams: report.completeStreams ?? 0,
        closedStreams: report.closedStreams ?? 0,
        outOfOrder: report.outOfOrder ?? 0,
        p50Ms: report.p50Ms,
        p99Ms: report.p99Ms,
        maxMs: report.maxMs,
        serverRssMb: [rssBefore, rssOpen, server.rssMb()],
        coresUsed: { server: cores(serverCpu!), postgres: cores(postgresCpu!), readers: cores(readersCpu!) },
        serverMicrosPerStreamEvent: Math.round((serverCpu! * 1e6) / Math.max(1, result.answered * STREAMS)),
      };
    } finally {
      await readers.stop();
      await server.stop();
    }
  });
}

export async function webhooksBench(options: Options): Promise<WebhooksResult> {
  const receiver = await startServerProcess<{ port: number; url: string }>('webhook-receiver.ts', { BENCH_RECEIVER: 'webhook' });
  const rounds: WebhooksResult['rounds'] = [];
  try {
    for (let round = 0; round < options.rounds; round++) {
      // Alternating which goes first, so a machine that speeds up or slows down favours neither.
      const first = round % 2 === 0;
      const a = await arm(options, receiver, first);
      const b = await arm(options, receiver, !first);
      const [withHook, without] = first ? [a, b] : [b, a];
      rounds.push({ with: withHook, without });
      const d = withHook.delivery!;
      options.log(
        `webhooks round ${round + 1}: send 1:1 ${withHook.sendsPerSecond} with a webhook vs ${without.sendsPerSecond} without (${(withHook.sendsPerSecond / without.sendsPerSecond).toFixed(3)}); ` +
          `CPU/send with / without: server ${withHook.cpuMicrosPerSend.server} / ${without.cpuMicrosPerSend.server} µs, postgres ${withHook.cpuMicrosPerSend.postgres} / ${without.cpuMicrosPerSend.postgres} µs; ` +
          `${d.delivered} of ${d.messages} delivered by the sends' end (${d.perSecond}/s; backlog ${d.pending} pending + ${d.notFannedOut} not fanned out)`,
      );
    }
    const result: WebhooksResult = {
      connections: 64,
      durationSeconds: options.durationSeconds,
      rounds,
      medianRatio: Number(median(rounds.map((r) => r.with.sendsPerSecond / r.without.sendsPerSecond)).toFixed(3)),
    };
    if (rounds.length > 0) {
      options.log(`webhooks: send 1:1 at 64 conn with one webhook on message_sent / none, median of ${rounds.length} rounds' ratios: ${result.medianRatio} (target ≥ 0.90)`);
    }
    result.throughput = { asIs: await throughput(options, receiver, false), analysed: await throughput(options, receiver, true) };
    for (const [label, t] of Object.entries(result.throughput)) {
      options.log(
        `webhooks: delivery throughput (${label === 'asIs' ? 'as is' : 'tables analysed'}), ${t.drained} preloaded deliveries over ${t.conversations} conversations: ${t.drainPerSecond} events/s in ${t.drainSeconds} s (target ≥ 5,000); ` +
          `CPU/delivery: server ${t.cpuMicrosPerDelivery.server} µs, postgres ${t.cpuMicrosPerDelivery.postgres} µs, receiver ${t.cpuMicrosPerDelivery.receiver} µs` +
          `${t.missing ? `; ${t.missing} never arrived (${t.lost} events passed by the fan-out without a delivery)` : ''}${t.duplicates ? `; ${t.duplicates} duplicates` : ''}`,
      );
    }
    result.latency = { asIs: await latencyAtRate(options, receiver, false), analysed: await latencyAtRate(options, receiver, true) };
    for (const [label, l] of Object.entries(result.latency)) {
      options.log(
        `webhooks: commit-to-receiver latency at ${l.rate} sends/s (${label === 'asIs' ? 'as is' : 'tables analysed'}): p50 ${l.p50Ms} ms, p99 ${l.p99Ms} ms, max ${l.maxMs} ms (target p99 ≤ 250 ms); ` +
          `${l.arrived} of ${l.answered} arrived (send p50 ${l.sendP50Ms} ms, p99 ${l.sendP99Ms} ms${l.failed ? `, ${l.failed} sends failed` : ''}); ` +
          `mean by second of the run: ${l.meanBySecondMs.join(', ')} ms`,
      );
    }
    result.quiet = await options.withPostgresDatabase(async (url) => {
      await call(receiver.info.port, '/_reset');
      const server = await startParley(url, receiver.info.url);
      return quietLatency(server, receiver.info.port).finally(() => server.stop());
    });
    const q = result.quiet;
    options.log(`webhooks: commit-to-receiver latency of ${q.sends} sends each after ${q.pauseMs} ms of quiet: p50 ${q.p50Ms} ms, max ${q.maxMs} ms; ${q.arrived} of ${q.sends} arrived`);
    result.sse = await sseFanOut(options);
    const s = result.sse;
    options.log(
      `webhooks: SSE fan-out to ${s.streams} streams at ${s.rate} sends/s: p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, max ${s.maxMs} ms; ` +
        `${s.eventsAtEveryStream} of ${s.events} events at every stream, ${s.completeStreams} streams complete, ${s.closedStreams} closed; ` +
        `server RSS ${s.serverRssMb.join(' → ')} MB, cores: server ${s.coresUsed.server}, postgres ${s.coresUsed.postgres}, readers ${s.coresUsed.readers} (${s.serverMicrosPerStreamEvent} µs per event per stream)`,
    );
    return result;
  } finally {
    await receiver.stop();
  }
}
