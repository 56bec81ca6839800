import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface ServerHandle<Info> {
  child: ChildProcess;
  info: Info;
  /** Resident set size of the server process, in MB (Linux). */
  rssMb(): number;
  /** Starts measuring the server's CPU (user and system; Linux): the returned function reads the seconds used since. */
  cpuMeter(): () => number;
  stop(): Promise<void>;
}

/**
 * Starts a bench server script in its own process and waits for the one JSON line it prints
 * when ready. The load generator runs in this process, so the two never share a CPU queue.
 * `root`: the checkout whose bench/ and src/ it runs (another commit's, for bench/against.ts);
 * this one by default.
 */
export function startServerProcess<Info>(script: string, env: NodeJS.ProcessEnv = {}, { timeoutMs = 600_000, root = '.', extraNodeArgs = [] as string[] } = {}): Promise<ServerHandle<Info>> {
  // The node flags `npm start` gives the server, so the bench measures what runs; and
  // BENCH_SERVER_NODE_ARGS: extra ones, e.g. --cpu-prof to profile it (and the caller's, e.g.
  // --expose-gc for a memory reading after a GC).
  const nodeArgs = [...startFlags(root), ...extraNodeArgs, ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean)];
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.resolve(root, 'bench', script)], {
    cwd: root,
    env: { ...process.env, PARLEY_LOG_LEVEL: 'warn', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let buffer = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${script} did not become ready`));
    }, timeoutMs);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${script} exited with ${code}`));
    });
    child.stdout!.on('data', (chunk: Buffer) => {
      buffer += chunk;
      const line = buffer.split('\n').find((candidate) => candidate.startsWith('{"ready":'));
      if (!line) return;
      clearTimeout(timer);
      const info = JSON.parse(line).ready as Info;
      resolve({
        child,
        info,
        rssMb: () => rssOf(child.pid!),
        cpuMeter: () => {
          const before = cpuSecondsOf(child.pid!);
          return () => cpuSecondsOf(child.pid!) - before;
        },
        stop: () =>
          new Promise<void>((done) => {
            // Already gone (a Ctrl-C reaches the whole process group): nothing to wait for.
            if (child.exitCode !== null || child.signalCode !== null) return done();
            child.removeAllListeners('exit');
            child.on('exit', () => done());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

function rssOf(pid: number): number {
  try {
    const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
    return Math.round(kb / 1024);
  } catch {
    return 0;
  }
}

/** The node flags (`--name=value`) of the start script of `root`'s package.json. */
function startFlags(root: string): string[] {
  const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: { start: string } };
  return pkg.scripts.start.split(/\s+/).filter((word) => word.startsWith('--'));
}

/** CPU seconds (user and system) a process has used, from /proc (Linux); 0 when unreadable. */
export function cpuSecondsOf(pid: number | string): number {
  try {
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
  } catch {
    return 0;
  }
}
// USER_HZ: 100 on every Linux architecture Node runs on.
const CLOCK_TICKS = 100;

/**
 * Starts measuring the CPU used by the running PostgreSQL server's processes on this machine
 * (its backends, WAL writer, checkpointer...); the returned function reads the seconds used
 * since. Counted per process: a backend that exits meanwhile (a pool closing an idle
 * connection) takes its time with it, and is not subtracted from the others'.
 */
export function postgresCpuMeter(): () => number {
  const before = postgresCpuByPid();
  return () => {
    let total = 0;
    for (const [pid, seconds] of postgresCpuByPid()) total += seconds - (before.get(pid) ?? 0);
    return total;
  };
}

function postgresCpuByPid(): Map<string, number> {
  const seconds = new Map<string, number>();
  for (const pid of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      if (fs.readFileSync(`/proc/${pid}/comm`, 'utf8').trim() !== 'postgres') continue;
    } catch {
      continue;
    }
    seconds.set(pid, cpuSecondsOf(pid));
  }
  return seconds;
}

/** Prints the ready line a bench server ends its start with. */
export function announceReady(info: unknown): void {
  process.stdout.write(`${JSON.stringify({ ready: info })}\n`);
}
