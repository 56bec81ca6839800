import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { UsersRepository } from '../../src/repositories/users.repository.js';
import { createTestApp, uniqueId, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

describe('coalesced reads of active users', () => {
  it('answer each caller its own user, across apps, with deactivated and unknown users absent', async () => {
    const repo = new UsersRepository(t.database.db);
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
    const rows = await Promise.all(asked.map(([appId, uid]) => repo.getActive(appId, uid)));
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
