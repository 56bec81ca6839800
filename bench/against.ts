// npm run bench:against -- REF: this checkout's Parley against the code of REF (a commit, a
// branch, HEAD~3), side by side on one machine, on PostgreSQL. What a change did, where the
// machine swings by up to 2x within minutes and two runs of `npm run bench` do not compare.
//
//   npm run bench:against -- REF [--scenarios page,send,group] [--connections 16,64]
//                                [--slices 8] [--slice-seconds 4] [--users 100000] [--history 1000000]
//
// REF is checked out in a temporary git worktree (its node_modules linked to this one's when the
// two lockfiles are the same, installed with `npm ci` otherwise) and removed after. Per scenario
// and concurrency, two servers (bench/parley-server.ts: REF's and this tree's, in their own
// processes, each on a fresh database seeded alike) take the load in turns (lib/side-by-side.ts).
// Scenarios: `page` (history page, another each time: the uncached page), `send` (1:1), `group`.
// Prints each slice, then per server the medians of requests a second and CPU per request, and
// the median of the slices' ratios (this tree / REF); results also go to .bench/against-<time>.json.
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { anotherPageEachTime } from './lib/history-load.js';
import { runLoad, type LoadOptions, type LoadResult } from './lib/load.js';
import { postgresDatabases } from './lib/postgres.js';
import { postgresCpuMeter, startServerProcess, type ServerHandle } from './lib/processes.js';
import { sendScenarios } from './lib/send-load.js';
import { summarizeTurns, takeTurns, type TurnsSummary } from './lib/side-by-side.js';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    scenarios: { type: 'string', default: 'page,send,group' },
    connections: { type: 'string', default: '16' },
    slices: { type: 'string', default: '8' },
    'slice-seconds': { type: 'string', default: '4' },
    users: { type: 'string', default: '100000' },
    history: { type: 'string', default: '1000000' },
  },
});
const ref = positionals[0];
if (!ref) {
  console.error('usage: npm run bench:against -- REF [--scenarios page,send,group] [--connections 16,64] [--slices 8] [--slice-seconds 4]');
  process.exit(2);
}
const SCENARIOS = ['page', 'send', 'group'] as const;
type Scenario = (typeof SCENARIOS)[number];
const scenarios = values.scenarios!.split(',').filter(Boolean) as Scenario[];
const unknown = scenarios.filter((name) => !SCENARIOS.includes(name));
if (unknown.length) throw new Error(`unknown scenario ${unknown.join(', ')}: one of ${SCENARIOS.join(', ')}`);
const connectionsList = values.connections!.split(',').filter(Boolean).map(Number);
const slices = Number(values.slices);
const sliceSeconds = Number(values['slice-seconds']);
const users = Number(values.users);
const history = Number(values.history);

const ADMIN_URL = process.env.PARLEY_BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const { postgresReachable, withPostgresDatabase } = postgresDatabases(ADMIN_URL);
if (!(await postgresReachable())) throw new Error(`PostgreSQL does not answer at ${ADMIN_URL} (PARLEY_BENCH_DATABASE_URL)`);

const commit = execFileSync('git', ['rev-parse', '--verify', `${ref}^{commit}`], { encoding: 'utf8' }).trim();
const worktree = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-against-'));
execFileSync('git', ['worktree', 'add', '--detach', worktree, commit], { stdio: 'ignore' });
// Interrupted, the slice under way ends, and the servers, databases and worktree go as after a
// whole run (sliceOf's slices throw once this is set).
let interrupted = false;
process.once('SIGINT', () => {
  interrupted = true;
  console.log('interrupted: the servers, databases and worktree go after this slice');
});

type Info = { port: number; appId: string; apiKey: string; chatGroups: number; historyPairs: Array<[string, string]> };
interface Row {
  scenario: Scenario;
  connections: number;
  summary: TurnsSummary;
}
const rows: Row[] = [];
try {
  const lockOf = (root: string) => fs.readFileSync(path.join(root, 'package-lock.json'), 'utf8');
  if (lockOf(worktree) === lockOf('.')) fs.symlinkSync(path.resolve('node_modules'), path.join(worktree, 'node_modules'), 'dir');
  else if (spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: worktree, stdio: 'inherit' }).status !== 0) throw new Error(`npm ci failed in ${ref}'s worktree`);

  console.log(`against ${ref} (${commit.slice(0, 12)}): a = ${ref}, b = this tree; ${slices} slices of ${sliceSeconds} s each, in turns`);
  for (const scenario of scenarios) {
    for (const connections of connectionsList) {
      const summary = await withPostgresDatabase((urlA) =>
        withPostgresDatabase(async (urlB) => {
          const start = (url: string, root: string) =>
            startServerProcess<Info>(
              'parley-server.ts',
              { BENCH_ENGINE: 'postgres', DATABASE_URL: url, BENCH_USERS: String(users), BENCH_HISTORY: scenario === 'page' ? String(history) : '' },
              { root },
            );
          const a = await start(urlA, worktree);
          try {
            const b = await start(urlB, '.');
            try {
              const turns = await takeTurns({
                slices,
                a: await sliceOf(scenario, a, connections),
                b: await sliceOf(scenario, b, connections),
                onSlice: (index, slice) => console.log(`${scenario} ${connections} conn slice ${index + 1}: a ${line(slice.a)}  b ${line(slice.b)}`),
              });
              return summarizeTurns(turns);
            } finally {
              await b.stop();
            }
          } finally {
            await a.stop();
          }
        }),
      );
      rows.push({ scenario, connections, summary });
      const side = (s: TurnsSummary['a']) => `${s.requestsPerSecond} req/s (server ${s.cpuMicros.server} µs, postgres ${s.cpuMicros.postgres} µs)`;
      console.log(
        `${scenario} ${connections} conn, medians: a (${ref}) ${side(summary.a)}, b (this tree) ${side(summary.b)}; ` +
          `the slices' ratios b / a ${summary.medianRatio}, b ahead in ${summary.bAhead} of ${summary.slices}`,
      );
    }
  }
} catch (error) {
  if (!interrupted) throw error;
  process.exitCode = 130;
} finally {
  execFileSync('git', ['worktree', 'remove', '--force', worktree], { stdio: 'ignore' });
}
if (interrupted) process.exit();
fs.mkdirSync('.bench', { recursive: true });
const file = path.join('.bench', `against-${new Date().toISOString().replace(/[:.]/g, '-')}.json`);
fs.writeFileSync(file, JSON.stringify({ ref, commit, slices, sliceSeconds, rows }, null, 2));
console.log(`results written to ${file}`);

/** One slice of the scenario's load on a server, its CPU and PostgreSQL's measured. */
async function sliceOf(scenario: Scenario, server: ServerHandle<Info>, connections: number): Promise<() => Promise<LoadResult>> {
  const base = `http://127.0.0.1:${server.info.port}`;
  const headers = { appid: server.info.appId, apikey: server.info.apiKey };
  const load = (options: LoadOptions) => {
    if (interrupted) throw new Error('interrupted');
    return runLoad({ ...options, warmupSeconds: 1, cpu: { server: server.cpuMeter, postgres: postgresCpuMeter } });
  };
  if (scenario === 'page') {
    const [viewer, other] = server.info.historyPairs[0]!;
    const pages = await anotherPageEachTime({ base, headers, viewer, other, size: history });
    return () => load({ ...pages, connections, durationSeconds: sliceSeconds });
  }
  const sends = sendScenarios({ base, headers, users, chatGroups: server.info.chatGroups }, load, connections, sliceSeconds);
  return scenario === 'send' ? sends.oneToOne : sends.group;
}

function line(result: LoadResult): string {
  const cpu = result.cpuMicrosPerRequest ?? {};
  const flags = result.errors || result.non2xx ? ` (${result.errors} errors, ${result.non2xx} non-2xx)` : '';
  return `${result.requestsPerSecond} req/s (${cpu.server}/${cpu.postgres} µs)${flags}`;
}
