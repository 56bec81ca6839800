import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

export interface ServerHandle<Info> {
  child: ChildProcess;
  info: Info;
  /** Resident set size of the server process, in MB (Linux). */
  rssMb(): number;
  stop(): Promise<void>;
}

/**
 * Starts a bench server script in its own process and waits for the one JSON line it prints
 * when ready. The load generator runs in this process, so the two never share a CPU queue.
 */
export function startServerProcess<Info>(script: string, env: NodeJS.ProcessEnv = {}, timeoutMs = 600_000): Promise<ServerHandle<Info>> {
  // BENCH_SERVER_NODE_ARGS: extra node flags for the server, e.g. --cpu-prof to profile it.
  const nodeArgs = (process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean);
  const child = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', path.resolve('bench', script)], {
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
        stop: () =>
          new Promise<void>((done) => {
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

/** Prints the ready line a bench server ends its start with. */
export function announceReady(info: unknown): void {
  process.stdout.write(`${JSON.stringify({ ready: info })}\n`);
}
