// The raw-INSERT baseline: single-row INSERTs into a users-shaped table, each its own durable
// commit, from N concurrent connections over the pg driver alone, as prepared statements.
// Prints {"insertsPerSecond", "p50Ms", "p99Ms", "postgresCpuMicros", "clientCpuMicros"} (CPU per
// insert) when done. At one connection, p50Ms is the machine's commit latency (with one round trip).
// Env: DATABASE_URL, BENCH_CONNECTIONS, BENCH_DURATION (seconds).
import crypto from 'node:crypto';
import pg from 'pg';
import { postgresCpuMeter } from './lib/processes.js';

const url = process.env.DATABASE_URL!;
const connections = Number(process.env.BENCH_CONNECTIONS ?? 16);
const durationMs = Number(process.env.BENCH_DURATION ?? 8) * 1000;

const pool = new pg.Pool({ connectionString: url, max: connections });
await pool.query(`create table if not exists raw_insert_baseline (
  app_id text not null, uid text collate "C" not null, name text not null, metadata json,
  tags text[] not null default '{}', created_at timestamptz not null default now(),
  primary key (app_id, uid))`);
const run = crypto.randomBytes(4).toString('hex');
let n = 0;
const latencies: number[] = [];
const end = Date.now() + durationMs;
const started = Date.now();
const cpu = { postgres: postgresCpuMeter(), clientAtStart: process.cpuUsage() };
await Promise.all(
  Array.from({ length: connections }, async () => {
    const client = await pool.connect();
    try {
      while (Date.now() < end) {
        const i = n++;
        const t0 = performance.now();
        await client.query({
          name: 'raw_insert',
          text: 'insert into raw_insert_baseline (app_id, uid, name, metadata) values ($1, $2, $3, $4) returning *',
          values: ['bench', `${run}-${i}`, 'Bench user', JSON.stringify({ n: i })],
        });
        latencies.push(performance.now() - t0);
      }
    } finally {
      client.release();
    }
  }),
);
const seconds = (Date.now() - started) / 1000;
const postgresCpu = cpu.postgres();
const clientCpu = process.cpuUsage(cpu.clientAtStart);
const perInsert = (micros: number) => Math.round(micros / Math.max(1, latencies.length));
latencies.sort((a, b) => a - b);
await pool.query('drop table raw_insert_baseline');
await pool.end();
process.stdout.write(
  `${JSON.stringify({
    insertsPerSecond: Math.round(latencies.length / seconds),
    p50Ms: Math.round((latencies[Math.floor(latencies.length * 0.5)] ?? 0) * 100) / 100,
    p99Ms: Math.round(latencies[Math.floor(latencies.length * 0.99)] ?? 0),
    postgresCpuMicros: perInsert(postgresCpu * 1e6),
    clientCpuMicros: perInsert(clientCpu.user + clientCpu.system),
  })}\n`,
);
