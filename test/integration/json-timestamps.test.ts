import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { parseTimestamptz } from '../../src/db/timestamps.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

// Rows that travel as JSON (repositories/json-rows.ts) carry their timestamps in JSON's own form
// (ISO 8601 with the offset): on this engine, in any session time zone, each must read as the
// same instant as its text form, to the millisecond.

let t: TestDatabase;
before(async () => {
  t = await createTestDatabase();
});
after(async () => {
  await t.drop();
});

const INSTANTS = [
  '2026-11-23 13:08:48.464787+00',
  '2026-01-01 21:34:05+00',
  '1999-12-31 23:59:59.5-08',
  '2024-02-29 23:59:59.999999-11',
  '2026-03-04 05:06:07.000001+05:45',
  '1970-01-01 00:00:00+00',
  '2100-06-30 12:00:00.123+00',
];

describe('timestamps inside JSON', () => {
  for (const zone of ['UTC', 'Asia/Kathmandu', 'America/St_Johns']) {
    it(`read as their text form does, in time zone ${zone}`, async () => {
      await t.database.db.connection().execute(async (db) => {
        await sql`select set_config('TimeZone', ${zone}, false)`.execute(db);
        try {
          const rows = await sql<{ json: unknown[]; text: string }>`
            select json_build_array(v.at) as json, v.at::text as text
            from unnest(${INSTANTS}::timestamptz[]) as v(at)`.execute(db);
          assert.equal(rows.rows.length, INSTANTS.length);
          for (const row of rows.rows) {
            const fromJson = parseTimestamptz(row.json[0] as string);
            assert.equal(fromJson.getTime(), parseTimestamptz(row.text).getTime(), `${String(row.json[0])} against ${row.text}`);
          }
          const expected = INSTANTS.map((text) => parseTimestamptz(text).getTime()).sort();
          assert.deepEqual(rows.rows.map((row) => parseTimestamptz(row.json[0] as string).getTime()).sort(), expected);
        } finally {
          await sql`select set_config('TimeZone', 'UTC', false)`.execute(db);
        }
      });
    });
  }
});
