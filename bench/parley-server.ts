// A Parley server for benchmarks: plain HTTP on loopback, one app, seeded users.
// Env: BENCH_ENGINE=pglite|postgres, DATABASE_URL (postgres), BENCH_USERS (how many to seed).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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
const ctx = { appId: app.appId, requestId: 'bench', log: silentLogger };
const seeded = Number(process.env.BENCH_USERS ?? 1000);
for (let i = 0; i < seeded; i++) await server.services.users.create(ctx, { uid: `seed-${i}`, name: `Seed user ${i}` });

announceReady({ port: server.port, appId: app.appId, apiKey: app.apiKey, engine: server.database.engine });
process.on('SIGTERM', () => {
  void server.close().then(() => {
    fs.rmSync(dataDir, { recursive: true, force: true });
    process.exit(0);
  });
});
