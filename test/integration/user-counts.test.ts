import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { UsersRepository } from '../../src/repositories/users.repository.js';
import { createTestApp, uniqueId, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

async function actual(appId: string) {
  const rows = await sql<{ active: string; deactivated: string }>`
    select count(*) filter (where deactivated_at is null) as active,
           count(*) filter (where deactivated_at is not null) as deactivated
    from users where app_id = ${appId}`.execute(t.database.db);
  return { active: Number(rows.rows[0]!.active), deactivated: Number(rows.rows[0]!.deactivated) };
}

async function counted(appId: string) {
  const repo = new UsersRepository(t.database.db);
  return { active: await repo.countAll(appId, 'exclude'), deactivated: await repo.countAll(appId, 'only') };
}

describe('user counters', () => {
  it('match count(*) through batched creates, (de)activation, deletes and rollbacks, per app', async () => {
    const ctxA = { appId: t.appA.appId, requestId: 't', log: t.app.log };
    const ctxB = { appId: t.appB.appId, requestId: 't', log: t.app.log };
    const uids = Array.from({ length: 60 }, () => uniqueId());
    // Concurrent creates in both apps coalesce into shared batches; duplicates are refused.
    await Promise.allSettled([
      ...uids.map((uid) => t.services.users.create(ctxA, { uid, name: 'A' })),
      ...uids.slice(0, 20).map((uid) => t.services.users.create(ctxB, { uid, name: 'B' })),
      ...uids.slice(0, 10).map((uid) => t.services.users.create(ctxA, { uid, name: 'duplicate' })),
    ]);
    await t.services.users.create(ctxA, { uid: uniqueId(), name: 'with token', withAuthToken: true });
    await t.services.users.deactivate(ctxA, uids.slice(0, 15));
    await t.services.users.reactivate(ctxA, uids.slice(0, 5));
    await t.services.users.delete(ctxA, uids[20]!, false);
    await t.services.users.delete(ctxA, uids[21]!, true);
    await t.services.users.delete(ctxA, uids[1]!, true); // a deactivated one
    await t.services.users.update(ctxA, uids[30]!, { name: 'renamed' });
    await t.database.db
      .transaction()
      .execute(async (tx) => {
        await sql`insert into users (app_id, uid, name) values (${t.appA.appId}, ${uniqueId()}, 'rolled back')`.execute(tx);
        throw new Error('roll back');
      })
      .catch(() => undefined);

    for (const appId of [t.appA.appId, t.appB.appId]) {
      assert.deepEqual(await counted(appId), await actual(appId), appId);
    }
    assert.deepEqual(await actual(t.appB.appId), { active: 20, deactivated: 0 });
  });

  it('give the unfiltered list its total', async () => {
    const list = await t.call(t.appA, '/v3/users', { query: { perPage: '1' } });
    const { active } = await actual(t.appA.appId);
    assert.equal(list.json().meta.pagination.total, active);
    const all = await t.call(t.appA, '/v3/users', { query: { perPage: '1', withDeactivated: 'true' } });
    const counts = await actual(t.appA.appId);
    assert.equal(all.json().meta.pagination.total, counts.active + counts.deactivated);
  });
});
