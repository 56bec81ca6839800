// Import throughput: N messages through POST /v3.0/data_import/messages in batches, against a
// same-run baseline of PostgreSQL's COPY into a table shaped as `messages` (same columns and
// indexes), with the same batches and concurrency. The server's RSS is sampled through the run.
//
//   tsx bench/import.ts [--engine postgres|pglite|all] [--messages 1000000] [--batch 5000] [--concurrency 4]
// (npm run bench runs it too, with its --engine and --only "import").
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { groupConversationKey, userConversationKey } from '../src/domain/conversation-id.js';
import { postgresDatabases } from './lib/postgres.js';
import { postgresCpuMeter, startServerProcess } from './lib/processes.js';

export interface ImportBenchOptions {
  engine: 'postgres' | 'pglite';
  databaseUrl?: string;
  messages: number;
  batch: number;
  concurrency: number;
}

export interface ImportBenchResult {
  engine: string;
  messages: number;
  seconds: number;
  messagesPerSecond: number;
  /** Server RSS: at the start of the import, its peak, and at the end (MB). */
  rssStartMb: number;
  rssPeakMb: number;
  rssEndMb: number;
  /** Records not answered success (must be 0). */
  failed: number;
  /** CPU per message imported, in µs: the server process's, and PostgreSQL's (postgres only). */
  serverCpuMicros: number;
  postgresCpuMicros?: number;
  copyMessagesPerSecond?: number;
  /** PostgreSQL's CPU per message of the COPY baseline, in µs. */
  copyPostgresCpuMicros?: number;
}

const USERS = 10_000;
const CONVERSATIONS = Number(process.env.BENCH_IMPORT_CONVERSATIONS ?? 5_000);
const T0 = 1_600_000_000;
const FAILED = '"success":false';

/**
 * Message i: in conversation i mod 5,000 (4 in 5 are 1:1 between two seeded users, 1 in 5 is
 * one of the 200 seeded groups of 10), sent one second after message i-1, the older half read.
 */
function message(i: number, total: number) {
  const c = i % CONVERSATIONS;
  const sentAt = T0 + i;
  const readAt = i < total / 2 ? sentAt + 60 : undefined;
  const text = `Imported message ${i}: the quick brown fox jumps over the lazy dog`;
  if (c % 5 === 4) {
    const group = ((c / 5) % 200) | 0;
    return { muid: `m${i}`, sender: `seed-${group * 10 + (i % 10)}`, receiverType: 'group', receiver: `chat-${group}`, category: 'message', type: 'text', data: { text }, sentAt, readAt };
  }
  const a = (c * 2) % USERS;
  const [sender, receiver] = i % 2 ? [a, a + 1] : [a + 1, a];
  return { muid: `m${i}`, sender: `seed-${sender}`, receiverType: 'user', receiver: `seed-${receiver}`, category: 'message', type: 'text', data: { text }, sentAt, readAt };
}

/**
 * The messages of each worker: worker w takes the conversations c with c mod workers = w, so
 * a conversation's messages go in order, one call at a time (as `parley import` sends them).
 */
function* batchesOf(worker: number, workers: number, total: number, batch: number): Generator<number[]> {
  let indexes: number[] = [];
  for (let i = worker; i < total; i += workers) {
    // With CONVERSATIONS divisible by workers, i mod workers = (i mod CONVERSATIONS) mod workers.
    indexes.push(i);
    if (indexes.length === batch) {
      yield indexes;
      indexes = [];
    }
  }
  if (indexes.length) yield indexes;
}

function post(agent: http.Agent, port: number, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = http.request({ agent, host: '127.0.0.1', port, method: 'POST', path: '/v3.0/data_import/messages', headers: { ...headers, 'content-type': 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      response.on('error', reject);
    });
    request.on('error', reject);
    request.end(body);
  });
}

export async function importThroughput(options: ImportBenchOptions): Promise<ImportBenchResult> {
  const server = await startServerProcess<{ port: number; appId: string; apiKey: string }>('parley-server.ts', {
    BENCH_ENGINE: options.engine,
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    BENCH_USERS: String(USERS),
    BENCH_HISTORY: '',
    PARLEY_IMPORT_MAX_RECORDS: String(Math.max(10_000, options.batch)),
    // As many calls at once as the bench sends (the server's default is 2 per app).
    PARLEY_IMPORT_MAX_CALLS: String(options.concurrency),
    PARLEY_IMPORT_MAX_CALLS_PER_APP: String(options.concurrency),
  });
  const headers = { appid: server.info.appId, apikey: server.info.apiKey };
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  let failed = 0;
  const rssStartMb = server.rssMb();
  let rssPeakMb = rssStartMb;
  const sampler = setInterval(() => (rssPeakMb = Math.max(rssPeakMb, server.rssMb())), 250);
  // The request bodies are made before the clock starts, as the COPY baseline's files are: the
  // load generator shares the machine's two cores with the server and PostgreSQL.
  const bodies = Array.from({ length: options.concurrency }, (_, worker) =>
    [...batchesOf(worker, options.concurrency, options.messages, options.batch)].map((indexes) => {
      const records: Record<string, unknown> = {};
      for (const i of indexes) records[`m${i}`] = message(i, options.messages);
      return JSON.stringify({ messages: records });
    }),
  );
  const started = performance.now();
  const cpu = { server: server.cpuMeter(), postgres: options.databaseUrl ? postgresCpuMeter() : undefined };
  try {
    await Promise.all(
      bodies.map(async (list) => {
        for (const body of list) {
          const response = await post(agent, server.info.port, headers, body);
          if (response.status !== 200) throw new Error(`import answered ${response.status}: ${response.body.slice(0, 500)}`);
          // Counted in the text, not parsed: the bench's messages cannot contain this string.
          for (let at = response.body.indexOf(FAILED); at !== -1; at = response.body.indexOf(FAILED, at + 1)) failed++;
        }
      }),
    );
  } finally {
    clearInterval(sampler);
    agent.destroy();
  }
  const seconds = (performance.now() - started) / 1000;
  const perMessage = (cpuSeconds: number) => Math.round((cpuSeconds * 1e6) / options.messages);
  const serverCpuMicros = perMessage(cpu.server());
  const postgresCpuMicros = cpu.postgres ? perMessage(cpu.postgres()) : undefined;
  const rssEndMb = server.rssMb();
  rssPeakMb = Math.max(rssPeakMb, rssEndMb);
  await server.stop();
  const result: ImportBenchResult = {
    engine: options.engine,
    messages: options.messages,
    seconds: Math.round(seconds * 10) / 10,
    messagesPerSecond: Math.round(options.messages / seconds),
    rssStartMb,
    rssPeakMb,
    rssEndMb,
    failed,
    serverCpuMicros,
  };
  if (postgresCpuMicros !== undefined) result.postgresCpuMicros = postgresCpuMicros;
  if (options.databaseUrl) {
    const copy = await copyRate(options);
    result.copyMessagesPerSecond = copy.messagesPerSecond;
    result.copyPostgresCpuMicros = copy.postgresCpuMicros;
  }
  return result;
}

/**
 * The COPY baseline: the same messages, as rows of a table created LIKE messages (its columns,
 * identity and indexes), loaded by server-side COPY of one file per batch, each batch its own
 * transaction, from as many connections as the import used. Only the COPY statements are timed.
 */
async function copyRate(options: ImportBenchOptions): Promise<{ messagesPerSecond: number; postgresCpuMicros: number }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-copy-'));
  fs.chmodSync(dir, 0o755);
  const pool = new pg.Pool({ connectionString: options.databaseUrl, max: options.concurrency });
  try {
    await pool.query('create table copy_baseline (like messages including all)');
    const files: string[][] = Array.from({ length: options.concurrency }, () => []);
    for (let worker = 0; worker < options.concurrency; worker++) {
      let n = 0;
      for (const indexes of batchesOf(worker, options.concurrency, options.messages, options.batch)) {
        const lines = indexes.map((i) => {
          const m = message(i, options.messages);
          const conversationId = m.receiverType === 'group' ? groupConversationKey(m.receiver) : userConversationKey(m.sender, m.receiver);
          const sentAt = new Date(m.sentAt * 1000).toISOString();
          const readAt = m.readAt === undefined ? '\\N' : new Date(m.readAt * 1000).toISOString();
          return ['bench', conversationId, m.sender, m.receiver, m.receiverType, m.category, m.type, JSON.stringify(m.data), m.muid, sentAt, readAt, readAt].join('\t');
        });
        const file = path.join(dir, `w${worker}-${n++}.tsv`);
        fs.writeFileSync(file, `${lines.join('\n')}\n`, { mode: 0o644 });
        files[worker]!.push(file);
      }
    }
    // Every connection is opened before the clock starts, so its backend is counted from then on.
    const clients = await Promise.all(files.map(() => pool.connect()));
    const started = performance.now();
    const postgresCpu = postgresCpuMeter();
    await Promise.all(
      files.map(async (list, worker) => {
        const client = clients[worker]!;
        try {
          for (const file of list) {
            await client.query(`copy copy_baseline (app_id, conversation_id, sender, receiver, receiver_type, category, type, data, muid, sent_at, delivered_at, read_at) from '${file}'`);
          }
        } finally {
          client.release();
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const postgresCpuMicros = Math.round((postgresCpu() * 1e6) / options.messages);
    return { messagesPerSecond: Math.round(options.messages / seconds), postgresCpuMicros };
  } finally {
    await pool.query('drop table if exists copy_baseline').catch(() => {});
    await pool.end();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function describe(result: ImportBenchResult): string {
  const copy = result.copyMessagesPerSecond;
  return (
    `import ${result.messages} messages (${result.engine})`.padEnd(40) +
    ` ${String(result.messagesPerSecond).padStart(7)} msg/s in ${result.seconds} s` +
    (copy ? `  ${((result.messagesPerSecond / copy) * 100).toFixed(0)}% of COPY (${copy} msg/s)` : '') +
    `  CPU per message: server ${result.serverCpuMicros} µs` +
    (result.postgresCpuMicros !== undefined ? `, PostgreSQL ${result.postgresCpuMicros} µs (COPY's ${result.copyPostgresCpuMicros} µs)` : '') +
    `  server RSS ${result.rssStartMb} → peak ${result.rssPeakMb} → end ${result.rssEndMb} MB` +
    (result.failed ? `  (${result.failed} records failed)` : '')
  );
}

// Run on its own: creates (and drops) its PostgreSQL database.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      engine: { type: 'string', default: 'postgres' },
      messages: { type: 'string', default: '1000000' },
      batch: { type: 'string', default: '5000' },
      concurrency: { type: 'string', default: '4' },
    },
  });
  const adminUrl = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const engines = values.engine === 'all' ? (['postgres', 'pglite'] as const) : [values.engine as 'postgres' | 'pglite'];
  for (const engine of engines) {
    const common = { engine, messages: Number(values.messages), batch: Number(values.batch), concurrency: Number(values.concurrency) };
    if (engine === 'pglite') {
      console.log(describe(await importThroughput(common)));
      continue;
    }
    const result = await postgresDatabases(adminUrl).withPostgresDatabase((databaseUrl) => importThroughput({ ...common, databaseUrl }));
    console.log(describe(result));
  }
}
