import { Kysely, PostgresDialect, sql, CompiledQuery } from 'kysely';
import pg from 'pg';
import type { DB } from '../src/db/schema.js';
const db = new Kysely<DB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ max: 1 }) }) });
function time(name: string, n: number, fn: () => unknown) {
  for (let i = 0; i < 2000; i++) fn();
  const t = performance.now(); for (let i = 0; i < n; i++) fn(); const us = (performance.now() - t) * 1000 / n;
  console.log(name.padEnd(30), us.toFixed(2), 'µs');
}
time('kysely insert compile', 50000, () => db.insertInto('users').values({ app_id: 'a', uid: 'u', name: 'n', avatar: null, link: null, role: 'default', status_message: null, metadata: '{}', tags: [], created_at: new Date(), last_active_at: null, deactivated_at: null }).returningAll().compile());
time('kysely select compile', 50000, () => db.selectFrom('users').selectAll().where('app_id', '=', 'a').where('uid', '=', 'u').where('deactivated_at', 'is', null).compile());
time('kysely join compile', 50000, () => db.selectFrom('apps').leftJoin('api_keys', (j) => j.onRef('api_keys.app_id', '=', 'apps.id').on('api_keys.key_hash', '=', 'h')).select(['apps.id', 'api_keys.scope']).where('apps.id', '=', 'a').compile());
time('sql tag compile', 50000, () => sql`select * from users where app_id = ${'a'} and uid = ${'u'}`.compile(db));
time('CompiledQuery.raw', 50000, () => CompiledQuery.raw('select * from users where app_id = $1 and uid = $2', ['a', 'u']));
import crypto from 'node:crypto';
time('sha256', 50000, () => crypto.createHash('sha256').update('0123456789abcdef0123456789abcdef01234567').digest('hex'));
time('randomUUID', 50000, () => crypto.randomUUID());
await db.destroy();
