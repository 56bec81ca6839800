import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { openDatabase, type Database } from '../../src/db/database.js';
import { loadMigrations, migrate } from '../../src/db/migrate.js';
import { silentLogger } from '../../src/domain/context.js';
import { createPostgresDatabase, createTestDatabase, TEST_ENGINE, type TestDatabase } from '../helpers/db.js';

let testDb: TestDatabase;
before(async () => {
  testDb = await createTestDatabase();
});
after(async () => {
  await testDb.drop();
});

/** Tables that are not per app: the tenants themselves and the migration ledger. */
const DEPLOYMENT_TABLES = new Set(['apps', 'parley_migrations', 'management_keys']);

describe('migrations', () => {
  it('are numbered without gaps', () => {
    const migrations = loadMigrations();
    assert.ok(migrations.length >= 1);
    migrations.forEach((migration, index) => assert.equal(migration.version, index + 1));
  });

  it('apply once: a second run applies nothing', async () => {
    assert.deepEqual(await migrate(testDb.database, silentLogger), []);
    const rows = await sql<{ version: number }>`select version from parley_migrations order by version`.execute(testDb.database.db);
    assert.deepEqual(
      rows.rows.map((row) => Number(row.version)),
      loadMigrations().map((m) => m.version),
    );
  });

  it('refuse a database migrated by a newer Parley', async () => {
    await sql`insert into parley_migrations (version, name) values (999, 'future')`.execute(testDb.database.db);
    try {
      await assert.rejects(migrate(testDb.database, silentLogger), /newer than this Parley/);
    } finally {
      await sql`delete from parley_migrations where version = 999`.execute(testDb.database.db);
    }
  });

  it('refuse files that are misnamed or leave a gap', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-migrations-'));
    try {
      fs.writeFileSync(path.join(dir, '0001_first.sql'), 'select 1;');
      fs.writeFileSync(path.join(dir, '0003_third.sql'), 'select 1;');
      assert.throws(() => loadMigrations(dir), /without gaps/);
      fs.writeFileSync(path.join(dir, '2-bad.sql'), 'select 1;');
      assert.throws(() => loadMigrations(dir), /NNNN_name/);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });

  it('put app_id first in every key and index of every per-app table', async () => {
    const indexes = await sql<{ table: string; index: string; first: string }>`
      select t.relname as table, i.relname as index, a.attname as first
      from pg_index x
      join pg_class t on t.oid = x.indrelid
      join pg_class i on i.oid = x.indexrelid
      join pg_namespace n on n.oid = t.relnamespace
      left join pg_attribute a on a.attrelid = t.oid and a.attnum = x.indkey[0]
      where n.nspname = current_schema()`.execute(testDb.database.db);
    const perApp = indexes.rows.filter((row) => !DEPLOYMENT_TABLES.has(row.table));
    assert.ok(perApp.length >= 4);
    for (const row of perApp) assert.equal(row.first, 'app_id', `${row.table}.${row.index} starts with ${row.first}`);
  });
});

describe('migrations under concurrency', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only: PGlite is one process' }, () => {
  it('several nodes starting at once apply each migration exactly once', async () => {
    const created = await createPostgresDatabase();
    const nodes = await Promise.all(Array.from({ length: 4 }, () => openDatabase({ engine: 'postgres', url: created.url, poolSize: 2, log: silentLogger })));
    try {
      const applied = await Promise.all(nodes.map((node) => migrate(node, silentLogger)));
      assert.deepEqual(
        applied.flat().sort((a, b) => a - b),
        loadMigrations().map((m) => m.version),
      );
    } finally {
      await Promise.all(nodes.map((node) => node.close()));
      await created.drop();
    }
  });
});

describe('both engines', () => {
  it('read bigint as a string of digits', async () => {
    const row = await sql<{ n: unknown }>`select 9007199254740993::bigint as n`.execute(testDb.database.db);
    assert.equal(row.rows[0]!.n, '9007199254740993');
  });
});

describe('migration 0012: conversation keys', () => {
  /** A database migrated up to `version` only, on the engine under test. */
  async function databaseAt(version: number): Promise<{ database: Database; drop(): Promise<void> }> {
    if (TEST_ENGINE === 'postgres') {
      const created = await createPostgresDatabase();
      const database = await openDatabase({ engine: 'postgres', url: created.url, poolSize: 2, log: silentLogger });
      await migrate(database, silentLogger, loadMigrations().slice(0, version));
      return { database, drop: async () => (await database.close(), await created.drop()) };
    }
    const database = await openDatabase({ engine: 'pglite', log: silentLogger });
    await migrate(database, silentLogger, loadMigrations().slice(0, version));
    return { database, drop: () => database.close() };
  }

  it('splits the conversations that shared a vendor id, with their messages, sides, states and last messages', async () => {
    const { database, drop } = await databaseAt(11);
    const db = database.db;
    try {
      // As 0011 stored them: users a + b_user_c and a_user_b + c shared `a_user_b_user_c`; group
      // x_user_y and users group_x + y shared `group_x_user_y`.
      await sql`insert into apps (id, name, region) values ('m12', 'M12', 'us')`.execute(db);
      for (const uid of ['a', 'b_user_c', 'a_user_b', 'c', 'group_x', 'y', 'm']) {
        await sql`insert into users (app_id, uid, name) values ('m12', ${uid}, ${uid})`.execute(db);
      }
      await sql`insert into groups (app_id, guid, name, type) values ('m12', 'x_user_y', 'X', 'public')`.execute(db);
      await sql`insert into group_members (app_id, guid, uid, scope) values ('m12', 'x_user_y', 'm', 'admin')`.execute(db);
      const message = async (conversation: string, sender: string, receiver: string, type: string, text: string) =>
        (
          await sql<{ id: string }>`insert into messages (app_id, conversation_id, sender, receiver, receiver_type, category, type, data)
            values ('m12', ${conversation}, ${sender}, ${receiver}, ${type}, 'message', 'text', ${JSON.stringify({ text })}::json)
            returning id::text as id`.execute(db)
        ).rows[0]!.id;
      const secret = await message('a_user_b_user_c', 'a', 'b_user_c', 'user', 'secret');
      const reply = await message('a_user_b_user_c', 'b_user_c', 'a', 'user', 'reply');
      const other = await message('a_user_b_user_c', 'a_user_b', 'c', 'user', 'other');
      const hello = await message('group_x_user_y', 'm', 'x_user_y', 'group', 'hello group');
      const privately = await message('group_x_user_y', 'group_x', 'y', 'user', 'private');
      await sql`insert into conversations (app_id, conversation_id, conversation_type, last_message_id) values
        ('m12', 'a_user_b_user_c', 'user', ${other}::bigint), ('m12', 'group_x_user_y', 'group', ${privately}::bigint)`.execute(db);
      await sql`insert into user_conversations (app_id, uid, conversation_id, conversation_with) values
        ('m12', 'a', 'a_user_b_user_c', 'b_user_c'), ('m12', 'b_user_c', 'a_user_b_user_c', 'a'),
        ('m12', 'a_user_b', 'a_user_b_user_c', 'c'), ('m12', 'c', 'a_user_b_user_c', 'a_user_b'),
        ('m12', 'group_x', 'group_x_user_y', 'y'), ('m12', 'y', 'group_x_user_y', 'group_x')`.execute(db);
      await sql`insert into conversation_states (app_id, uid, conversation_id, read_message_id) values
        ('m12', 'c', 'a_user_b_user_c', ${other}::bigint), ('m12', 'a', 'a_user_b_user_c', ${reply}::bigint),
        ('m12', 'm', 'group_x_user_y', ${hello}::bigint), ('m12', 'y', 'group_x_user_y', ${privately}::bigint)`.execute(db);

      assert.deepEqual(await migrate(database, silentLogger, loadMigrations().slice(0, 12)), [12]);

      const messages = await sql<{ id: string; conversation_id: string }>`
        select id::text as id, conversation_id from messages where app_id = 'm12' order by id`.execute(db);
      assert.deepEqual(messages.rows, [
        { id: secret, conversation_id: 'a:b_user_c' },
        { id: reply, conversation_id: 'a:b_user_c' },
        { id: other, conversation_id: 'a_user_b:c' },
        { id: hello, conversation_id: 'group_x_user_y' },
        { id: privately, conversation_id: 'group_x:y' },
      ]);
      const conversations = await sql<{ conversation_id: string; conversation_type: string; last: string | null }>`
        select conversation_id, conversation_type, last_message_id::text as last from conversations where app_id = 'm12' order by conversation_id`.execute(db);
      assert.deepEqual(conversations.rows, [
        { conversation_id: 'a:b_user_c', conversation_type: 'user', last: reply },
        { conversation_id: 'a_user_b:c', conversation_type: 'user', last: other },
        { conversation_id: 'group_x:y', conversation_type: 'user', last: privately },
        { conversation_id: 'group_x_user_y', conversation_type: 'group', last: hello },
      ]);
      const sides = await sql<{ uid: string; conversation_id: string }>`
        select uid, conversation_id from user_conversations where app_id = 'm12' order by uid`.execute(db);
      assert.deepEqual(sides.rows, [
        { uid: 'a', conversation_id: 'a:b_user_c' },
        { uid: 'a_user_b', conversation_id: 'a_user_b:c' },
        { uid: 'b_user_c', conversation_id: 'a:b_user_c' },
        { uid: 'c', conversation_id: 'a_user_b:c' },
        { uid: 'group_x', conversation_id: 'group_x:y' },
        { uid: 'y', conversation_id: 'group_x:y' },
      ]);
      const states = await sql<{ uid: string; conversation_id: string; read: string }>`
        select uid, conversation_id, read_message_id::text as read from conversation_states where app_id = 'm12' order by uid, conversation_id`.execute(db);
      // y's state stood for the group's id too: the pair's copy is theirs; the group's stays (unused).
      assert.deepEqual(states.rows, [
        { uid: 'a', conversation_id: 'a:b_user_c', read: reply },
        { uid: 'c', conversation_id: 'a_user_b:c', read: other },
        { uid: 'm', conversation_id: 'group_x_user_y', read: hello },
        { uid: 'y', conversation_id: 'group_x:y', read: privately },
        { uid: 'y', conversation_id: 'group_x_user_y', read: privately },
      ]);
    } finally {
      await drop();
    }
  });
});
