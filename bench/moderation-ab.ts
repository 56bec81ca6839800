// What content moderation costs a send: send at 64 connections on a server whose app moderates
// every text message with enabled rules (BENCH_MODERATION=rules=10,keywords=10000, see
// bench/parley-server.ts: word lists and two patterns, all blocking, none matching the text sent)
// and on one whose app has none (its messages are not moderated at all). Both servers run side by
// side, each on a fresh database seeded alike, and take the load in turns (lib/side-by-side.ts),
// as the hardening A/B does. The figures are the median of the slices' ratios (with / without),
// and the servers' and PostgreSQL's CPU per send.
//
//   npm run bench:moderation-ab [-- --slices 12] [--slice-seconds 5] [--moderation rules=10,keywords=10000] [--users 10000]
//   npm run bench -- --engine postgres --only moderation [--moderation-slices 12] [--moderation-slice-seconds 5]
//
// Every send of the moderated server must be approved, or the figure measures something else:
// one probe send on each server first (its data.moderation.status: approved with, absent
// without), and after the slices, the moderated server's messages counted (none held, each with
// its moderation_engine_approved event). Standalone, results also go to .bench/moderation-ab-<time>.json.
// `--moderation=` (empty) moderates neither server: an A/A run, what the method alone shows.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import type { LoadResult } from './lib/load.js';
import { postgresDatabases } from './lib/postgres.js';
import { withServerPair, type PairServer } from './lib/server-pair.js';
import { median, takeTurns } from './lib/side-by-side.js';

export interface ModerationSlice {
  /** Sends per second, with moderation and without. */
  with: number;
  without: number;
  /** The servers' CPU per send, µs. */
  withCpuMicros: number;
  withoutCpuMicros: number;
  /** PostgreSQL's CPU per send, µs. */
  withPostgresCpuMicros: number;
  withoutPostgresCpuMicros: number;
  withP99Ms: number;
  withoutP99Ms: number;
}

type Pair = [withModeration: number, without: number];

export interface ModerationAbResult {
  /** What the moderated server's app holds (BENCH_MODERATION). */
  moderation: string;
  connections: number;
  sliceSeconds: number;
  oneToOne: ModerationSlice[];
  group: ModerationSlice[];
  /** Medians of the slices' ratios of sends a second, with / without: 1 is free, 0.85 costs 15%. */
  medianRatio: { oneToOne: number; group: number };
  /** Medians of sends a second, with / without. */
  medianRequestsPerSecond: { oneToOne: Pair; group: Pair };
  /** Medians of the servers' CPU per send, µs, with / without. */
  medianCpuMicros: { oneToOne: Pair; group: Pair };
  /** Median server CPU per send with / median without: 1.15 is 15% more. */
  cpuRatio: { oneToOne: number; group: number };
  /** Medians of PostgreSQL's CPU per send, µs, with / without. */
  medianPostgresCpuMicros: { oneToOne: Pair; group: Pair };
  /** data.moderation.status of one probe send on each server, before the slices (null: none). */
  probe: { with: string | null; without: string | null };
  /** The moderated server's messages after the slices: all approved, none held. */
  check: { messages: number; held: number; approvedEvents: number; failedRequests: number };
}

interface Options {
  withPostgresDatabase: <T>(run: (url: string) => Promise<T>) => Promise<T>;
  /** Slices of each scenario on each server (after one warm-up slice each, not counted). */
  slices: number;
  connections: number;
  sliceSeconds: number;
  users: number;
  /** BENCH_MODERATION of the moderated server: rules=10,keywords=10000. */
  moderation: string;
  log: (line: string) => void;
}

/** One send as the load sends it (seed-0 to seed-1): its data.moderation.status, or null when it has none. */
async function probeSend(server: PairServer): Promise<string | null> {
  const base = `http://127.0.0.1:${server.info.port}`;
  const headers = { appid: server.info.appId, apikey: server.info.apiKey };
  const response = await fetch(`${base}/v3/messages`, {
    method: 'POST',
    headers: { ...headers, onbehalfof: 'seed-0', 'content-type': 'application/json' },
    body: JSON.stringify({ receiver: 'seed-1', receiverType: 'user', category: 'message', type: 'text', data: { text: 'Hello there 👋' } }),
  });
  const body = (await response.json()) as { data?: { data?: { moderation?: { status?: string } } } };
  if (!response.ok) throw new Error(`probe send answered ${response.status}: ${JSON.stringify(body)}`);
  return body.data?.data?.moderation?.status ?? null;
}

/** The moderated server's messages: how many, how many held, and its moderation_engine_approved events. */
async function countMessages(url: string): Promise<{ messages: number; held: number; approvedEvents: number }> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const messages = await client.query(`select count(*)::int as messages, count(*) filter (where held)::int as held from messages where category <> 'action'`);
    const events = await client.query(`select count(*)::int as approved from events where trigger = 'moderation_engine_approved'`);
    return { messages: messages.rows[0].messages, held: messages.rows[0].held, approvedEvents: events.rows[0].approved };
  } finally {
    await client.end();
  }
}

export async function moderationAB(options: Options): Promise<ModerationAbResult> {
  return withServerPair(options, { with: { BENCH_MODERATION: options.moderation }, without: { BENCH_MODERATION: '' } }, async (pair) => {
    // The first send of the moderated app also compiles its rules (then kept by the server).
    const probe = { with: await probeSend(pair.with.server), without: await probeSend(pair.without.server) };
    options.log(`moderation A/B probe send: data.moderation.status ${probe.with ?? 'absent'} with ${options.moderation}, ${probe.without ?? 'absent'} without`);
    if (options.moderation && probe.with !== 'approved') throw new Error(`the moderated server's probe send was not approved (${probe.with}): the A/B would not measure an approved send`);
    const zero = (): Pair => [0, 0];
    const result: ModerationAbResult = {
      moderation: options.moderation,
      connections: options.connections,
      sliceSeconds: options.sliceSeconds,
      oneToOne: [],
      group: [],
      medianRatio: { oneToOne: 0, group: 0 },
      medianRequestsPerSecond: { oneToOne: zero(), group: zero() },
      medianCpuMicros: { oneToOne: zero(), group: zero() },
      cpuRatio: { oneToOne: 0, group: 0 },
      medianPostgresCpuMicros: { oneToOne: zero(), group: zero() },
      probe,
      check: { messages: 0, held: 0, approvedEvents: 0, failedRequests: 0 },
    };
    const failed = (r: LoadResult) => r.errors + r.non2xx;
    for (const kind of ['oneToOne', 'group'] as const) {
      await takeTurns({
        slices: options.slices,
        a: pair.with.scenarios[kind],
        b: pair.without.scenarios[kind],
        onSlice: (index, { a: w, b: wo }) => {
          const row: ModerationSlice = {
            with: w.requestsPerSecond,
            without: wo.requestsPerSecond,
            withCpuMicros: w.cpuMicrosPerRequest?.server ?? 0,
            withoutCpuMicros: wo.cpuMicrosPerRequest?.server ?? 0,
            withPostgresCpuMicros: w.cpuMicrosPerRequest?.postgres ?? 0,
            withoutPostgresCpuMicros: wo.cpuMicrosPerRequest?.postgres ?? 0,
            withP99Ms: w.p99Ms,
            withoutP99Ms: wo.p99Ms,
          };
          result.check.failedRequests += failed(w) + failed(wo);
          result[kind].push(row);
          const flags = failed(w) + failed(wo) > 0 ? `  (${failed(w)} / ${failed(wo)} errors or non-2xx)` : '';
          options.log(
            `moderation A/B ${kind === 'oneToOne' ? '1:1' : 'group'} slice ${index + 1}: ${row.with} vs ${row.without} sends/s ` +
              `(${(row.with / row.without).toFixed(3)}), CPU per send: server ${row.withCpuMicros} / ${row.withoutCpuMicros} µs, ` +
              `postgres ${row.withPostgresCpuMicros} / ${row.withoutPostgresCpuMicros} µs; p99 ${row.withP99Ms} / ${row.withoutP99Ms} ms${flags}`,
          );
        },
      });
      const rows = result[kind];
      const medians = (pick: (r: ModerationSlice) => Pair): Pair => [median(rows.map((r) => pick(r)[0])), median(rows.map((r) => pick(r)[1]))];
      result.medianRatio[kind] = Number(median(rows.map((r) => r.with / r.without)).toFixed(3));
      result.medianRequestsPerSecond[kind] = medians((r) => [r.with, r.without]);
      result.medianCpuMicros[kind] = medians((r) => [r.withCpuMicros, r.withoutCpuMicros]);
      result.cpuRatio[kind] = Number((result.medianCpuMicros[kind][0] / result.medianCpuMicros[kind][1]).toFixed(3));
      result.medianPostgresCpuMicros[kind] = medians((r) => [r.withPostgresCpuMicros, r.withoutPostgresCpuMicros]);
    }
    result.check = { ...(await countMessages(pair.with.url)), failedRequests: result.check.failedRequests };
    return result;
  });
}

export function describeModeration(result: ModerationAbResult): string {
  const pair = (p: Pair, unit: string) => `${p[0]} / ${p[1]}${unit}`;
  const percent = (ratio: number) => `${ratio >= 1 ? '+' : ''}${((ratio - 1) * 100).toFixed(1)}%`;
  const { check } = result;
  const allApproved = check.held === 0 && check.approvedEvents === check.messages && check.failedRequests === 0;
  return (
    `moderation A/B (postgres, ${result.connections} conn, ${result.oneToOne.length} slices of ${result.sliceSeconds} s per scenario and server, taken in turns): ` +
    `send with ${result.moderation || 'no moderation either (A/A)'} / without moderation, median of the slices' ratios: 1:1 ${result.medianRatio.oneToOne}, group ${result.medianRatio.group} (target ≥ 0.85); ` +
    `sends/s: 1:1 ${pair(result.medianRequestsPerSecond.oneToOne, '')}, group ${pair(result.medianRequestsPerSecond.group, '')}; ` +
    `server CPU per send: 1:1 ${pair(result.medianCpuMicros.oneToOne, ' µs')} (${percent(result.cpuRatio.oneToOne)}), ` +
    `group ${pair(result.medianCpuMicros.group, ' µs')} (${percent(result.cpuRatio.group)}) (target ≤ +15%); ` +
    `PostgreSQL CPU per send: 1:1 ${pair(result.medianPostgresCpuMicros.oneToOne, ' µs')}, group ${pair(result.medianPostgresCpuMicros.group, ' µs')}; ` +
    `probe send ${result.probe.with ?? 'unmoderated'} (without: ${result.probe.without ?? 'unmoderated'}); ` +
    `moderated server: ${check.messages} messages, ${check.held} held, ${check.approvedEvents} moderation_engine_approved events, ${check.failedRequests} failed requests` +
    (!result.moderation ? '' : allApproved ? ' (every send approved)' : ' (NOT every send approved: the figures do not measure an approved send)')
  );
}

// Run on its own: creates (and drops) its two PostgreSQL databases.
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: {
      slices: { type: 'string', default: '12' },
      'slice-seconds': { type: 'string', default: '5' },
      connections: { type: 'string', default: '64' },
      users: { type: 'string', default: '10000' },
      moderation: { type: 'string', default: 'rules=10,keywords=10000' },
    },
  });
  const adminUrl = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
  const { postgresReachable, withPostgresDatabase } = postgresDatabases(adminUrl);
  if (!(await postgresReachable())) throw new Error(`PostgreSQL does not answer at ${adminUrl} (PARLEY_BENCH_DATABASE_URL)`);
  const result = await moderationAB({
    withPostgresDatabase,
    slices: Number(values.slices),
    connections: Number(values.connections),
    sliceSeconds: Number(values['slice-seconds']),
    users: Number(values.users),
    moderation: values.moderation!,
    log: (line) => console.log(line),
  });
  console.log(describeModeration(result));
  const at = new Date().toISOString();
  const file = path.join('.bench', `moderation-ab-${at.replace(/[:.]/g, '-')}.json`);
  fs.mkdirSync('.bench', { recursive: true });
  fs.writeFileSync(file, `${JSON.stringify({ at, moderationAb: result }, null, 2)}\n`);
  console.log(`\nresults written to ${file}`);
}
