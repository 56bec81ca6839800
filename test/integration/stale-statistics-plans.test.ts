/**
 * Reads of one conversation's messages go by the conversation's index, whatever the statistics
 * say. Here they were taken while one long conversation was all the app had (as after an import,
 * or with autovacuum behind); two short conversations started after them, with the long one going
 * on. Written as `conversation_id = c`, each read below was served by the app's primary key,
 * walking past every message of the long conversation: a short conversation's history page, a
 * user's messages across their conversations, conversations listed by key, a conversation
 * list's unread counts, the last
 * message moved back after a removal, and a purge's check for conversations left empty
 * (repositories/sql-helpers.ts, conversationMessages). The plans are read through auto_explain
 * (test/helpers/plans.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ConversationStatesRepository } from '../../src/repositories/conversation-states.repository.js';
import { MessagePagesRepository, type MessageCursor, type MessageFilter } from '../../src/repositories/message-pages.repository.js';
import { ConversationsRepository } from '../../src/repositories/message-store/conversations.repository.js';
import { UserPurgeRepository } from '../../src/repositories/user-purge.repository.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/db.js';
import { explainingExecutor, scansRun } from '../helpers/plans.js';

const APP = 'plans-app';
const LONG = 'seed-99998:seed-99999';

describe('reads of one conversation’s messages, with statistics of one long conversation', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: plans read through auto_explain' }, () => {
  let t: TestDatabase;
  let explaining: Awaited<ReturnType<typeof explainingExecutor>>;
  /** The short conversations' message ids, oldest first: u3:u4's (x1..x3) and u3:u5's (y1..y3). */
  const ids: Record<'x' | 'y', string[]> = { x: [], y: [] };
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
    for (const [prefix, other] of [
      ['x', 'u4'],
      ['y', 'u5'],
    ] as const) {
      const conversation = `u3:${other}`;
      await sql`insert into conversations (app_id, conversation_id, conversation_type) values (${APP}, ${conversation}, 'user')`.execute(db);
      await sql`insert into user_conversations (app_id, uid, conversation_id, conversation_with)
                values (${APP}, 'u3', ${conversation}, ${other}), (${APP}, ${other}, ${conversation}, 'u3')`.execute(db);
      const stored = await sql<{ id: string }>`
        insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data)
        select ${APP}, ${conversation}, ${other}, 'u3', 'user', 'message', 'text', json_build_object('text', ${prefix} || i)
        from generate_series(1, 3) as i
        returning id::text`.execute(db);
      ids[prefix] = stored.rows.map((row) => row.id).sort((a, b) => Number(a) - Number(b));
    }
    await long();
    await sql`update conversations c set last_message_id = (select max(id) from messages m where m.app_id = c.app_id and m.conversation_id = c.conversation_id)`.execute(db);
    explaining = await explainingExecutor(t.url!);
  });
  after(async () => {
    await explaining?.close();
    await t?.drop();
  });

  /** The plan of the statement whose text has `marker`, and the scans of `relation` that ran in it. */
  function scans(marker: string, relation: string): string[] {
    const plan = explaining.plans.find((text) => text.includes(marker)) ?? '';
    const run = scansRun(plan, relation);
    assert.ok(run.length > 0, `no scan of ${relation} ran:\n${explaining.plans.join('\n---\n')}`);
    return run;
  }

  async function page(filter: MessageFilter, cursor: MessageCursor): Promise<string[]> {
    explaining.plans.length = 0;
    const { page } = await new MessagePagesRepository(explaining.db).readPage(APP, filter, cursor, { viewer: 'u3' });
    return page.rows.map((row) => (row.data as { text: string }).text);
  }

  const cases: Array<[string, MessageCursor, string[]]> = [
    ['the newest', { affix: 'prepend', limit: 50 }, ['x1', 'x2', 'x3']],
    ['before a message', { affix: 'prepend', limit: 50, id: 'last' }, ['x1', 'x2']],
    ['the oldest', { affix: 'append', limit: 2 }, ['x1', 'x2']],
    ['after a message', { affix: 'append', limit: 50, id: 'first' }, ['x2', 'x3']],
  ];
  for (const [name, cursor, texts] of cases) {
    it(`a history page: ${name}`, async () => {
      const id = cursor.id === 'last' ? ids.x[2] : cursor.id === 'first' ? ids.x[0] : undefined;
      assert.deepEqual(await page({ conversationId: 'u3:u4' }, { ...cursor, ...(id ? { id } : {}) }), texts);
      assert.deepEqual(new Set(scans('from messages', 'messages')), new Set(['messages_app_conversation']));
    });
  }

  it('a user’s messages across their conversations (list-all-messages on their behalf)', async () => {
    assert.deepEqual(await page({ visibleTo: 'u3' }, { affix: 'prepend', limit: 50 }), ['x1', 'x2', 'x3', 'y1', 'y2', 'y3']);
    assert.deepEqual(new Set(scans('from messages', 'messages')), new Set(['messages_app_conversation']));
  });

  it('the messages of conversations listed by key (list-all-messages with a conversationId)', async () => {
    assert.deepEqual(await page({ conversationIn: ['u3:u4', 'u3:u5'] }, { affix: 'prepend', limit: 4 }), ['x3', 'y1', 'y2', 'y3']);
    assert.deepEqual(new Set(scans('from messages', 'messages')), new Set(['messages_app_conversation']));
  });

  for (const unread of [false, true]) {
    it(`a conversation list’s unread counts${unread ? ', keeping only conversations with unread messages' : ''}`, async () => {
      explaining.plans.length = 0;
      const { rows, total } = await new ConversationStatesRepository(explaining.db).list(APP, 'u3', unread ? { unread: true } : {}, { page: 1, perPage: 50 });
      assert.equal(total, 2);
      assert.deepEqual(
        rows.map((row) => [row.conversation_id, Number(row.unread)]),
        [
          ['u3:u5', 3],
          ['u3:u4', 3],
        ],
      );
      assert.deepEqual(new Set(scans('from messages um', 'messages um')), new Set(['messages_app_conversation']));
    });
  }

  it('the last message moved back after a removal', async () => {
    await sql`delete from messages where app_id = ${APP} and id = ${ids.y[2]}::bigint`.execute(t.database.db);
    explaining.plans.length = 0;
    await new ConversationsRepository().moveLastMessageBack(APP, 'u3:u5', [ids.y[2]!], explaining.db);
    assert.deepEqual(new Set(scans('update conversations c', 'messages m')), new Set(['messages_app_conversation']));
    const last = await sql<{ id: string }>`select last_message_id::text as id from conversations where app_id = ${APP} and conversation_id = 'u3:u5'`.execute(t.database.db);
    assert.equal(last.rows[0]!.id, ids.y[1]);
  });

  it('a purge’s check for the conversations it left empty', async () => {
    explaining.plans.length = 0;
    const step = await new UserPurgeRepository().step(APP, 'u5', '0', 100_000, explaining.db);
    assert.equal(step.deleted, 2);
    assert.deepEqual(new Set(scans('delete from conversations c', 'messages m')), new Set(['messages_app_conversation']));
    const left = await sql<{ n: string }>`select count(*)::text as n from conversations where app_id = ${APP} and conversation_id = 'u3:u5'`.execute(t.database.db);
    assert.equal(left.rows[0]!.n, '0');
  });
});
