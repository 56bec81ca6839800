// npm run bench: load scenarios against Parley, each reported as a ratio to a baseline measured
// in the same run (these machines are shared and noisy, so absolute numbers mean little).
//
//   npm run bench [-- --engine pglite|postgres|all] [--duration 8] [--connections 16] [--only name]
//
// Each server runs in its own process; autocannon drives it from this one, over loopback.
import crypto from 'node:crypto';
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { runLoad, type LoadResult } from './lib/load.js';
import { startServerProcess } from './lib/processes.js';

const { values } = parseArgs({
  options: {
    engine: { type: 'string', default: 'all' },
    duration: { type: 'string', default: '8' },
    connections: { type: 'string', default: '16' },
    only: { type: 'string' },
  },
});
const duration = Number(values.duration);
const connections = Number(values.connections);
const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

interface Row {
  scenario: string;
  engine: string;
  result: LoadResult;
  baseline: string;
  ratio: number;
}
const rows: Row[] = [];

async function postgresReachable(): Promise<boolean> {
  const client = new pg.Client({ connectionString: ADMIN_URL, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.end();
    return true;
  } catch {
    return false;
  }
}

async function withPostgresDatabase<T>(run: (url: string) => Promise<T>): Promise<T> {
  const name = `parley_bench_${crypto.randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  try {
    const url = new URL(ADMIN_URL);
    url.pathname = `/${name}`;
    return await run(url.toString());
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

function report(scenario: string, engine: string, result: LoadResult, baselineName: string, baseline: LoadResult) {
  const ratio = result.requestsPerSecond / baseline.requestsPerSecond;
  rows.push({ scenario, engine, result, baseline: baselineName, ratio });
  const flags = result.errors || result.non2xx ? `  (${result.errors} errors, ${result.non2xx} non-2xx)` : '';
  console.log(
    `${scenario.padEnd(34)} ${engine.padEnd(9)} ${String(result.requestsPerSecond).padStart(7)} req/s  ` +
      `p50 ${String(result.p50Ms).padStart(4)} ms  p99 ${String(result.p99Ms).padStart(4)} ms  ` +
      `${(ratio * 100).toFixed(0).padStart(4)}% of ${baselineName}${flags}`,
  );
}

const wanted = (name: string) => !values.only || name.includes(values.only);

// --- baseline -----------------------------------------------------------------------------
const baselineServer = await startServerProcess<{ port: number }>('baseline-server.ts');
const baseline = await runLoad({ url: `http://127.0.0.1:${baselineServer.info.port}/v3/users/bench-user`, connections, durationSeconds: duration });
await baselineServer.stop();
console.log(`baseline: no-database Fastify, ${baseline.requestsPerSecond} req/s (p99 ${baseline.p99Ms} ms), ${connections} connections, ${duration} s per scenario\n`);

// --- Parley scenarios ---------------------------------------------------------------------
async function parleyScenarios(engine: 'pglite' | 'postgres', databaseUrl?: string) {
  const server = await startServerProcess<{ port: number; appId: string; apiKey: string }>('parley-server.ts', {
    BENCH_ENGINE: engine,
    ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
    BENCH_USERS: '1000',
  });
  const base = `http://127.0.0.1:${server.info.port}`;
  const headers = { appid: server.info.appId, apikey: server.info.apiKey };
  try {
    if (wanted('get user')) {
      report('get user', engine, await runLoad({ url: `${base}/v3/users/seed-500`, connections, durationSeconds: duration, headers }), 'baseline', baseline);
    }
    if (wanted('list users')) {
      const result = await runLoad({ url: `${base}/v3/users?perPage=100&page=3`, connections, durationSeconds: duration, headers });
      report('list users (100 per page)', engine, result, 'baseline', baseline);
    }
    if (wanted('create user')) {
      let n = 0;
      const tag = crypto.randomBytes(3).toString('hex');
      const result = await runLoad({
        url: `${base}/v3/users`,
        method: 'POST',
        connections,
        durationSeconds: duration,
        headers,
        body: () => JSON.stringify({ uid: `bench-${tag}-${n++}`, name: 'Bench user', metadata: { n } }),
      });
      report('create user', engine, result, 'baseline', baseline);
    }
    console.log(`  server RSS after the ${engine} scenarios: ${server.rssMb()} MB`);
  } finally {
    await server.stop();
  }
}

const engines = values.engine === 'all' ? ['pglite', 'postgres'] : [values.engine!];
for (const engine of engines) {
  if (engine === 'postgres') {
    if (!(await postgresReachable())) {
      console.log(`postgres: not reachable at ${ADMIN_URL}; skipped`);
      continue;
    }
    await withPostgresDatabase((url) => parleyScenarios('postgres', url));
  } else {
    await parleyScenarios('pglite');
  }
}

fs.mkdirSync('.bench', { recursive: true });
fs.writeFileSync('.bench/latest.json', `${JSON.stringify({ at: new Date().toISOString(), connections, duration, baseline, rows }, null, 2)}\n`);
console.log('\nresults written to .bench/latest.json');
