/**
 * page_version (migrations 0009, 0016) looks up each row a page's version reads by its key,
 * however it is called. A history page calls it with uids read from its messages (text COLLATE
 * "C", as every id column is); before 0016 that made every `app_id = p_app` comparison "C"
 * against the default-collation key, and each lookup a sequential scan of its table. The plans
 * of the function's statements are read through auto_explain, sent to this session as notices.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { sql } from 'kysely';
import { createTestDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/db.js';

describe('page_version’s lookups', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: plans read through auto_explain' }, () => {
  let t: TestDatabase;
  let client: pg.Client;
  const plans: string[] = [];
  before(async () => {
    t = await createTestDatabase();
    // Enough users that a key lookup is the only sensible plan.
    await sql`insert into users (app_id, uid, name) select 'plans-app', 'u' || i, 'User ' || i from generate_series(1, 20000) as i`.execute(t.database.db);
    await sql`analyze users`.execute(t.database.db);
    client = new pg.Client({ connectionString: t.url });
    await client.connect();
    client.on('notice', (notice) => plans.push(notice.message ?? ''));
    await client.query("load 'auto_explain'");
    await client.query('set auto_explain.log_min_duration = 0');
    await client.query('set auto_explain.log_nested_statements = on');
    await client.query('set client_min_messages = log');
  });
  after(async () => {
    await client?.end();
    await t?.drop();
  });

  it('finds a page’s users by their primary key when the uids come from an id column (as a page passes them)', async () => {
    plans.length = 0;
    const result = await client.query<{ version: string }>(
      `select page_version('plans-app', 'u19999:u20000',
         array(select uid from users where app_id = 'plans-app' and uid = any($1::text[])), '{}', '{}', null, null) as version`,
      [['u19999', 'u20000']],
    );
    assert.match(result.rows[0]!.version, /^[0-9a-f]{32}$/);
    const lookups = plans.filter((plan) => plan.includes('FROM users u WHERE'));
    assert.equal(lookups.length, 2, plans.join('\n---\n'));
    for (const plan of lookups) {
      assert.match(plan, /Index Scan using users_pkey on users u/);
      assert.doesNotMatch(plan, /Seq Scan on users/);
    }
  });
});
