/**
 * page_version (migrations 0009, 0016) looks up each row a page's version reads by its key,
 * however it is called. A history page calls it with uids read from its messages (text COLLATE
 * "C", as every id column is); before 0016 that made every `app_id = p_app` comparison "C"
 * against the default-collation key, and each lookup a sequential scan of its table. The plans
 * of the function's statements are read through auto_explain, sent to this session as notices.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/db.js';
import { explainingExecutor } from '../helpers/plans.js';

describe('page_version’s lookups', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: plans read through auto_explain' }, () => {
  let t: TestDatabase;
  let explaining: Awaited<ReturnType<typeof explainingExecutor>>;
  before(async () => {
    t = await createTestDatabase();
    // Enough users that a key lookup is the only sensible plan.
    await sql`insert into users (app_id, uid, name) select 'plans-app', 'u' || i, 'User ' || i from generate_series(1, 20000) as i`.execute(t.database.db);
    await sql`analyze users`.execute(t.database.db);
    explaining = await explainingExecutor(t.url!);
  });
  after(async () => {
    await explaining?.close();
    await t?.drop();
  });

  it('finds a page’s users by their primary key when the uids come from an id column (as a page passes them)', async () => {
    const plans = explaining.plans;
    plans.length = 0;
    const result = await sql<{ version: string }>`select page_version('plans-app', 'u19999:u20000',
         array(select uid from users where app_id = 'plans-app' and uid = any(${['u19999', 'u20000']}::text[])), '{}', '{}', null, null) as version`.execute(explaining.db);
    assert.match(result.rows[0]!.version, /^[0-9a-f]{32}$/);
    const lookups = plans.filter((plan) => plan.includes('FROM users u WHERE'));
    assert.equal(lookups.length, 2, plans.join('\n---\n'));
    for (const plan of lookups) {
      assert.match(plan, /Index Scan using users_pkey on users u/);
      assert.doesNotMatch(plan, /Seq Scan on users/);
    }
  });
});
