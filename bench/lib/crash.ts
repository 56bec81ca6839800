// Crash under load (issue 20): N concurrent senders post messages with unique muids to a real
// `parley serve` process; once enough are acknowledged, the server is killed with SIGKILL while
// requests are in flight. The database is then read directly: every acknowledged message must be
// stored exactly once, with the id it was acknowledged with, and nothing twice. The server is
// started again on the same database (and data dir), and each client re-sends what it got no
// answer for, with the same muid: each must be answered 2xx, with the first id when it had been
// stored, and still be stored once. Several kills make several such rounds. Used by
// test/e2e/crash.test.ts (a small N) and by `npm run bench -- --only crash` (a large one).
import crypto from 'node:crypto';
import http from 'node:http';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.js';
import { silentLogger } from '../../src/domain/context.js';
import { UNREAD_COUNT_CAP } from '../../src/repositories/conversation-states.repository.js';
import { parseBanner, startServe, type ServerProcess } from '../../test/helpers/cli.js';
import type { Receiver } from '../../test/helpers/webhook-receiver.js';
import { checkWebhookDeliveries, createCrashWebhook, parseManagementKey, type WebhookCheck } from './crash-webhooks.js';
import { check, checkConversations, readStored, type CheckResult, type ListedConversation } from './crash-check.js';
import { Ledger, request, resendUnacknowledged, sendUntilKilled, type LoadRound, type ResendResult, type Route, type Target } from './crash-clients.js';

export interface CrashOptions {
  engine: 'postgres' | 'pglite';
  /** The deployment's environment: its data dir and, on PostgreSQL, DATABASE_URL. */
  env: NodeJS.ProcessEnv;
  dataDir: string;
  databaseUrl?: string;
  senders: number;
  /** Kills, each after `acksPerKill` more acknowledged sends. */
  kills: number;
  acksPerKill: number;
  /** A round whose server stops answering is killed after this long (and fails). Default 120 s. */
  roundDeadlineMs?: number;
  log?: (line: string) => void;
  /** A receiver for a webhook on message_sent (crash-webhooks.ts); the servers get PARLEY_WEBHOOK_ALLOW_PRIVATE. */
  webhook?: Receiver;
}

export interface CrashRound {
  load: LoadRound;
  /** The re-send of the previous rounds' unanswered messages, on this round's server. */
  resend?: ResendResult;
  /** What the database held after the kill. */
  afterKill: Omit<CheckResult, 'idByMuid'>;
}

export interface CrashReport {
  engine: string;
  senders: number;
  groups: number;
  rounds: CrashRound[];
  /** The last re-send, on a server that is then stopped gracefully. */
  finalResend: ResendResult;
  final: Omit<CheckResult, 'idByMuid'>;
  /** Distinct muids sent. */
  sentMuids: number;
  /** Unread counts and last messages that do not match the stored messages. */
  conversationProblems: string[];
  /** Everything that went wrong; empty when every check passed. */
  problems: string[];
  /** With `webhook`: what reached the receiver. */
  webhook?: WebhookCheck;
  seconds: number;
}

/** Runs the scenario: setup, `kills` rounds of load and kill, a final re-send and the checks. */
export async function runCrashScenario(options: CrashOptions): Promise<CrashReport> {
  const startedAt = Date.now();
  const log = options.log ?? (() => {});
  const tag = `c${crypto.randomBytes(3).toString('hex')}`;
  const uids = Array.from({ length: options.senders }, (_, i) => `${tag}-s${i}`);
  // Groups of up to 8 senders: sender i belongs to group floor(i / 8).
  const guids = Array.from({ length: Math.ceil(options.senders / 8) }, (_, g) => `${tag}-g${g}`);
  const route: Route = (i, k) => {
    const n = uids.length;
    switch (k % 4) {
      case 0:
        return { receiverType: 'user', receiver: uids[(i + 1) % n]! };
      case 2:
        return { receiverType: 'user', receiver: uids[(i + n - 1) % n]! };
      default:
        return { receiverType: 'group', receiver: guids[Math.floor(i / 8)]! };
    }
  };
  const problems: string[] = [];
  const ledger = new Ledger();
  const rounds: CrashRound[] = [];

  let server = await start(options);
  const banner = parseBanner(server.output());
  const target: Target = { port: server.port, appId: banner.appId, apiKey: banner.apiKey };
  let agent = newAgent();
  try {
    await createUsersAndGroups(agent, target, uids, guids);
    if (options.webhook) await createCrashWebhook(agent, target, parseManagementKey(server.output()), options.webhook.url);
    log(`crash: ${uids.length} senders, ${guids.length} groups created on ${options.engine}`);
    let storedBefore = new Map<string, string>();
    for (let round = 1; round <= options.kills; round++) {
      let resend: ResendResult | undefined;
      if (round > 1) {
        server = await start(options);
        target.port = server.port;
        agent = newAgent();
        resend = await resendUnacknowledged(agent, target, ledger, storedBefore, ACKED_RESENT_PER_SENDER);
        problems.push(...resendProblems(resend, `round ${round}`));
      }
      const running = server;
      const load = await sendUntilKilled({
        agent,
        target,
        ledger,
        senders: uids,
        route,
        killAfterAcks: options.acksPerKill,
        kill: () => running.child.kill('SIGKILL'),
        deadlineMs: options.roundDeadlineMs ?? 120_000,
      });
      await running.exited;
      agent.destroy();
      if (load.deadlineHit) problems.push(`round ${round}: fewer than ${options.acksPerKill} acknowledgements before the deadline (${load.acked})`);
      if (load.refused > 0)
        problems.push(
          `round ${round}: ${load.refused} sends answered with an error: ${[...ledger.refused.values()]
            .slice(0, 3)
            .map((r) => `${r.status} ${r.body}`)
            .join(' | ')}`,
        );
      const checked = check(await inspect(options, target.appId), ledger);
      problems.push(...checkProblems(checked, `after kill ${round}`));
      storedBefore = checked.idByMuid;
      const { idByMuid: _, ...afterKill } = checked;
      rounds.push({ load, ...(resend ? { resend } : {}), afterKill });
      log(describeRound(round, rounds[round - 1]!));
    }

    server = await start(options);
    target.port = server.port;
    agent = newAgent();
    const finalResend = await resendUnacknowledged(agent, target, ledger, storedBefore, ACKED_RESENT_PER_SENDER);
    problems.push(...resendProblems(finalResend, 'final re-send'));
    const listed = await listConversations(agent, target, uids);
    let webhook: WebhookCheck | undefined;
    if (options.webhook) {
      webhook = await checkWebhookDeliveries(options.webhook, new Set([...ledger.acked.values()].map((a) => a.id)), 60_000);
      if (webhook.missing.length) problems.push(`${webhook.missing.length} acknowledged messages' message_sent never reached the webhook: ${webhook.missing.slice(0, 5).join(', ')}`);
      if (webhook.mixedDeliveryIds.length) problems.push(`messages delivered under several delivery ids: ${webhook.mixedDeliveryIds.slice(0, 5).join(', ')}`);
    }
    const code = await server.stop('SIGTERM');
    if (code !== 0) problems.push(`the last server exited with ${code} on SIGTERM`);
    const stored = await inspect(options, target.appId);
    const checked = check(stored, ledger);
    problems.push(...checkProblems(checked, 'at the end'));
    if (ledger.unanswered.size + ledger.refused.size > 0) problems.push(`${ledger.unanswered.size + ledger.refused.size} messages never acknowledged`);
    if (checked.ackedStored !== ledger.sent.size) problems.push(`${ledger.sent.size} muids sent, ${checked.ackedStored} stored once as acknowledged`);
    const conversationProblems = checkConversations(stored, listed, UNREAD_COUNT_CAP);
    problems.push(...conversationProblems.slice(0, 10));
    const { idByMuid: _, ...final } = checked;
    return {
      engine: options.engine,
      senders: uids.length,
      groups: guids.length,
      rounds,
      finalResend,
      final,
      sentMuids: ledger.sent.size,
      conversationProblems,
      problems,
      ...(webhook ? { webhook } : {}),
      seconds: Math.round((Date.now() - startedAt) / 100) / 10,
    };
  } finally {
    agent.destroy();
    if (server.child.exitCode === null && server.child.signalCode === null) await server.stop('SIGKILL');
  }
}

/** Acknowledged messages each sender re-sends after a restart too (see ResendResult). */
const ACKED_RESENT_PER_SENDER = 2;

function newAgent(): http.Agent {
  return new http.Agent({ keepAlive: true, maxSockets: Infinity });
}

function start(options: CrashOptions): Promise<ServerProcess> {
  // Info level: startServe waits for the listening line. Only a tail of the request log is kept.
  // With a webhook: the receiver is on loopback, and a dead process's claims end after 4 s (4 x the timeout).
  const webhook = options.webhook ? { PARLEY_WEBHOOK_ALLOW_PRIVATE: '1', PARLEY_WEBHOOK_TIMEOUT_MS: '1000', PARLEY_WEBHOOK_RETRY_DELAYS: '0.2,0.5' } : {};
  return startServe({ ...options.env, PARLEY_INSECURE_HTTP: '1', PARLEY_LOG_LEVEL: 'info', ...webhook }, 180_000, { keepOutputChars: 20_000 });
}

/** The senders, and their groups with their members, through the API. */
async function createUsersAndGroups(agent: http.Agent, target: Target, uids: string[], guids: string[]): Promise<void> {
  const create = async (path: string, body: unknown) => {
    const answer = await request(agent, target, { method: 'POST', path, payload: JSON.stringify(body) });
    if (answer.status !== 200) throw new Error(`POST ${path} answered ${answer.status}: ${answer.body}`);
  };
  for (let from = 0; from < uids.length; from += 16) {
    await Promise.all(uids.slice(from, from + 16).map((uid) => create('/v3/users', { uid, name: `Sender ${uid}` })));
  }
  await Promise.all(guids.map((guid, g) => create('/v3/groups', { guid, name: `Group ${guid}`, type: 'public', members: { participants: uids.slice(g * 8, g * 8 + 8) } })));
}

/**
 * Opens the database the killed server used, once nothing else uses it: on PostgreSQL, the
 * backends of the dead server's connections end when they notice it is gone (a statement running
 * then still commits), so this waits for them; on PGlite, it takes the data dir's lock.
 */
async function inspect(options: CrashOptions, appId: string) {
  let database: Database;
  if (options.engine === 'postgres') {
    database = await openDatabase({ engine: 'postgres', url: options.databaseUrl!, poolSize: 1, log: silentLogger });
    for (let waited = 0; ; waited += 50) {
      const others = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
        where datname = current_database() and backend_type = 'client backend' and pid <> pg_backend_pid()`.execute(database.db);
      if (others.rows[0]!.n === 0) break;
      if (waited > 60_000) throw new Error('the killed server’s PostgreSQL sessions did not end within a minute');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } else {
    database = await openDatabase({ engine: 'pglite', dataDir: options.dataDir, log: silentLogger });
  }
  try {
    return await readStored(database.db, appId);
  } finally {
    await database.close();
  }
}

/** Each sender's conversations, as list-conversations answers them. */
async function listConversations(agent: http.Agent, target: Target, uids: string[]): Promise<ListedConversation[]> {
  const listed: ListedConversation[] = [];
  await Promise.all(
    uids.map(async (uid) => {
      const answer = await request(agent, target, { method: 'GET', path: '/v3/conversations?perPage=100', onBehalfOf: uid });
      if (answer.status !== 200) throw new Error(`list-conversations for ${uid} answered ${answer.status}: ${answer.body}`);
      const page = JSON.parse(answer.body) as { data: Array<{ conversationId: string; unreadMessageCount: string; lastMessage?: { id: string } }> };
      for (const c of page.data) {
        listed.push({ uid, conversationId: c.conversationId, unreadMessageCount: String(c.unreadMessageCount), lastMessageId: c.lastMessage?.id });
      }
    }),
  );
  return listed;
}

function checkProblems(checked: CheckResult, when: string): string[] {
  const problems: string[] = [];
  const list = (what: string, items: string[]) => {
    if (items.length > 0) problems.push(`${when}: ${items.length} ${what}: ${items.slice(0, 5).join('; ')}`);
  };
  list('acknowledged messages not stored exactly once with their id', checked.lostAcked);
  list('duplicates', checked.duplicates);
  list('messages no client sent', checked.phantoms);
  list('conversations whose last message is not their newest', checked.staleConversations);
  return problems;
}

function resendProblems(resend: ResendResult, when: string): string[] {
  const problems: string[] = [];
  if (resend.failed.length > 0) {
    problems.push(
      `${when}: ${resend.failed.length} re-sends not answered 2xx: ${resend.failed
        .slice(0, 3)
        .map((f) => `${f.muid} ${f.status} ${f.body}`)
        .join(' | ')}`,
    );
  }
  if (resend.answeredOtherId.length > 0) {
    problems.push(`${when}: ${resend.answeredOtherId.length} re-sends answered another id than the stored one: ${JSON.stringify(resend.answeredOtherId.slice(0, 3))}`);
  }
  return problems;
}

function describeResend(resend: ResendResult): string {
  return (
    `re-sent ${resend.resent} unanswered: ${resend.answeredFirstId} answered with their first id, ${resend.storedNow} stored now; ` +
    `re-sent ${resend.acknowledgedResent} acknowledged: ${resend.acknowledgedSameId} answered with their id; ` +
    `${resend.answeredOtherId.length} answered another id, ${resend.failed.length} failed`
  );
}

function describeRound(round: number, r: CrashRound): string {
  const lines = [];
  if (r.resend) lines.push(`  before the load: ${describeResend(r.resend)}`);
  lines.push(
    `  load: sent ${r.load.sent}, acknowledged ${r.load.acked} (${r.load.ackedAtKill} when killed after ${r.load.secondsToKill.toFixed(1)} s: ` +
      `${Math.round(r.load.ackedAtKill / Math.max(0.001, r.load.secondsToKill))}/s), refused ${r.load.refused}, ` +
      `unanswered at the kill ${r.load.unanswered.length}`,
  );
  const a = r.afterKill;
  lines.push(
    `  after the kill: stored ${a.stored}, acknowledged and stored once ${a.ackedStored}, lost acknowledged ${a.lostAcked.length}, ` +
      `duplicates ${a.duplicates.length}, unanswered but stored ${a.unansweredStored}, unanswered not stored ${a.unansweredNotStored}`,
  );
  return [`crash: kill ${round}`, ...lines].join('\n');
}

/** The report as lines of counts. */
export function describeCrash(report: CrashReport): string {
  const sum = (pick: (r: CrashRound) => number) => report.rounds.reduce((total, r) => total + pick(r), 0);
  const resends = [...report.rounds.flatMap((r) => (r.resend ? [r.resend] : [])), report.finalResend];
  const f = report.final;
  return [
    `crash under load (${report.engine}): ${report.senders} senders, ${report.groups} groups, ${report.rounds.length} kills, ${report.seconds} s`,
    `  sent ${sum((r) => r.load.sent)} requests (${report.sentMuids} muids), acknowledged ${sum((r) => r.load.acked)}, ` +
      `refused ${sum((r) => r.load.refused)}, unanswered at the kills ${sum((r) => r.load.unanswered.length)} ` +
      `(stored before the kill ${sum((r) => r.afterKill.unansweredStored)})`,
    `  ${describeResend({
      resent: resends.reduce((n, r) => n + r.resent, 0),
      answeredFirstId: resends.reduce((n, r) => n + r.answeredFirstId, 0),
      storedNow: resends.reduce((n, r) => n + r.storedNow, 0),
      acknowledgedResent: resends.reduce((n, r) => n + r.acknowledgedResent, 0),
      acknowledgedSameId: resends.reduce((n, r) => n + r.acknowledgedSameId, 0),
      answeredOtherId: resends.flatMap((r) => r.answeredOtherId),
      failed: resends.flatMap((r) => r.failed),
    })}`,
    `  stored at the end ${f.stored}, stored once as acknowledged ${f.ackedStored}, duplicates ${f.duplicates.length} ` +
      `(after the kills: ${sum((r) => r.afterKill.duplicates.length)}), lost acknowledged ${f.lostAcked.length} ` +
      `(after the kills: ${sum((r) => r.afterKill.lostAcked.length)}), phantoms ${f.phantoms.length}, ` +
      `stale conversations ${f.staleConversations.length}, unread/last-message mismatches ${report.conversationProblems.length}`,
    ...(report.webhook
      ? [
          `  webhook: ${report.webhook.received} message_sent deliveries received, missing ${report.webhook.missing.length}, ` +
            `repeated ${report.webhook.duplicates} (each with its first delivery id; under another id: ${report.webhook.mixedDeliveryIds.length})`,
        ]
      : []),
    report.problems.length === 0 ? '  every check passed' : `  PROBLEMS:\n${report.problems.map((p) => `    ${p}`).join('\n')}`,
  ].join('\n');
}
