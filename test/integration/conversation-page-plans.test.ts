/**
 * A conversation's history page is read by the conversation's index, whatever the statistics
 * say. Here they were taken while one long conversation was all the app had (as after an
 * import, or with autovacuum behind), and a short conversation started after them, with the
 * long one going on: written as `conversation_id = c and id < cursor`, the page was served by
 * the app's primary key, walking backward past every message of the long conversation (the
 * whole app, for a page that the short one cannot fill). The plans are read through
 * auto_explain (test/helpers/plans.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { MessagePagesRepository, type MessageCursor, type MessageFilter } from '../../src/repositories/message-pages.repository.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/db.js';
import { explainingExecutor, scansRun } from '../helpers/plans.js';

const APP = 'plans-app';
const LONG = 'seed-99998:seed-99999';

describe('a conversation’s history page', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: plans read through auto_explain' }, () => {
  let t: TestDatabase;
  let explaining: Awaited<ReturnType<typeof explainingExecutor>>;
  let ids: string[];
  before(async () => {
    t = await createTestDatabase();
    const db = t.database.db;
    const long = () =>
      sql`insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data)
          select ${APP}, ${LONG}, 'seed-99998', 'seed-99999', 'user', 'message', 'text', json_build_object('text', 'm' || i)
          from generate_series(1, 20000) as i`.execute(db);
    await sql`insert into users (app_id, uid, name) select ${APP}, 'u' || i, 'User ' || i from generate_series(1, 5) as i`.execute(db);
    await long();
    await sql`vacuum analyze messages`.execute(db);
    await sql`insert into conversations (app_id, conversation_id, conversation_type) values (${APP}, 'u3:u4', 'user')`.execute(db);
    await sql`insert into user_conversations (app_id, uid, conversation_id, conversation_with)
              values (${APP}, 'u3', 'u3:u4', 'u4'), (${APP}, 'u4', 'u3:u4', 'u3')`.execute(db);
    const short = await sql<{ id: string }>`
      insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data)
      select ${APP}, 'u3:u4', 'u4', 'u3', 'user', 'message', 'text', json_build_object('text', 'x' || i)
      from generate_series(1, 3) as i
      returning id::text`.execute(db);
    ids = short.rows.map((row) => row.id).sort((a, b) => Number(a) - Number(b));
    await long();
    explaining = await explainingExecutor(t.url!);
  });
  after(async () => {
    await explaining?.close();
    await t?.drop();
  });

  async function read(filter: MessageFilter, cursor: MessageCursor, viewer = 'u3'): Promise<{ texts: string[]; scans: string[] }> {
    explaining.plans.length = 0;
    const { page } = await new MessagePagesRepository(explaining.db).readPage(APP, filter, cursor, { viewer });
    const plan = explaining.plans.find((text) => text.includes('from messages')) ?? '';
    return { texts: page.rows.map((row) => (row.data as { text: string }).text), scans: scansRun(plan, 'messages') };
  }

  const cases: Array<[string, MessageCursor, string[]]> = [
    ['the newest', { affix: 'prepend', limit: 50 }, ['x1', 'x2', 'x3']],
    ['before a message', { affix: 'prepend', limit: 50, id: 'last' }, ['x1', 'x2']],
    ['the oldest', { affix: 'append', limit: 2 }, ['x1', 'x2']],
    ['after a message', { affix: 'append', limit: 50, id: 'first' }, ['x2', 'x3']],
  ];
  for (const [name, cursor, texts] of cases) {
    it(`reads ${name} by the conversation’s index`, async () => {
      const id = cursor.id === 'last' ? ids[2] : cursor.id === 'first' ? ids[0] : undefined;
      const read1 = await read({ conversationId: 'u3:u4' }, { ...cursor, ...(id ? { id } : {}) });
      assert.deepEqual(read1.texts, texts);
      assert.ok(read1.scans.length > 0);
      assert.deepEqual(new Set(read1.scans), new Set(['messages_app_conversation']));
    });
  }

  it('reads a user’s conversations each by its index too (list-all-messages on their behalf)', async () => {
    const { texts, scans } = await read({ visibleTo: 'u3' }, { affix: 'prepend', limit: 50 });
    assert.deepEqual(texts, ['x1', 'x2', 'x3']);
    assert.ok(scans.length > 0);
    assert.deepEqual(new Set(scans), new Set(['messages_app_conversation']));
  });
});
