import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { StatementTemplate } from '../../src/repositories/sql-text.js';
import { createTestApp, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

describe('a statement compiled once (StatementTemplate)', () => {
  it('builds its text once and binds each run its own values, beside the constants of its fragments', async () => {
    let builds = 0;
    const fragment = (name: string) => sql`upper(${name}::text)`;
    const template = new StatementTemplate<{ name: string; n: number }, { greeting: string; twice: number }>(t.database.db, ['name', 'n'], ({ name, n }) => {
      builds++;
      return sql<{ greeting: string; twice: number }>`select ${'hello '} || ${fragment(name)} as greeting, ${n}::int * 2 as twice, ${n}::int as again`;
    });
    assert.deepEqual(await template.execute(t.database.db, { name: 'ada', n: 2 }), [{ greeting: 'hello ADA', twice: 4, again: 2 }]);
    assert.deepEqual(await template.execute(t.database.db, { name: "o'brien", n: 21 }), [{ greeting: "hello O'BRIEN", twice: 42, again: 21 }]);
    assert.equal(builds, 1);
  });

  it('refuses a value that would reach the text other than as a parameter', () => {
    // Inside another string: the value of the first run would be frozen into every run.
    assert.throws(() => new StatementTemplate<{ name: string }, unknown>(t.database.db, ['name'], ({ name }) => sql`select ${`hello ${name}`} as greeting`), /placeholder was used inside a string/);
    // As a literal, or not at all.
    assert.throws(() => new StatementTemplate<{ name: string }, unknown>(t.database.db, ['name'], ({ name }) => sql`select ${sql.lit(String(name))} as greeting`), /name is not a parameter/);
  });
});
