// A Parley server for benchmarks: plain HTTP on loopback, one app, seeded users.
// Env: BENCH_ENGINE=pglite|postgres, DATABASE_URL (postgres), BENCH_USERS (how many to seed).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/domain/context.js';
import { createLogger, startServer } from '../src/server.js';
import { announceReady } from './lib/processes.js';

const engine = process.env.BENCH_ENGINE ?? 'pglite';
const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-'));
const config = loadConfig({
  ...process.env,
  PARLEY_PORT: '0',
  PARLEY_HOST: '127.0.0.1',
  PARLEY_DATA_DIR: dataDir,
  PARLEY_INSECURE_HTTP: '1',
  DATABASE_URL: engine === 'postgres' ? process.env.DATABASE_URL : '',
});
const server = await startServer(config, createLogger({ logLevel: 'warn' }, 2));
const app = server.defaultApp ?? (await server.services.apps.create({ appId: '', requestId: 'bench', log: silentLogger }, { name: 'Bench' }));

// Seed users in bulk (the API path is what the scenarios measure, not the seeding).
const seeded = Number(process.env.BENCH_USERS ?? 1000);
for (let from = 0; from < seeded; from += 50_000) {
  const to = Math.min(seeded, from + 50_000) - 1;
  await sql`insert into users (app_id, uid, name, metadata, tags)
            select ${app.appId}, 'seed-' || i, 'Seed user ' || i, '{"seeded":true}'::json, array['seed']
            from generate_series(${from}::int, ${to}::int) as i`.execute(server.database.db);
}

// Groups: 'members-1k' and 'members-100k' to list, and ADD_GROUPS empty ones to add members to.
const addGroups = Number(process.env.BENCH_ADD_GROUPS ?? 500);
await sql`insert into groups (app_id, guid, name, type)
          select ${app.appId}, 'add-' || i, 'Add group ' || i, 'public' from generate_series(0, ${addGroups - 1}::int) as i`.execute(server.database.db);
for (const size of [1_000, 100_000].filter((n) => n <= seeded)) {
  const guid = `members-${size / 1000}k`;
  await sql`insert into groups (app_id, guid, name, type) values (${app.appId}, ${guid}, ${guid}, 'public')`.execute(server.database.db);
  await sql`insert into group_members (app_id, guid, uid, scope)
            select ${app.appId}, ${guid}, 'seed-' || i, 'participant' from generate_series(0, ${size - 1}::int) as i`.execute(server.database.db);
}
await server.database.vacuumAnalyze();

announceReady({ port: server.port, appId: app.appId, apiKey: app.apiKey, engine: server.database.engine, users: seeded, addGroups });
process.on('SIGTERM', () => {
  void server.close().then(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
});
