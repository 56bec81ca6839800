/**
 * Work coalesced across requests gives each request its own answer (issue 20, fault 2): one
 * request's data that the database refuses fails that request alone, whichever app sent it.
 * The edge refuses such data first (hostile-input.test.ts); these tests hand it to the
 * coalescing repositories directly, as a bug or a new path might.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCoalescing } from '../../src/container-shared.js';
import { groupConversationKey, userConversationKey } from '../../src/domain/conversation-id.js';
import { MessageBatchesRepository } from '../../src/repositories/message-store/message-batches.repository.js';
import { MessagePagesRepository, type PageRead } from '../../src/repositories/message-pages.repository.js';
import type { NewMessage } from '../../src/repositories/messages.repository.js';
import { UsersRepository } from '../../src/repositories/users.repository.js';
import { body, createTestApp, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const LONE = 'x\ud800';

/** The coalescing the composition root applies, over repositories of the test database. */
function coalescing() {
  const db = t.database.db;
  return createCoalescing({ users: new UsersRepository(db), messagePages: new MessagePagesRepository(db), messageBatches: new MessageBatchesRepository(db) }, t.database.engine);
}

describe("one app's bad request in a coalesced statement", () => {
  it("fails none of another app's concurrent create-users (authOnly key, raw requests)", async () => {
    const n = 200;
    const bad = Array.from({ length: n }, () =>
      t.call(t.appA, '/v3/users', { method: 'POST', key: 'auth', body: `{"uid":"${uniqueId('bad')}","name":"x\\ud800"}`, headers: { 'content-type': 'application/json' } }),
    );
    const good = Array.from({ length: n }, () => t.call(t.appB, '/v3/users', { method: 'POST', key: 'auth', body: { uid: uniqueId('good'), name: 'Good' } }));
    const [badAnswers, goodAnswers] = await Promise.all([Promise.all(bad), Promise.all(good)]);
    assert.deepEqual(new Set(goodAnswers.map((r) => r.statusCode)), new Set([200]), goodAnswers.find((r) => r.statusCode !== 200)?.body);
    assert.deepEqual(new Set(badAnswers.map((r) => r.statusCode)), new Set([400]));
  });

  it('fails only the refused user of a coalesced insert, across apps', async () => {
    const { createUser } = coalescing();
    const uids = Array.from({ length: 40 }, () => uniqueId('iso'));
    const badIndex = 17;
    const settled = await Promise.allSettled(uids.map((uid, n) => createUser({ appId: n % 2 ? t.appA.appId : t.appB.appId, user: { uid, name: n === badIndex ? LONE : `User ${n}` } })));
    settled.forEach((outcome, n) => assert.equal(outcome.status, n === badIndex ? 'rejected' : 'fulfilled', `user ${n}`));
    const stored = await t.database.db.selectFrom('users').select('uid').where('uid', 'in', uids).execute();
    assert.equal(stored.length, uids.length - 1);
  });

  it('answers each coalesced read of active users, the refused one alone failing', async () => {
    const { activeUser } = coalescing();
    const [a] = await newUids(t, t.appA, 1);
    const [b] = await newUids(t, t.appB, 1);
    const asked: Array<[string, string]> = [
      [t.appA.appId, a!],
      [t.appB.appId, LONE],
      [t.appB.appId, b!],
      [t.appA.appId, uniqueId('nobody')],
    ];
    const settled = await Promise.allSettled(asked.map(([appId, uid]) => activeUser({ appId, uid })));
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? (s.value?.uid ?? 'none') : 'rejected')),
      [a, 'rejected', b, 'none'],
    );
  });

  it('answers each coalesced page-version check, the refused one alone failing', async () => {
    const { pageVersion } = coalescing();
    const [a, b] = await newUids(t, t.appA, 2);
    const good = { conversation: { id: userConversationKey(a!, b!), stateUids: [a!, b!] }, uids: [a!, b!], guids: [] };
    const bad = { conversation: { id: LONE, stateUids: [] }, uids: [], guids: [] };
    const settled = await Promise.allSettled([pageVersion({ appId: t.appA.appId, check: good }), pageVersion({ appId: t.appB.appId, check: bad }), pageVersion({ appId: t.appA.appId, check: good })]);
    assert.deepEqual(
      settled.map((s) => s.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
  });

  it('answers each coalesced history page read, the refused one alone failing', async () => {
    const { readPage } = coalescing();
    const [a, b] = await newUids(t, t.appA, 2);
    const page = (appId: string, id: string): PageRead => ({
      appId,
      filter: { conversationId: id },
      cursor: { affix: 'prepend', limit: 10 },
      reads: { viewer: a!, uids: [a!, b!], conversation: { id, stateUids: [a!, b!] } },
    });
    const good = userConversationKey(a!, b!);
    const settled = await Promise.allSettled([readPage(page(t.appA.appId, good)), readPage(page(t.appB.appId, LONE)), readPage(page(t.appA.appId, good))]);
    assert.deepEqual(
      settled.map((s) => s.status),
      ['fulfilled', 'rejected', 'fulfilled'],
    );
  });

  it('stores every other send of a coalesced send statement', async () => {
    const { send } = coalescing();
    const [a, b, c] = await newUids(t, t.appA, 3);
    const [x, y] = await newUids(t, t.appB, 2);
    const group = await newGroup(t, t.appA, {}, a);
    const message = (sender: string, receiver: string, text: string, receiverType: 'user' | 'group' = 'user'): NewMessage => ({
      conversationId: receiverType === 'user' ? userConversationKey(sender, receiver) : groupConversationKey(receiver),
      sender,
      receiver,
      receiverType,
      category: 'message',
      type: 'text',
      dataJson: JSON.stringify({ text }),
      tags: [],
      mentionedUids: [],
      muid: null,
    });
    const sends: Array<[string, NewMessage]> = [
      [t.appA.appId, message(a!, b!, 'one')],
      [t.appB.appId, message(x!, y!, LONE)],
      [t.appA.appId, message(a!, c!, 'two')],
      [t.appB.appId, message(y!, x!, 'three')],
      [t.appA.appId, message(a!, group.guid, 'four', 'group')],
    ];
    const settled = await Promise.allSettled(sends.map(([appId, m]) => send({ appId, message: m })));
    assert.deepEqual(
      settled.map((s) => (s.status === 'fulfilled' ? (s.value.row ? 'stored' : 'refused') : 'failed')),
      ['stored', 'failed', 'stored', 'stored', 'stored'],
    );
    const history = await t.call(t.appB, `/v3/users/${y}/messages`, { onBehalfOf: x! });
    assert.deepEqual(
      body(history).data.map((m: any) => m.data.text),
      ['three'],
    );
  });
});
