// Memory of the quick start: its build (tsc, as `npm start`'s prestart runs it), then `npm start`'s
// own command (package.json's start script, on the embedded engine) run on an empty data dir, then
// used lightly, left idle, stopped and started again on the same dir, and then put under load,
// while each process's RSS is sampled from /proc/<pid>/status (VmRSS every 100 ms, the server's
// child processes' too; the server's VmHWM, the kernel's own peak, at each phase's end).
//
//   tsx bench/memory.ts [--idle-seconds 30] [--duration 8] [--connections 64]
// (npm run bench runs it too on the embedded engine, with --only memory; --memory-idle-seconds
// sets the idle phases' length). It builds dist/ first, as `npm start` does.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { runLoad } from './lib/load.js';
import { sendScenarios } from './lib/send-load.js';

export interface MemoryPhase {
  phase: string;
  seconds: number;
  /** Highest VmRSS sampled in the phase (MB). */
  peakMb: number;
  /** Median VmRSS of the phase's last third (MB): where it settles. */
  steadyMb: number;
  /** VmHWM at the phase's end (MB): the process's peak RSS so far, between samples too. */
  hwmMb: number;
  /** Highest VmRSS of the processes the server started (MB; the first start writes its database in one). */
  childrenPeakMb: number;
  /** Highest sum of the server's VmRSS and its children's (MB): what the box gave the quick start. */
  totalPeakMb: number;
  requests?: number;
  /** Requests answered other than 2xx, or not at all. */
  failed?: number;
  requestsPerSecond?: number;
}

export interface MemoryResult {
  engine: 'pglite';
  command: string;
  phases: MemoryPhase[];
  /** Highest VmHWM of the server, in either run. */
  peakMb: number;
  /** Highest RSS sampled of the build (tsc, npm start's prestart). */
  buildPeakMb: number;
  /** Highest RSS of a process the server started (the first start's cluster writer), and of the sum. */
  childrenPeakMb: number;
  totalPeakMb: number;
}

const USERS = 200;
const SAMPLE_MS = 100;

function status(pid: number): { rssMb: number; hwmMb: number } {
  try {
    const text = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? 0);
    return { rssMb: Math.round(kb('VmRSS') / 1024), hwmMb: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return { rssMb: 0, hwmMb: 0 };
  }
}

/** The processes `pid` started that still run, and theirs (Linux: /proc/<pid>/task/<tid>/children). */
function childrenOf(pid: number): number[] {
  let direct: number[] = [];
  try {
    for (const task of fs.readdirSync(`/proc/${pid}/task`)) {
      direct = direct.concat(fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(/\s+/).filter(Boolean).map(Number));
    }
  } catch {
    return direct;
  }
  return direct.concat(direct.flatMap(childrenOf));
}

/** Samples one process's RSS; `phase` closes the samples taken since the last call into a phase. */
class Sampler {
  private samples: number[] = [];
  private childrenPeak = 0;
  private totalPeak = 0;
  private since = Date.now();
  private readonly timer: NodeJS.Timeout;
  readonly phases: MemoryPhase[] = [];

  constructor(private readonly pid: number) {
    this.timer = setInterval(() => this.sample(), SAMPLE_MS);
  }

  private sample() {
    const { rssMb } = status(this.pid);
    if (rssMb > 0) this.samples.push(rssMb);
    const children = childrenOf(this.pid).reduce((sum, pid) => sum + status(pid).rssMb, 0);
    this.childrenPeak = Math.max(this.childrenPeak, children);
    this.totalPeak = Math.max(this.totalPeak, rssMb + children);
  }

  phase(name: string, extra: Partial<MemoryPhase> = {}): MemoryPhase {
    this.sample();
    const { hwmMb } = status(this.pid);
    const last = this.samples.slice(-Math.max(1, Math.ceil(this.samples.length / 3))).sort((a, b) => a - b);
    const row: MemoryPhase = {
      phase: name,
      seconds: Math.round((Date.now() - this.since) / 100) / 10,
      peakMb: Math.max(0, ...this.samples),
      steadyMb: last[Math.floor(last.length / 2)] ?? 0,
      hwmMb,
      childrenPeakMb: this.childrenPeak,
      totalPeakMb: Math.max(this.totalPeak, hwmMb),
      ...extra,
    };
    this.phases.push(row);
    this.samples = [];
    this.childrenPeak = 0;
    this.totalPeak = 0;
    this.since = Date.now();
    return row;
  }

  stop() {
    clearInterval(this.timer);
  }
}

/**
 * Runs node with `args` to its end while sampling its RSS (and its children's): the phase `name`.
 * Its VmHWM is gone with it, so the phase's peak is the highest sample.
 */
async function sampledRun(args: string[], name: string): Promise<{ status: number | null; stdout: string; row: MemoryPhase }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  const sampler = new Sampler(child.pid!);
  let stdout = '';
  child.stdout!.on('data', (chunk: Buffer) => (stdout += chunk));
  const status = await new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const row = sampler.phase(name);
  sampler.stop();
  row.hwmMb = row.peakMb;
  row.totalPeakMb = Math.max(row.totalPeakMb, row.peakMb);
  return { status, stdout, row };
}

interface Started {
  child: ChildProcess;
  sampler: Sampler;
  port: number;
  /** The default app's id and REST key, from the first start's banner. */
  app?: { appId: string; apiKey: string };
}

/** Starts the start script's command on `dataDir`; resolves when it logs that it listens. */
function startQuickStart(words: string[], dataDir: string, env: NodeJS.ProcessEnv): Promise<Started> {
  const child = spawn(process.execPath, words.slice(1), {
    env: { ...process.env, PARLEY_DATA_DIR: dataDir, PARLEY_PORT: '0', PARLEY_HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const sampler = new Sampler(child.pid!);
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the server did not start in 5 minutes'));
    }, 300_000);
    child.on('exit', (code) => {
      clearTimeout(timer);
      sampler.stop();
      reject(new Error(`the server exited with ${code}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk;
      const listening = /"url":"https?:\/\/[^"]*:(\d+)"[^\n]*Parley is listening/.exec(out);
      if (!listening) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout!.removeAllListeners('data');
      child.stdout!.resume();
      const appId = /App ID\s+(\S+)/.exec(out)?.[1];
      const apiKey = /REST key\s+(\S+)/.exec(out)?.[1];
      resolve({ child, sampler, port: Number(listening[1]), ...(appId && apiKey ? { app: { appId, apiKey } } : {}) });
    });
  });
}

function stopServer(child: ChildProcess): Promise<void> {
  return new Promise((done) => {
    if (child.exitCode !== null || child.signalCode !== null) return done();
    child.on('exit', () => done());
    child.kill('SIGTERM');
  });
}

/** A few hundred requests, a few at a time, as a newcomer trying the API makes them. */
async function lightUse(base: string, headers: Record<string, string>): Promise<{ requests: number; failed: number }> {
  let requests = 0;
  let failed = 0;
  const call = async (method: string, url: string, body?: unknown, onBehalfOf?: string) => {
    requests++;
    try {
      const response = await fetch(`${base}${url}`, {
        method,
        headers: { ...headers, 'content-type': 'application/json', ...(onBehalfOf ? { onbehalfof: onBehalfOf } : {}) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      await response.arrayBuffer();
      if (response.status >= 300) failed++;
    } catch {
      failed++;
    }
  };
  const inTurns = async (count: number, one: (i: number) => Promise<void>) => {
    for (let i = 0; i < count; i += 4) await Promise.all([0, 1, 2, 3].filter((k) => i + k < count).map((k) => one(i + k)));
  };
  await inTurns(USERS, (i) => call('POST', '/v3/users', { uid: `seed-${i}`, name: `User ${i}` }));
  await inTurns(5, (g) =>
    call('POST', '/v3/groups', { guid: `chat-${g}`, name: `Group ${g}`, type: 'public', members: { participants: Array.from({ length: 9 }, (_, k) => `seed-${g * 10 + k + 1}`) } }, `seed-${g * 10}`),
  );
  const text = (i: number) => ({ category: 'message', type: 'text', data: { text: `Message ${i}` } });
  await inTurns(200, (i) => call('POST', '/v3/messages', { receiver: `seed-${(i % 50) * 2 + 1}`, receiverType: 'user', ...text(i) }, `seed-${(i % 50) * 2}`));
  await inTurns(50, (i) => call('POST', '/v3/messages', { receiver: `chat-${i % 5}`, receiverType: 'group', ...text(i) }, `seed-${(i % 5) * 10}`));
  await inTurns(100, (i) => call('GET', `/v3/users/seed-${(i % 50) * 2 + 1}/messages?limit=50`, undefined, `seed-${(i % 50) * 2}`));
  await inTurns(20, (i) => call('GET', `/v3/users?perPage=100&page=${(i % 2) + 1}`));
  return { requests, failed };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export async function memoryBench(options: { idleSeconds: number; durationSeconds: number; connections: number; log?: (line: string) => void }): Promise<MemoryResult> {
  const log = options.log ?? console.log;
  const pkg = JSON.parse(fs.readFileSync('package.json', 'utf8')) as { scripts: { start: string } };
  const words = pkg.scripts.start.split(/\s+/).filter(Boolean);
  if (words[0] !== 'node') throw new Error(`the start script does not run node: ${pkg.scripts.start}`);
  // npm start builds first (prestart): so does this, into a folder of its own, so it measures
  // the code of this checkout and leaves dist/ alone; the command runs from there, with
  // package.json beside it as beside dist/ (the version is read from it).
  const out = path.resolve('.bench/memory/dist');
  fs.mkdirSync(out, { recursive: true });
  fs.copyFileSync('package.json', path.join(out, '..', 'package.json'));
  const build = await sampledRun(
    ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.json', '--outDir', out, '--tsBuildInfoFile', path.join(out, '.tsbuildinfo')],
    'build (tsc, as npm start’s prestart)',
  );
  // tsc emits despite type errors; a tree that does not type-check is still measured, with a warning.
  if (build.status !== 0) log(`memory: tsc reported ${(build.stdout.match(/error TS/g) ?? []).length} errors (npm run typecheck lists them); measuring what it emitted`);
  if (!fs.existsSync(path.join(out, 'cli.js'))) throw new Error('the build emitted no cli.js');
  if (spawnSync(process.execPath, ['scripts/copy-assets.mjs', out], { stdio: 'inherit' }).status !== 0) throw new Error('copying the assets (migrations, prebuilt cluster) failed');
  const command = words.map((word) => (word.startsWith('dist/') ? path.join(out, word.slice('dist/'.length)) : word));
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-bench-memory-'));
  // Plain HTTP on loopback (TLS is the same either way), and rate limits that never bind under the load phase.
  const env = { PARLEY_INSECURE_HTTP: '1', PARLEY_LOG_LEVEL: 'info', PARLEY_RATE_LIMITS: 'core=1000000000,standard=1000000000,import=1000000000' };
  const phases: MemoryPhase[] = [build.row];
  const show = (row: MemoryPhase) => {
    const calls = row.requests === undefined ? '' : `, ${row.requests} requests (${row.failed} failed${row.requestsPerSecond ? `, ${row.requestsPerSecond}/s` : ''})`;
    const children = row.childrenPeakMb > 0 ? `, its child processes' peak ${row.childrenPeakMb} MB` : '';
    log(
      `memory: ${row.phase.padEnd(48)} ${String(row.seconds).padStart(5)} s  RSS peak ${String(row.peakMb).padStart(4)} MB, steady ${String(row.steadyMb).padStart(4)} MB, VmHWM ${String(row.hwmMb).padStart(4)} MB${children}${calls}`,
    );
  };
  show(build.row);
  try {
    const first = await startQuickStart(command, dataDir, env);
    const app = first.app;
    if (!app) throw new Error('no default app in the first start’s banner');
    const base = (port: number) => `http://127.0.0.1:${port}`;
    const headers = { appid: app.appId, apikey: app.apiKey };
    try {
      show(first.sampler.phase('first start (cluster, migrations, default app)'));
      const used = await lightUse(base(first.port), headers);
      show(first.sampler.phase('light use', used));
      await sleep(options.idleSeconds * 1000);
      show(first.sampler.phase('idle after the first start'));
    } finally {
      await stopServer(first.child);
      first.sampler.stop();
      phases.push(...first.sampler.phases);
    }
    const again = await startQuickStart(command, dataDir, env);
    try {
      show(again.sampler.phase('restart on the same data dir'));
      await sleep(options.idleSeconds * 1000);
      show(again.sampler.phase('idle after the restart'));
      const load = (opts: Parameters<typeof runLoad>[0]) => runLoad(opts);
      const sends = sendScenarios({ base: base(again.port), headers, users: USERS, chatGroups: 5 }, load, options.connections, options.durationSeconds);
      const loaded = (result: Awaited<ReturnType<typeof runLoad>>) => ({
        requests: result.requests,
        failed: result.errors + result.non2xx,
        requestsPerSecond: result.requestsPerSecond,
      });
      show(again.sampler.phase(`load: send 1:1, ${options.connections} connections`, loaded(await sends.oneToOne())));
      const pages = await runLoad({
        url: `${base(again.port)}/v3/users/seed-1/messages?limit=50`,
        connections: options.connections,
        durationSeconds: options.durationSeconds,
        headers: { ...headers, onbehalfof: 'seed-0' },
      });
      show(again.sampler.phase(`load: history page, ${options.connections} connections`, loaded(pages)));
      await sleep(options.idleSeconds * 1000);
      show(again.sampler.phase('idle after the load'));
    } finally {
      await stopServer(again.child);
      again.sampler.stop();
      phases.push(...again.sampler.phases);
    }
  } finally {
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
  return {
    engine: 'pglite',
    command: pkg.scripts.start,
    phases,
    peakMb: Math.max(...phases.slice(1).map((row) => row.hwmMb)),
    buildPeakMb: build.row.peakMb,
    childrenPeakMb: Math.max(...phases.map((row) => row.childrenPeakMb)),
    totalPeakMb: Math.max(...phases.map((row) => row.totalPeakMb)),
  };
}

export function describeMemory(result: MemoryResult): string {
  const steady = (name: string) => result.phases.find((row) => row.phase === name)?.steadyMb;
  return (
    `memory (${result.command}): build peak ${result.buildPeakMb} MB, server peak ${result.peakMb} MB (VmHWM), with its child processes ${result.totalPeakMb} MB; idle ${steady('idle after the first start')} MB after the first start, ` +
    `${steady('idle after the restart')} MB after a restart, ${steady('idle after the load')} MB after the load`
  );
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { values } = parseArgs({
    options: { 'idle-seconds': { type: 'string', default: '30' }, duration: { type: 'string', default: '8' }, connections: { type: 'string', default: '64' } },
  });
  const result = await memoryBench({
    idleSeconds: Number(values['idle-seconds']),
    durationSeconds: Number(values.duration),
    connections: Number(values.connections),
  });
  console.log(describeMemory(result));
}
