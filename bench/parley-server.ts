// A Parley server for benchmarks: plain HTTP on loopback, one app, seeded users.
// Env: BENCH_ENGINE=pglite|postgres, DATABASE_URL (postgres), BENCH_USERS (how many to seed),
// BENCH_WITHOUT (edgeChecks,rateLimits,metrics: parts left out, for bench/hardening-ab.ts and
// bench/metrics-ab.ts; the metrics are on only with PARLEY_METRICS_PORT),
// BENCH_HISTORY (sizes of the 1:1 conversations to seed, e.g. 1000,1000000; BENCH_HISTORY_SHOWN=0
// seeds them without stored message texts, as rows from before migration 0017), PARLEY_RATE_LIMITS
// (default: limits that never bind), BENCH_WEBHOOK_URL (a webhook on message_sent posting there,
// for bench/webhooks.ts; a loopback URL needs PARLEY_WEBHOOK_ALLOW_PRIVATE=1), BENCH_MODERATION
// (rules=10,keywords=10000: that many enabled blocking rules holding that many keywords in all,
// none of which the send load's text holds, for bench/moderation-ab.ts); for bench/gateway.ts:
// BENCH_TOKENS and BENCH_TOKEN_SECRET (auth tokens of the first seeded users), BENCH_PORT (a set
// port), BENCH_REUSE=1 (a database seeded already: no seeding, its app) and PARLEY_WS_* (the
// gateway's limits; the per-app bound is raised to 1,000,000 unless given). SIGUSR2 runs a GC
// when node runs with --expose-gc.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/domain/context.js';
import { userConversationKey } from '../src/domain/conversation-id.js';
import { createLogger, startServer } from '../src/server.js';
import { shownText } from '../src/services/views/shown-messages.js';
import { EMAIL_PATTERN, PHONE_PATTERN } from '../src/domain/moderation/builtins.js';
import { foldText } from '../src/domain/moderation/fold.js';
import { maskAuthToken, sha256Hex } from '../src/domain/secrets.js';
import { benchToken } from './lib/gateway-tokens.js';
import { announceReady } from './lib/processes.js';

const engine = process.env.BENCH_ENGINE ?? 'pglite';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-'));
const config = loadConfig({
  ...process.env,
  PARLEY_PORT: '0',
  PARLEY_HOST: '127.0.0.1',
  PARLEY_DATA_DIR: dataDir,
  PARLEY_INSECURE_HTTP: '1',
  DATABASE_URL: engine === 'postgres' ? process.env.DATABASE_URL : '',
  // Rate limits on (so their cost is measured) but far above any rate the bench reaches. Their
  // cost, with the edge checks', is the A/B of bench/hardening-ab.ts (BENCH_WITHOUT below).
  PARLEY_RATE_LIMITS: process.env.PARLEY_RATE_LIMITS ?? 'core=1000000000,standard=1000000000,import=1000000000',
  // BENCH_PORT: a port of its own (a restart of bench/gateway.ts listens where its clients were).
  ...(process.env.BENCH_PORT ? { PARLEY_PORT: process.env.BENCH_PORT } : {}),
  // The gateway's per-app bound (10,000 by default) above the bench's sockets, unless given.
  PARLEY_WS_CONNECTIONS_PER_APP: process.env.PARLEY_WS_CONNECTIONS_PER_APP ?? '1000000',
});
// BENCH_WITHOUT=edgeChecks,rateLimits: a server without those parts, for the A/B of their cost.
const left = new Set((process.env.BENCH_WITHOUT ?? '').split(',').filter(Boolean));
const without = {
  ...(left.has('edgeChecks') ? { edgeChecks: true as const } : {}),
  ...(left.has('rateLimits') ? { rateLimits: true as const } : {}),
  ...(left.has('metrics') ? { metrics: true as const } : {}),
};
// BENCH_LOG_LEVEL: error, for a server refusing many requests at its shutdown (bench/gateway.ts).
const server = await startServer(config, createLogger({ logLevel: process.env.BENCH_LOG_LEVEL === 'error' ? 'error' : 'warn' }, 2), { without });
// SIGUSR2: a full GC (with --expose-gc), so that an RSS read after it holds what is live.
process.on('SIGUSR2', () => (globalThis as { gc?: () => void }).gc?.());
// BENCH_REUSE=1: another node of (or a restart on) a database seeded already: its app, no seeding.
if (process.env.BENCH_REUSE === '1') {
  const [existing] = await server.services.apps.list();
  announceReady({ port: server.port, appId: existing!.appId, engine: server.database.engine, reused: true });
  process.on('SIGTERM', () => {
    void server.close().then(() => {
      fs.rmSync(dataDir, { recursive: true, force: true });
      process.exit(0);
    });
  });
  await new Promise(() => {});
}
const app = server.defaultApp ?? (await server.services.apps.create({ appId: '', requestId: 'bench', log: silentLogger }, { name: 'Bench' }));

// Seed users in bulk (the API path is what the scenarios measure, not the seeding).
const seeded = Number(process.env.BENCH_USERS ?? 1000);
for (let from = 0; from < seeded; from += 50_000) {
  const to = Math.min(seeded, from + 50_000) - 1;
  await sql`insert into users (app_id, uid, name, metadata, tags)
            select ${app.appId}, 'seed-' || i, 'Seed user ' || i, '{"seeded":true}'::json, array['seed']
            from generate_series(${from}::int, ${to}::int) as i`.execute(server.database.db);
}

// Groups: 'members-1k' and 'members-100k' to list, and ADD_GROUPS empty ones to add members to.
const addGroups = Number(process.env.BENCH_ADD_GROUPS ?? 500);
await sql`insert into groups (app_id, guid, name, type)
          select ${app.appId}, 'add-' || i, 'Add group ' || i, 'public' from generate_series(0, ${addGroups - 1}::int) as i`.execute(server.database.db);
for (const size of [1_000, 100_000].filter((n) => n <= seeded)) {
  const guid = `members-${size / 1000}k`;
  await sql`insert into groups (app_id, guid, name, type) values (${app.appId}, ${guid}, ${guid}, 'public')`.execute(server.database.db);
  await sql`insert into group_members (app_id, guid, uid, scope)
            select ${app.appId}, ${guid}, 'seed-' || i, 'participant' from generate_series(0, ${size - 1}::int) as i`.execute(server.database.db);
}
// Groups 'chat-0'.. 'chat-<G-1>' of 10 members each (seed-10i .. seed-10i+9), to send to.
const chatGroups = Math.min(Number(process.env.BENCH_CHAT_GROUPS ?? 200), Math.floor(seeded / 10));
if (chatGroups > 0) {
  await sql`insert into groups (app_id, guid, name, type)
            select ${app.appId}, 'chat-' || i, 'Chat group ' || i, 'public' from generate_series(0, ${chatGroups - 1}::int) as i`.execute(server.database.db);
  await sql`insert into group_members (app_id, guid, uid, scope)
            select ${app.appId}, 'chat-' || (i / 10), 'seed-' || i, 'participant' from generate_series(0, ${chatGroups * 10 - 1}::int) as i`.execute(server.database.db);
}

// 1:1 conversations to read history from (BENCH_HISTORY="1000,1000000"), written straight into
// the tables in batches, as a long-lived conversation would have them. Their users are the last
// seeded (the first size between the last two, and so on: `historyPairs`, viewer first): at the
// end of the users table, where a lookup that scanned the table instead of using its key would
// read all of it (page_version did, until migration 0016; at its start the bench never showed it).
const histories = (process.env.BENCH_HISTORY ?? '').split(',').filter(Boolean).map(Number);
const historyPairs = histories.map((_, index) => [`seed-${seeded - 2 - index * 2}`, `seed-${seeded - 1 - index * 2}`] as const);
for (const [index, size] of histories.entries()) {
  const [a, b] = historyPairs[index]!;
  const conversationId = userConversationKey(a, b);
  await sql`insert into conversations (app_id, conversation_id, conversation_type) values (${app.appId}, ${conversationId}, 'user')`.execute(server.database.db);
  await sql`insert into user_conversations (app_id, uid, conversation_id, conversation_with)
            values (${app.appId}, ${a}, ${conversationId}, ${b}), (${app.appId}, ${b}, ${conversationId}, ${a})`.execute(server.database.db);
  for (let from = 0; from < size; from += 20_000) {
    const to = Math.min(size, from + 20_000) - 1;
    // Each message's stored text, as a send stores it (shownText), unless BENCH_HISTORY_SHOWN=0:
    // rows stored before migration 0017, rendered from their columns.
    const shown: Array<string | null> = [];
    for (let i = from; i <= to; i++) {
      const [sender, receiver] = i % 2 === 0 ? [a, b] : [b, a];
      const message = { conversationId, sender, receiver, receiverType: 'user' as const, category: 'message', type: 'text', tags: [], mentionedUids: [], muid: null };
      const data = { text: `Message ${i} of a long conversation` };
      shown.push(process.env.BENCH_HISTORY_SHOWN === '0' ? null : shownText({ ...message, data, dataJson: JSON.stringify(data) }));
    }
    await sql`insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data, sent_at, shown)
              select ${app.appId}, ${conversationId}, case when i % 2 = 0 then ${a} else ${b} end,
                     case when i % 2 = 0 then ${b} else ${a} end, 'user', 'message', 'text',
                     json_build_object('text', 'Message ' || i || ' of a long conversation'),
                     now() - make_interval(secs => ${size}::int - i), shown
              from (select s.shown, ${from}::int + s.k::int - 1 as i from unnest(${shown}::text[]) with ordinality as s(shown, k)) as g`.execute(server.database.db);
  }
  await sql`update conversations set last_message_id = (select max(id) from messages where app_id = ${app.appId} and conversation_id = ${conversationId})
            where app_id = ${app.appId} and conversation_id = ${conversationId}`.execute(server.database.db);
}
// BENCH_TOKENS=N and BENCH_TOKEN_SECRET: an auth token for each of seed-0 .. seed-<N-1>
// (bench/lib/gateway-tokens.ts), stored as issued tokens are (sha256 hash, masked hint).
const tokens = Number(process.env.BENCH_TOKENS ?? 0);
for (let from = 0; from < Math.min(tokens, seeded); from += 10_000) {
  const uids = Array.from({ length: Math.min(tokens, seeded, from + 10_000) - from }, (_, i) => `seed-${from + i}`);
  const plain = uids.map((uid) => benchToken(process.env.BENCH_TOKEN_SECRET ?? '', uid));
  await sql`insert into auth_tokens (app_id, uid, token_hash, token_hint)
            select ${app.appId}, t.uid, t.hash, t.hint
            from unnest(${uids}::text[], ${plain.map(sha256Hex)}::text[], ${plain.map((token, i) => maskAuthToken(token, uids[i]!))}::text[]) as t(uid, hash, hint)`.execute(server.database.db);
}
await server.database.vacuumAnalyze();
if (process.env.BENCH_WEBHOOK_URL) {
  const ctx = { appId: app.appId, requestId: 'bench', log: silentLogger };
  await server.services.webhooks.create(ctx, { id: 'bench-hook', name: 'Bench', webhookURL: process.env.BENCH_WEBHOOK_URL }, ['message_sent']);
}

// BENCH_MODERATION=rules=10,keywords=10000: the app moderates every text message with that many
// enabled rules (the cost of moderation on the send, bench/moderation-ab.ts). Rule i's condition
// is `text contains` one keyword list (the keywords split evenly over one list per rule); the
// first two rules also have a pattern condition (phone numbers, e-mail addresses). All block,
// and none matches the text the send load sends.
const moderation = Object.fromEntries(
  (process.env.BENCH_MODERATION ?? '')
    .split(',')
    .filter(Boolean)
    .map((part) => [part.split('=')[0]!, Number(part.split('=')[1])]),
) as { rules?: number; keywords?: number };
if (moderation.rules) {
  const ctx = { appId: app.appId, requestId: 'bench', log: silentLogger };
  const rules = moderation.rules;
  const terms = benchKeywords(moderation.keywords ?? 0);
  for (let r = 0; r < rules; r++) {
    const searchTerms = terms.slice(Math.floor((r * terms.length) / rules), Math.floor(((r + 1) * terms.length) / rules));
    const conditions: Array<{ operand: string; category: string; operator: string; value: string[]; isKeywordsReferencePresent?: boolean }> = [];
    if (searchTerms.length > 0) {
      await server.services.keywordLists.create(ctx, { id: `bench-list-${r}`, name: `Bench list ${r}`, category: 'word', searchTerms });
      conditions.push({ operand: 'text', category: 'word', operator: 'contains', value: [`bench-list-${r}`], isKeywordsReferencePresent: true });
    }
    if (r < 2) conditions.push({ operand: 'text', category: 'pattern', operator: 'contains', value: [r === 0 ? PHONE_PATTERN : EMAIL_PATTERN] });
    if (conditions.length === 0) continue;
    await server.services.moderationRules.create(ctx, { id: `bench-rule-${r}`, name: `Bench rule ${r}`, enabled: true, conditions, action: ['blockMessage'] });
  }
}

announceReady({
  port: server.port,
  metricsPort: server.metricsPort ?? null,
  appId: app.appId,
  apiKey: app.apiKey,
  engine: server.database.engine,
  users: seeded,
  addGroups,
  chatGroups,
  histories,
  historyPairs,
  moderation,
});
process.on('SIGTERM', () => {
  void server.close().then(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
});

/**
 * `count` distinct keywords of 3–12 characters, the same each run: a fifth realistic (chat words
 * with prefixes and suffixes), the rest random letters; never a word of the send load's text
 * (bench/lib/send-load.ts), so that no send matches.
 */
function benchKeywords(count: number): string[] {
  let state = 2024;
  const next = () => {
    state = (state + 0x6d2b79f5) | 0;
    const t = Math.imul(state ^ (state >>> 15), 1 | state);
    const u = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return (u ^ (u >>> 14)) >>> 0;
  };
  const pick = <T>(items: readonly T[]): T => items[next() % items.length]!;
  const sent = new Set(
    foldText('Hello there 👋')
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean),
  );
  const vocabulary = (
    'call send talk walk meet move play work read write party dinner lunch coffee train ticket music movie garden ' +
    'weekend holiday summer winter market street house friend family morning evening picture window kitchen station'
  ).split(' ');
  const prefixes = ['', '', 'un', 're', 'over', 'pre', 'mis', 'out'];
  const suffixes = ['s', 'ed', 'ing', 'er', 'ers', 'ly', 'ness', 'less', 'ful', 'ish', 'able'];
  const found = new Set<string>();
  const add = (word: string) => {
    if (word.length >= 3 && word.length <= 12 && !sent.has(word) && !vocabulary.includes(word)) found.add(word);
  };
  for (let tries = 0; found.size < count / 5 && tries < 20 * count; tries++) add(`${pick(prefixes)}${pick(vocabulary)}${pick(suffixes)}`);
  while (found.size < count) add(Array.from({ length: 3 + (next() % 10) }, () => String.fromCharCode(97 + (next() % 26))).join(''));
  return [...found];
}
