// The floors: what this machine allows an HTTP server over PostgreSQL at all, for the two
// targets of the message store (docs/performance.md, "Baselines and floors"). Bare Fastify and pg, no Parley:
// - GET /page?id=N: a history page as the lightest possible design would read it: 50 messages
//   stored already rendered (the bench's page messages, ~640 bytes each), read by one indexed
//   statement as one text and written as the body. No entities, receipts, reactions or checks.
// - POST /v3/messages: a send as one single-row INSERT, its own durable commit, answered with
//   the stored row. No checks, conversations or events. POST /coalesced/v3/messages: the same
//   row, but the sends waiting go together in one INSERT, one statement at a time (Parley's own
//   Batcher, as Parley's sends).
// Env: DATABASE_URL, FLOOR_PAGE_ROWS (messages to seed, default 1,000,000).
import Fastify from 'fastify';
import pg from 'pg';
import { coalesced } from '../src/db/batcher.js';
import { announceReady } from './lib/processes.js';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 64, options: '-c jit=off' });
const rows = Number(process.env.FLOOR_PAGE_ROWS ?? 1_000_000);
const entity = (uid: string, extra: Record<string, unknown> = {}) => ({
  entity: { uid, name: `Seed user ${uid}`, role: 'default', status: 'offline', createdAt: 1700000000, metadata: { seeded: true }, ...extra },
  entityType: 'user',
});
// As bench/baseline-server.ts's page messages, the id and text varying.
const message = {
  id: '@ID@',
  conversationId: 'seed-0_user_seed-1',
  sender: 'seed-0',
  receiverType: 'user',
  receiver: 'seed-1',
  category: 'message',
  type: 'text',
  data: { text: 'Message @ID@ of a long conversation', entities: { sender: entity('seed-0'), receiver: entity('seed-1', { conversationId: 'seed-0_user_seed-1' }) } },
  sentAt: 1700000000,
  updatedAt: 1700000000,
};
await pool.query(`create table if not exists floor_pages (
  app_id text not null, conversation_id text collate "C" not null, id bigint not null, rendered text not null,
  primary key (app_id, conversation_id, id))`);
await pool.query(`create table if not exists floor_sends (
  app_id text not null, id bigint generated always as identity, sender text collate "C" not null, receiver text collate "C" not null,
  data json not null, sent_at timestamptz not null default clock_timestamp(), primary key (app_id, id))`);
if ((await pool.query('select 1 from floor_pages limit 1')).rowCount === 0) {
  await pool.query(`insert into floor_pages select 'floor', 'seed-0:seed-1', i, replace($1, '@ID@', i::text) from generate_series(1, ${rows}) as i`, [JSON.stringify(message)]);
  await pool.query('vacuum analyze floor_pages');
}

const app = Fastify({ logger: false });
app.get('/page', async (request, reply) => {
  const before = (request.query as { id?: string }).id ?? String(rows + 1);
  const result = await pool.query({
    name: 'floor-page',
    text: `select string_agg(rendered, ',' order by id) as page, min(id)::text as first, max(id)::text as last, count(*)::int as count
           from (select id, rendered from floor_pages where app_id = $1 and conversation_id = $2 and id < $3 order by id desc limit 50) as p`,
    values: ['floor', 'seed-0:seed-1', before],
  });
  const { page, first, last, count } = result.rows[0] as { page: string | null; first: string; last: string; count: number };
  reply.type('application/json; charset=utf-8');
  return `{"data":[${page ?? ''}],"meta":{"current":{"limit":50,"count":${count}},"previous":{"affix":"prepend","id":"${first}"},"next":{"affix":"append","id":"${last}"}}}`;
});
interface FloorSend {
  sender: string;
  receiver: string;
  data: unknown;
}
const answer = (send: FloorSend, row: { id: string; sent_at: Date }) => ({
  data: { id: row.id, sender: send.sender, receiver: send.receiver, data: send.data, sentAt: Math.floor(row.sent_at.getTime() / 1000) },
});
const sendOf = (request: { body: unknown; headers: Record<string, unknown> }): FloorSend => {
  const body = request.body as { receiver: string; data: unknown };
  return { sender: String(request.headers.onbehalfof), receiver: body.receiver, data: body.data };
};
app.post('/v3/messages', async (request) => {
  const send = sendOf(request);
  const result = await pool.query({
    name: 'floor-send',
    text: 'insert into floor_sends (app_id, sender, receiver, data) values ($1, $2, $3, $4) returning id::text, sent_at',
    values: ['floor', send.sender, send.receiver, JSON.stringify(send.data)],
  });
  return answer(send, result.rows[0]);
});
const sendMany = coalesced(
  async (sends: FloorSend[]) => {
    const result = await pool.query({
      name: 'floor-send-many',
      text: `insert into floor_sends (app_id, sender, receiver, data)
             select 'floor', s.sender, s.receiver, s.data::json from unnest($1::text[], $2::text[], $3::text[]) with ordinality as s (sender, receiver, data, n)
             order by s.n returning id::text, sent_at`,
      values: [sends.map((s) => s.sender), sends.map((s) => s.receiver), sends.map((s) => JSON.stringify(s.data))],
    });
    // Ids are drawn in the rows' order, so the n-th smallest id is the n-th send's.
    const rows = (result.rows as Array<{ id: string; sent_at: Date }>).sort((a, b) => (BigInt(a.id) < BigInt(b.id) ? -1 : 1));
    return sends.map((send, n) => answer(send, rows[n]!));
  },
  { maxBatch: 500, maxInFlight: 1 },
);
app.post('/coalesced/v3/messages', async (request) => sendMany(sendOf(request)));
await app.listen({ port: 0, host: '127.0.0.1' });
announceReady({ port: (app.server.address() as { port: number }).port, pageRows: rows });
process.on(
  'SIGTERM',
  () =>
    void app
      .close()
      .then(() => pool.end())
      .then(() => process.exit(0)),
);
