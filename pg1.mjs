import { PGlite, types } from '@electric-sql/pglite';
let t=Date.now();
const pg = new PGlite({ parsers: { [types.INT8]: (v) => v } });
await pg.waitReady;
console.log('init ms', Date.now()-t);
await pg.exec(`create table t(id bigserial primary key, ts timestamptz default now(), j json, tags text[], b bigint)`);
await pg.query(`insert into t(j,tags,b) values ($1,$2,$3)`, [JSON.stringify({b:1,a:2}), ['x','y'], '9007199254740993']);
const r = await pg.query(`select *, count(*) over() as c from t`);
console.log(r.rows, typeof r.rows[0].ts);
try { await pg.query(`insert into t(id) values (1)`);} catch(e){ console.log(e.constructor.name, e.code, e.message, e.constraint, e.detail); }
const r2 = await pg.query(`select pg_advisory_lock(1)`); console.log(r2.rows);
t=Date.now();
const file = await pg.dumpDataDir('none'); console.log('dump', Date.now()-t, file.size);
t=Date.now();
const pg2 = new PGlite({ loadDataDir: file }); await pg2.waitReady; console.log('load ms', Date.now()-t, (await pg2.query('select count(*) from t')).rows);
console.log(process.memoryUsage().rss/1e6);
