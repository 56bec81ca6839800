// Import memory: N clients each send one maximal data import call at once (the most records a
// call takes, filling the body limit), retrying after 429 as `parley import` does, while the
// server's RSS is sampled. Run with the server's default bound on calls in flight, and with the
// bound raised to N (as if there were none), so the two peaks compare in one run.
//
//   tsx bench/import-memory.ts [--engine postgres|pglite] [--calls 8]
// (npm run bench runs it too, with its --engine and --only "import memory").
import http from 'node:http';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { DEFAULT_IMPORT_BODY_LIMIT, DEFAULT_IMPORT_CONCURRENCY, DEFAULT_IMPORT_MAX_RECORDS } from '../src/config.js';
import { postgresDatabases } from './lib/postgres.js';
import { startServerProcess } from './lib/processes.js';

export interface ImportMemoryResult {
  engine: string;
  calls: number;
  /** The bound on import calls in flight per server the run used. */
  perServer: number;
  recordsPerCall: number;
  bodyMb: number;
  /** Answers: 200s, and 429s that were retried. */
  ok: number;
  refused: number;
  seconds: number;
  rssStartMb: number;
  rssPeakMb: number;
}

const SEEDED_USERS = 1_000;

/** One maximal call's body: DEFAULT_IMPORT_MAX_RECORDS messages, their texts filling the body limit. */
function maximalBody(call: number): string {
  const sentAt = Math.floor(Date.now() / 1000) - 86_400;
  const record = (i: number, text: string) => ({
    muid: `mem-${call}-${i}`,
    sender: `seed-${i % SEEDED_USERS}`,
    receiverType: 'user',
    receiver: `seed-${(i + 1) % SEEDED_USERS}`,
    category: 'message',
    type: 'text',
    data: { text },
    sentAt,
  });
  const overhead = JSON.stringify(record(DEFAULT_IMPORT_MAX_RECORDS, '')).length + 16;
  const textLength = Math.floor((DEFAULT_IMPORT_BODY_LIMIT * 0.99) / DEFAULT_IMPORT_MAX_RECORDS) - overhead;
  const text = 'x'.repeat(textLength);
  const records: Record<string, unknown> = {};
  for (let i = 0; i < DEFAULT_IMPORT_MAX_RECORDS; i++) records[`mem-${call}-${i}`] = record(i, text);
  return JSON.stringify({ messages: records });
}

function post(port: number, headers: Record<string, string>, body: string): Promise<{ status: number; retryAfter: number }> {
  return new Promise((resolve, reject) => {
    let answered: { status: number; retryAfter: number } | undefined;
    const request = http.request({ host: '127.0.0.1', port, method: 'POST', path: '/v3/data_import/messages', headers: { ...headers, 'content-type': 'application/json' } }, (response) => {
      answered = { status: response.statusCode ?? 0, retryAfter: Number(response.headers['retry-after'] ?? 1) };
      response.resume();
      response.on('end', () => resolve(answered!));
      response.on('error', () => resolve(answered!));
    });
    // A refused call is answered before its body is read, and the rest of the upload is cut:
    // the write then fails, after the answer or before it arrives.
    // The cut upload may fail on the socket after the request let go of it.
    request.on('socket', (socket) => socket.on('error', () => {}));
    request.on('error', (error: NodeJS.ErrnoException) => {
      if (answered) resolve(answered);
      else if (error.code === 'EPIPE' || error.code === 'ECONNRESET') resolve({ status: 429, retryAfter: 1 });
      else reject(error);
    });
    request.end(body);
  });
}

export async function importMemory(options: { engine: 'postgres' | 'pglite'; databaseUrl?: string; calls: number; perServer?: number }): Promise<ImportMemoryResult> {
  const perServer = options.perServer ?? DEFAULT_IMPORT_CONCURRENCY.perServer;
  const server = await startServerProcess<{ port: number; appId: string; apiKey: string }>('parley-server.ts', {
    BENCH_ENGINE: options.engine,
    ...(options.databaseUrl ? { DATABASE_URL: options.databaseUrl } : {}),
    BENCH_USERS: String(SEEDED_USERS),
    BENCH_HISTORY: '',
    PARLEY_IMPORT_MAX_CALLS: String(perServer),
    PARLEY_IMPORT_MAX_CALLS_PER_APP: String(perServer),
  });
  const headers = { appid: server.info.appId, apikey: server.info.apiKey };
  const bodies = Array.from({ length: options.calls }, (_, call) => maximalBody(call));
  const rssStartMb = server.rssMb();
  let rssPeakMb = rssStartMb;
  const sampler = setInterval(() => (rssPeakMb = Math.max(rssPeakMb, server.rssMb())), 100);
  let ok = 0;
  let refused = 0;
  const started = performance.now();
  try {
    await Promise.all(
      bodies.map(async (body) => {
        for (;;) {
          const answer = await post(server.info.port, headers, body);
          if (answer.status === 200) return void ok++;
          if (answer.status !== 429) throw new Error(`import answered ${answer.status}`);
          refused++;
          await new Promise((resolve) => setTimeout(resolve, answer.retryAfter * 1000));
        }
      }),
    );
  } finally {
    clearInterval(sampler);
    rssPeakMb = Math.max(rssPeakMb, server.rssMb());
    await server.stop();
  }
  return {
    engine: options.engine,
    calls: options.calls,
    perServer,
    recordsPerCall: DEFAULT_IMPORT_MAX_RECORDS,
    bodyMb: Math.round(bodies[0]!.length / 2 ** 20),
    ok,
    refused,
    seconds: Math.round((performance.now() - started) / 100) / 10,
    rssStartMb,
    rssPeakMb,
  };
}

export function describe(result: ImportMemoryResult): string {
  return (
    `import memory ${result.engine.padEnd(8)} ${result.calls} maximal calls at once (${result.recordsPerCall} records, ${result.bodyMb} MB each), ` +
    `at most ${result.perServer} in flight: server RSS ${result.rssStartMb} → peak ${result.rssPeakMb} MB; ` +
    `${result.ok} stored, ${result.refused} answers 429 retried; ${result.seconds} s`
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({ options: { engine: { type: 'string', default: 'pglite' }, calls: { type: 'string', default: '8' }, 'per-server': { type: 'string' } } });
  const engine = values.engine as 'postgres' | 'pglite';
  const calls = Number(values.calls);
  const perServer = values['per-server'] === undefined ? undefined : Number(values['per-server']);
  const databases = postgresDatabases(process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres');
  const result =
    engine === 'postgres' ? await databases.withPostgresDatabase((databaseUrl) => importMemory({ engine, databaseUrl, calls, perServer })) : await importMemory({ engine, calls, perServer });
  console.log(describe(result));
}
