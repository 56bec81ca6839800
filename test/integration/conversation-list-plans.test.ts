/**
 * A conversation list counts each conversation's unread messages (and, with `unread`, keeps
 * those that have some) by the conversation's own index. The count's rows are a range of
 * (conversation, id) from the user's read mark; when the statistics say the app's messages are
 * all in one conversation (analysed while one long conversation was all there was, as after an
 * import), PostgreSQL saw no gain in the conversation's index over the app's primary key, and
 * for a conversation never read (mark 0) walked the app's messages from its first (40 ms a
 * conversation at 100,000 messages, docs/performance.md). The plans are read through
 * auto_explain (test/helpers/plans.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { ConversationStatesRepository } from '../../src/repositories/conversation-states.repository.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/db.js';
import { explainingExecutor, scansRun } from '../helpers/plans.js';

const APP = 'plans-app';

describe('a conversation list’s unread counts', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: plans read through auto_explain' }, () => {
  let t: TestDatabase;
  let explaining: Awaited<ReturnType<typeof explainingExecutor>>;
  before(async () => {
    t = await createTestDatabase();
    const db = t.database.db;
    await sql`insert into users (app_id, uid, name) select ${APP}, 'u' || i, 'User ' || i from generate_series(1, 5) as i`.execute(db);
    // One long conversation (long ids make its index larger than the primary key), analysed alone.
    await sql`insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data)
              select ${APP}, 'seed-99998:seed-99999', 'seed-99998', 'seed-99999', 'user', 'message', 'text', json_build_object('text', 'm' || i)
              from generate_series(1, 20000) as i`.execute(db);
    await sql`vacuum analyze messages`.execute(db);
    // Then u3's two conversations, never read: three messages to u3 in each.
    await sql`insert into conversations (app_id, conversation_id, conversation_type) values (${APP}, 'u3:u4', 'user'), (${APP}, 'u3:u5', 'user')`.execute(db);
    await sql`insert into user_conversations (app_id, uid, conversation_id, conversation_with)
              values (${APP}, 'u3', 'u3:u4', 'u4'), (${APP}, 'u4', 'u3:u4', 'u3'), (${APP}, 'u3', 'u3:u5', 'u5'), (${APP}, 'u5', 'u3:u5', 'u3')`.execute(db);
    await sql`insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data)
              select ${APP}, c, case c when 'u3:u4' then 'u4' else 'u5' end, 'u3', 'user', 'message', 'text', '{"text":"x"}'
              from unnest(array['u3:u4', 'u3:u5']) as c, generate_series(1, 3)`.execute(db);
    await sql`update conversations c set last_message_id = (select max(id) from messages m where m.app_id = c.app_id and m.conversation_id = c.conversation_id)`.execute(db);
    explaining = await explainingExecutor(t.url!);
  });
  after(async () => {
    await explaining?.close();
    await t?.drop();
  });

  /** The indexes of the scans of `messages um` (the unread messages) that ran in the list's plan. */
  const unreadScans = () => scansRun(explaining.plans.find((text) => text.includes('from messages um')) ?? '', 'messages um');

  for (const unread of [false, true]) {
    it(`counts them by the conversation’s index${unread ? ', keeping only conversations with unread messages' : ''}`, async () => {
      const states = new ConversationStatesRepository(explaining.db);
      explaining.plans.length = 0;
      const { rows, total } = await states.list(APP, 'u3', unread ? { unread: true } : {}, { page: 1, perPage: 50 });
      assert.equal(total, 2);
      assert.deepEqual(rows.map((row) => [row.conversation_id, Number(row.unread)]), [['u3:u5', 3], ['u3:u4', 3]]);
      const scans = unreadScans();
      assert.ok(scans.length > 0, explaining.plans.join('\n---\n'));
      assert.deepEqual(new Set(scans), new Set(['messages_app_conversation']), explaining.plans.join('\n---\n'));
    });
  }
});
