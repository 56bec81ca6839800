// A resume in a big log (docs/realtime.md, "Resume"): one app's log of 1M events, of which 200
// (messages of one 1:1 conversation, sent through the API, spread through the log) are one
// user's. That user resumes from just before their first; timed, median of several runs:
//
// - floor: the bare indexed SELECT of those 200 rows (events_app_conversation, one range);
// - statement: the resume's statement (GatewayRepository.userEventsAfter), 200 rows;
// - catch-up: the resume's work on the server (services/gateway/resume.ts) without a socket:
//   the statement, the audience rule, the 200 messages rendered into frames;
// - resume: over a real WebSocket on loopback, from the auth frame sent to `resumed` received
//   (authentication, hello, the statement, the 200 messages rendered and sent); `helloMs` is
//   the part up to `hello` (authentication and the connection attached).
//
//   npx tsx bench/gateway-resume.ts [--engine postgres|pglite] [--events 1000000] [--runs 9]
// PostgreSQL: a fresh database on BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres),
// dropped after. Prints one JSON line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import WebSocket from 'ws';
import { buildApp } from '../src/app.js';
import { DEFAULT_GATEWAY } from '../src/config.js';
import { openDatabase, type Database } from '../src/db/database.js';
import { migrate } from '../src/db/migrate.js';
import { silentLogger } from '../src/domain/context.js';
import { GatewayRepository } from '../src/repositories/gateway/gateway.repository.js';
import { Resumer } from '../src/services/gateway/resume.js';
import { postgresDatabases } from './lib/postgres.js';

const { values: args } = parseArgs({
  options: { engine: { type: 'string', default: 'postgres' }, events: { type: 'string', default: '1000000' }, runs: { type: 'string', default: '9' } },
});
const engine = args.engine === 'pglite' ? 'pglite' : 'postgres';
const EVENTS = Number(args.events);
const RUNS = Number(args.runs);
const USER_EVENTS = 200;
const ADMIN_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return Math.round(sorted[Math.floor(sorted.length / 2)]! * 100) / 100;
};

async function timed(run: () => Promise<void>): Promise<number> {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

async function bench(database: Database) {
  await migrate(database, silentLogger);
  const { app, services } = await buildApp({
    config: { region: 'us', domain: 'bench.test', bodyLimit: 1024 * 1024, gateway: DEFAULT_GATEWAY, authFailureLimits: { perAddress: 0, perApp: 0 } },
    database,
    logger: false,
  });
  const created = await services.apps.create({ appId: '', requestId: 'bench', log: silentLogger }, { name: 'Resume bench' });
  const appId = created.appId;
  const call = async (method: 'GET' | 'POST', url: string, body?: unknown, onBehalfOf?: string) => {
    const response = await app.inject({
      method,
      url,
      headers: { host: `${appId}.api-us.bench.test`, apikey: created.apiKey, ...(onBehalfOf ? { onbehalfof: onBehalfOf } : {}) },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    if (response.statusCode >= 300) throw new Error(`${method} ${url}: ${response.statusCode} ${response.body}`);
    return response.json().data;
  };
  for (const uid of ['me', 'pal']) await call('POST', '/v3/users', { uid, name: uid });
  const db = database.db;
  const lastId = async () => String((await sql<{ id: string }>`select coalesce(max(id), 0)::text as id from events where app_id = ${appId}`.execute(db)).rows[0]!.id);
  const after = await lastId();
  // The log: others' 1:1s and groups, in two halves, each followed by half of the user's messages.
  const t0 = performance.now();
  for (let half = 0; half < 2; half++) {
    for (let from = 0; from < EVENTS / 2; from += 100_000) {
      const n = Math.min(100_000, EVENTS / 2 - from);
      await sql`insert into events (app_id, trigger, conversation_id, data)
        select ${appId}, 'message_sent', case when i % 3 = 0 then 'group_g' || (i % 1000) else 'o' || (i % 50000) || ':p' || (i % 50000) end,
               json_build_object('text', 'm' || i)
        from generate_series(1, ${n}) as i`.execute(db);
    }
    for (let i = 0; i < USER_EVENTS / 2; i++)
      await call('POST', '/v3/messages', { receiver: 'pal', receiverType: 'user', category: 'message', type: 'text', data: { text: `to pal ${half}-${i}` } }, 'me');
  }
  await sql`analyze events`.execute(db);
  const seedSeconds = Math.round((performance.now() - t0) / 100) / 10;
  const upTo = await lastId();
  const logSize = Number((await sql<{ n: string }>`select count(*)::text as n from events where app_id = ${appId}`.execute(db)).rows[0]!.n);

  // The floor: the 200 rows by their index, nothing else.
  const floorRuns: number[] = [];
  for (let run = 0; run < RUNS; run++)
    floorRuns.push(
      await timed(async () => {
        const rows = await sql`select app_id, id, tx::text as tx, trigger, conversation_id, message_id, data, created_at from events
          where app_id = ${appId} and conversation_id = 'me:pal' and id > ${after} and id <= ${upTo} order by conversation_id, id limit ${USER_EVENTS + 1}`.execute(db);
        if (rows.rows.length !== USER_EVENTS) throw new Error(`the floor read ${rows.rows.length} rows`);
      }),
    );
  // The resume's statement.
  const gateway = new GatewayRepository(db);
  const statementRuns: number[] = [];
  for (let run = 0; run < RUNS; run++)
    statementRuns.push(
      await timed(async () => {
        const rows = await gateway.userEventsAfter(appId, 'me', after, upTo, USER_EVENTS);
        if (rows.length !== USER_EVENTS) throw new Error(`the statement read ${rows.length} rows`);
      }),
    );
  // The resume's catch-up alone (no socket, no authentication): the statement, the audience rule, the messages rendered.
  const resumer = new Resumer({ gateway, payloads: services.eventPayloads, maxEvents: DEFAULT_GATEWAY.resumeMaxEvents, retentionMs: 30 * 24 * 3_600_000 });
  const catchUpRuns: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    let frames = 0;
    const conn = { id: 'bench', appId, uid: 'me', tokenHash: '', write: () => void frames++, drained: () => undefined, close: () => {} };
    catchUpRuns.push(
      await timed(async () => {
        const outcome = await resumer.catchUp(conn, BigInt(after), BigInt(upTo), () => false);
        if (!outcome.complete || frames !== USER_EVENTS) throw new Error(`the catch-up sent ${frames} events`);
      }),
    );
  }
  // The resume over a socket.
  await app.listen({ port: 0, host: '127.0.0.1' });
  const port = (app.server.address() as { port: number }).port;
  const token = (await call('POST', '/v3/users/me/auth_tokens', {})).authToken as string;
  const resumeRuns: number[] = [];
  const helloRuns: number[] = [];
  for (let run = 0; run < RUNS; run++) {
    const ws = new WebSocket(`ws://127.0.0.1:${port}/v3/ws?appId=${appId}`, 'parley.v1');
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    let events = 0;
    const t1 = performance.now();
    const took = await timed(
      () =>
        new Promise<void>((resolve, reject) => {
          ws.on('message', (data) => {
            const frame = JSON.parse(String(data)) as { type: string };
            if (frame.type === 'event') events++;
            if (frame.type === 'hello') helloRuns.push(performance.now() - t1);
            if (frame.type === 'resumed') resolve();
            if (frame.type === 'resync_required' || frame.type === 'error') reject(new Error(String(data)));
          });
          ws.send(JSON.stringify({ type: 'auth', authToken: token, resume: { lastEventId: after } }));
        }),
    );
    if (events !== USER_EVENTS) throw new Error(`the resume sent ${events} events`);
    resumeRuns.push(took);
    ws.close();
    await new Promise((resolve) => ws.once('close', resolve));
  }
  await app.close();
  const floorMs = median(floorRuns);
  const statementMs = median(statementRuns);
  const resumeMs = median(resumeRuns);
  return {
    engine,
    logEvents: logSize,
    userEvents: USER_EVENTS,
    seedSeconds,
    runs: RUNS,
    floorMs,
    statementMs,
    catchUpMs: median(catchUpRuns),
    resumeMs,
    helloMs: median(helloRuns),
    statementOverFloor: Math.round((statementMs / floorMs) * 10) / 10,
    resumeOverFloor: Math.round((resumeMs / floorMs) * 10) / 10,
  };
}

let result: Awaited<ReturnType<typeof bench>>;
if (engine === 'postgres') {
  result = await postgresDatabases(ADMIN_URL).withPostgresDatabase(async (url) => {
    const database = await openDatabase({ engine: 'postgres', url, log: silentLogger });
    try {
      return await bench(database);
    } finally {
      await database.close();
    }
  });
} else {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-resume-bench-'));
  const database = await openDatabase({ engine: 'pglite', dataDir, log: silentLogger });
  try {
    result = await bench(database);
  } finally {
    await database.close();
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
}
process.stdout.write(`${JSON.stringify(result)}\n`);
