import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createCoalescing } from '../../src/container-shared.js';
import type { Executor } from '../../src/db/transaction.js';
import { groupConversationKey, userConversationKey } from '../../src/domain/conversation-id.js';
import { MessageBatchesRepository } from '../../src/repositories/message-store/message-batches.repository.js';
import { MessagePagesRepository } from '../../src/repositories/message-pages.repository.js';
import type { PageCheck, PageRead } from '../../src/repositories/message-pages.repository.js';
import { SqlParams, type EachStatement } from '../../src/repositories/sql-text.js';
import { UsersRepository } from '../../src/repositories/users.repository.js';
import { createTestApp, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

/** The coalescing the composition root applies, over repositories of the test database. */
function coalescing() {
  const db = t.database.db;
  return createCoalescing({ users: new UsersRepository(db), messagePages: new MessagePagesRepository(db), messageBatches: new MessageBatchesRepository(db) }, t.database.engine);
}

describe('coalesced reads of active users', () => {
  it('answer each caller its own user, across apps, with deactivated and unknown users absent', async () => {
    const repo = new UsersRepository(t.database.db);
    const { activeUser } = coalescing();
    const ctxA = { appId: t.appA.appId, requestId: 't', log: t.app.log };
    const ctxB = { appId: t.appB.appId, requestId: 't', log: t.app.log };
    const [shared, onlyA, deactivated] = [uniqueId('shared'), uniqueId('onlya'), uniqueId('gone')];
    await t.services.users.create(ctxA, { uid: shared, name: 'Shared in A' });
    await t.services.users.create(ctxB, { uid: shared, name: 'Shared in B' });
    await t.services.users.create(ctxA, { uid: onlyA, name: 'Only in A' });
    await t.services.users.create(ctxA, { uid: deactivated, name: 'Deactivated' });
    await t.services.users.deactivate(ctxA, [deactivated]);

    // Submitted in the same turn, so they go together in one statement.
    const asked: Array<[string, string]> = [
      [t.appA.appId, shared],
      [t.appB.appId, shared],
      [t.appA.appId, onlyA],
      [t.appB.appId, onlyA],
      [t.appA.appId, deactivated],
      [t.appA.appId, uniqueId('nobody')],
      [t.appA.appId, shared],
    ];
    const rows = await Promise.all(asked.map(([appId, uid]) => activeUser({ appId, uid })));
    assert.deepEqual(
      rows.map((row) => row && `${row.app_id === t.appA.appId ? 'A' : 'B'}:${row.name}`),
      ['A:Shared in A', 'B:Shared in B', 'A:Only in A', undefined, undefined, undefined, 'A:Shared in A'],
    );
    assert.notEqual(rows[0], rows[6], 'a user asked for twice gives each caller its own row object');
    assert.deepEqual(rows[0], rows[6]);

    // Inside a transaction the read is the transaction's own, not coalesced.
    await t.database.db.transaction().execute(async (tx) => {
      assert.equal((await repo.getActive(t.appA.appId, onlyA, tx))?.name, 'Only in A');
    });
  });
});

describe('coalesced checks of history page versions', () => {
  it('answer each check the version it reads alone, and only a changed conversation moves', async () => {
    const repo = new MessagePagesRepository(t.database.db);
    const { pageVersion } = coalescing();
    const [a, b, c, d] = await newUids(t, t.appA, 4);
    const group = await newGroup(t, t.appA, {}, a);
    const send = (sender: string, receiver: string, receiverType: 'user' | 'group' = 'user') =>
      t.services.messages.send({ appId: t.appA.appId, requestId: 't', log: t.app.log, onBehalfOf: sender }, { receiver, receiverType, category: 'message', type: 'text', data: { text: 'hi' } });
    await send(a!, b!);
    await send(c!, d!);
    await send(a!, group.guid, 'group');
    const checks: PageCheck[] = [
      { conversation: { id: userConversationKey(a!, b!), stateUids: [a!, b!] }, uids: [a!, b!], guids: [] },
      { conversation: { id: userConversationKey(c!, d!), stateUids: [c!, d!] }, uids: [c!, d!], guids: [] },
      { conversation: { id: groupConversationKey(group.guid), stateUids: [a!] }, uids: [a!], guids: [group.guid], membership: { uid: a!, guid: group.guid } },
    ];
    const alone = () =>
      t.database.db.transaction().execute(async (tx) => {
        const versions: string[] = [];
        for (const check of checks) versions.push(await repo.pageVersion(t.appA.appId, check, tx));
        return versions;
      });
    const together = () => Promise.all(checks.map((check) => pageVersion({ appId: t.appA.appId, check })));

    const before = await together();
    assert.deepEqual(before, await alone());
    assert.equal(new Set(before).size, checks.length, 'three conversations, three versions');
    await send(d!, c!);
    const after = await together();
    assert.deepEqual(after, await alone());
    assert.deepEqual([after[0], after[2]], [before[0], before[2]], 'the other conversations keep their versions');
    assert.notEqual(after[1], before[1], 'the conversation with a new message moves');
  });
});

describe('coalesced history page reads', () => {
  it('answer each reader the page it reads alone, across apps and shapes, pages of one shape in one statement', async () => {
    const batches: number[] = [];
    // The repository the composition root coalesces, telling how many pages each call read.
    class CountingPages extends MessagePagesRepository {
      override readPages(items: readonly PageRead[]) {
        batches.push(items.length);
        return super.readPages(items);
      }
    }
    const db = t.database.db;
    const { readPage } = createCoalescing({ users: new UsersRepository(db), messagePages: new CountingPages(db), messageBatches: new MessageBatchesRepository(db) }, t.database.engine);
    const repo = new MessagePagesRepository(db);
    const [a, b, c, d] = await newUids(t, t.appA, 4);
    // The same uids in app B, with a conversation of their own.
    for (const uid of [a!, b!]) await t.services.users.create({ appId: t.appB.appId, requestId: 't', log: t.app.log }, { uid, name: `B's ${uid}` });
    const group = await newGroup(t, t.appA, {}, a);
    const send = (appId: string, sender: string, receiver: string, text: string, receiverType: 'user' | 'group' = 'user') =>
      t.services.messages.send({ appId, requestId: 't', log: t.app.log, onBehalfOf: sender }, { receiver, receiverType, category: 'message', type: 'text', data: { text } });
    for (let i = 0; i < 3; i++) {
      await send(t.appA.appId, a!, b!, `A ${i}`);
      await send(t.appB.appId, b!, a!, `B ${i}`);
      await send(t.appA.appId, c!, d!, `CD ${i}`);
      await send(t.appA.appId, a!, group.guid, `G ${i}`, 'group');
    }
    const oneToOne = (appId: string, x: string, y: string, limit: number): PageRead => {
      const id = userConversationKey(x, y);
      return { appId, filter: { conversationId: id }, cursor: { affix: 'prepend', limit }, reads: { viewer: x, uids: [x, y], conversation: { id, stateUids: [x, y] } } };
    };
    const groupId = groupConversationKey(group.guid);
    const items: PageRead[] = [
      oneToOne(t.appA.appId, a!, b!, 10),
      oneToOne(t.appB.appId, a!, b!, 10),
      oneToOne(t.appA.appId, c!, d!, 10),
      oneToOne(t.appA.appId, a!, b!, 2),
      {
        appId: t.appA.appId,
        filter: { conversationId: groupId },
        cursor: { affix: 'prepend', limit: 10 },
        reads: { viewer: a!, guids: [group.guid], membership: { uid: a!, guid: group.guid }, conversation: { id: groupId, stateUids: [a!] } },
      },
      // Across conversations, no version.
      { appId: t.appA.appId, filter: { visibleTo: a! }, cursor: { affix: 'prepend', limit: 10 }, reads: { viewer: a! } },
    ];
    // The statements they were read with: pages of one shape (here the three 1:1 pages of ten,
    // two apps) in one, each other shape in its own.
    const statements: number[] = [];
    const rowsOfEach = SqlParams.rowsOfEach;
    SqlParams.rowsOfEach = <Row>(tx: Executor, text: EachStatement, params: readonly SqlParams[]) => {
      statements.push(params.length);
      return rowsOfEach.call(SqlParams, tx, text, params) as Promise<Row[][]>;
    };
    // biome-ignore lint/suspicious/noImplicitAnyLet: typed by its assignment below (TypeScript's control-flow typing)
    let together;
    try {
      together = await Promise.all(items.map((item) => readPage(item)));
    } finally {
      SqlParams.rowsOfEach = rowsOfEach;
    }
    assert.deepEqual(statements.sort(), [1, 1, 1, 3]);
    const alone: unknown[] = [];
    for (const item of items) alone.push(await repo.readPage(item.appId, item.filter, item.cursor, item.reads));
    assert.deepEqual(together, alone);
    const texts = together.map((result) => result.page.rows.map((row) => (row.data as { text?: string }).text));
    assert.deepEqual(texts.slice(0, 4), [
      ['A 0', 'A 1', 'A 2'],
      ['B 0', 'B 1', 'B 2'],
      ['CD 0', 'CD 1', 'CD 2'],
      ['A 1', 'A 2'],
    ]);
    assert.equal(
      together[1]!.page.users.every((user) => user.app_id === t.appB.appId && user.name.startsWith("B's")),
      true,
      "app B's page names app B's users",
    );
    assert.equal(together[4]!.page.isMember, true);
    assert.notEqual(together[0]!.versioned!.version, together[1]!.versioned!.version);
    assert.equal(together[5]!.versioned, undefined);
    assert.equal(Math.max(...batches.slice(0, 1)), items.length, 'the six reads went to the repository together');
  });
});
