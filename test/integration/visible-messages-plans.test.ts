/**
 * list-all-messages on behalf of a user (MessageFilter.visibleTo) reads each of the user's
 * conversations by its own index. As one filter over the app's messages, PostgreSQL walked the
 * app's primary key backward past every message of other conversations until the page was
 * full: a user with a few messages in an app dominated by one big conversation read all of it.
 * A user with more conversations than VISIBLE_CONVERSATIONS_READ_EACH keeps the walk. The plans
 * are read through auto_explain (test/helpers/plans.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { VISIBLE_CONVERSATIONS_READ_EACH } from '../../src/repositories/message-page-query.js';
import { MessagePagesRepository } from '../../src/repositories/message-pages.repository.js';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/db.js';
import { explainingExecutor, scansRun } from '../helpers/plans.js';

const APP = 'plans-app';

describe('a user’s messages across their conversations', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: plans read through auto_explain' }, () => {
  let t: TestDatabase;
  let explaining: Awaited<ReturnType<typeof explainingExecutor>>;
  before(async () => {
    t = await createTestDatabase();
    const db = t.database.db;
    await sql`insert into users (app_id, uid, name) select ${APP}, 'u' || i, 'User ' || i from generate_series(1, 6) as i`.execute(db);
    await sql`insert into groups (app_id, guid, name, type, owner) values (${APP}, 'g1', 'Group', 'public', 'u5')`.execute(db);
    await sql`insert into group_members (app_id, guid, uid, scope) values (${APP}, 'g1', 'u5', 'admin'), (${APP}, 'g1', 'u3', 'participant')`.execute(db);
    await sql`insert into conversations (app_id, conversation_id, conversation_type)
              values (${APP}, 'u1:u2', 'user'), (${APP}, 'u3:u4', 'user'), (${APP}, 'u5:u6', 'user'), (${APP}, 'group_g1', 'group')`.execute(db);
    await sql`insert into user_conversations (app_id, uid, conversation_id, conversation_with)
              values (${APP}, 'u1', 'u1:u2', 'u2'), (${APP}, 'u2', 'u1:u2', 'u1'), (${APP}, 'u3', 'u3:u4', 'u4'), (${APP}, 'u4', 'u3:u4', 'u3'),
                     (${APP}, 'u5', 'u5:u6', 'u6'), (${APP}, 'u6', 'u5:u6', 'u5')`.execute(db);
    const message = (conversation: string, sender: string, receiver: string, type: string, text: string) =>
      sql`insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data)
          values (${APP}, ${conversation}, ${sender}, ${receiver}, ${type}, 'message', 'text', json_build_object('text', ${text}::text))`.execute(db);
    await message('u3:u4', 'u3', 'u4', 'user', 'first');
    await message('group_g1', 'u5', 'g1', 'group', 'to the group');
    await message('u5:u6', 'u5', 'u6', 'user', 'not u3’s');
    await message('u3:u4', 'u4', 'u3', 'user', 'second');
    // u7 talks with every other user of a crowd larger than the gate, and wrote to the first three.
    const crowd = VISIBLE_CONVERSATIONS_READ_EACH + 1;
    await sql`insert into users (app_id, uid, name) select ${APP}, 'c' || i, 'Crowd ' || i from generate_series(1, ${crowd}) as i`.execute(db);
    await sql`insert into users (app_id, uid, name) values (${APP}, 'u7', 'User 7')`.execute(db);
    await sql`insert into conversations (app_id, conversation_id, conversation_type) select ${APP}, 'c' || i || ':u7', 'user' from generate_series(1, ${crowd}) as i`.execute(db);
    await sql`insert into user_conversations (app_id, uid, conversation_id, conversation_with)
              select ${APP}, 'u7', 'c' || i || ':u7', 'c' || i from generate_series(1, ${crowd}) as i`.execute(db);
    await sql`insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data)
              select ${APP}, 'c' || i || ':u7', 'u7', 'c' || i, 'user', 'message', 'text', json_build_object('text', 'to c' || i)
              from generate_series(1, 3) as i`.execute(db);
    // The app's other messages: one big conversation, newer than all of u3's and u7's.
    await sql`insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data)
              select ${APP}, 'u1:u2', 'u1', 'u2', 'user', 'message', 'text', json_build_object('text', 'm' || i)
              from generate_series(1, 20000) as i`.execute(db);
    await sql`analyze`.execute(db);
    explaining = await explainingExecutor(t.url!);
  });
  after(async () => {
    await explaining?.close();
    await t?.drop();
  });

  it('reads each of them by its own index, not the app’s messages', async () => {
    const pages = new MessagePagesRepository(explaining.db);
    for (const affix of ['prepend', 'append'] as const) {
      explaining.plans.length = 0;
      const { page } = await pages.readPage(APP, { visibleTo: 'u3' }, { affix, limit: 50 }, { viewer: 'u3' });
      const texts = page.rows.map((row) => (row.data as { text: string }).text);
      assert.deepEqual(texts, ['first', 'to the group', 'second']);
      const plan = explaining.plans.find((text) => text.includes('from messages')) ?? '';
      const scans = scansRun(plan, 'messages');
      assert.ok(scans.length > 0, plan);
      assert.deepEqual(new Set(scans), new Set(['messages_app_conversation']), plan);
    }
  });

  it('keeps the walk of the app’s messages for a user with more conversations than the gate', async () => {
    const pages = new MessagePagesRepository(explaining.db);
    explaining.plans.length = 0;
    const { page } = await pages.readPage(APP, { visibleTo: 'u7' }, { affix: 'prepend', limit: 50 }, { viewer: 'u7' });
    assert.deepEqual(
      page.rows.map((row) => (row.data as { text: string }).text),
      ['to c1', 'to c2', 'to c3'],
    );
    const plan = explaining.plans.find((text) => text.includes('from messages')) ?? '';
    assert.ok(!scansRun(plan, 'messages').includes('messages_app_conversation'), plan);
  });
});
