import { spawn, type ChildProcess } from 'node:child_process';
import http from 'node:http';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createPostgresDatabase, seedPgliteDataDir, TEST_ENGINE } from './db.js';

// The CLI as these tests run: compiled, when they run from the test build (scripts/run-tests.mjs:
// no loader hook to pay for at each start), else the source through tsx. With V8's baseline
// WebAssembly compiler only (--liftoff-only), as the test processes run (scripts/run-tests.mjs):
// a process here lives seconds, and optimising PGlite's 9 MB of WebAssembly took more CPU than
// it gave back (~0.5 s of ~2 s per process, measured).
const COMPILED = import.meta.url.includes('/.build/');
const CLI = path.resolve(COMPILED ? '.build/src/cli.js' : 'src/cli.ts');
/** The node arguments that run `parley` (its arguments follow). */
export const CLI_ARGS = ['--liftoff-only', ...(COMPILED ? [CLI] : ['--import', 'tsx', CLI])];

export interface Deployment {
  env: NodeJS.ProcessEnv;
  dataDir: string;
  /** Removes the data dir and, on PostgreSQL, drops the database. */
  destroy(): Promise<void>;
}

/**
 * A data dir and, when testing PostgreSQL, a fresh database: what one deployment uses.
 * `migrated`: on PGlite, the data dir is filled with the migrated template (seedPgliteDataDir),
 * on PostgreSQL the database is a copy of a migrated template, so the first start skips the
 * migrations (the bulk of its time) and still creates the default app and prints its banner; for tests that look at something else than a fresh data dir's first start
 * (test/e2e/cli.test.ts runs one).
 */
export async function newDeployment(extra: NodeJS.ProcessEnv = {}, { migrated = false } = {}): Promise<Deployment> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'parley-e2e-'));
  const pg = TEST_ENGINE === 'postgres' ? await createPostgresDatabase({ migrated }) : undefined;
  if (migrated && !pg) await seedPgliteDataDir(dataDir);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PARLEY_DATA_DIR: dataDir,
    PARLEY_PORT: '0',
    PARLEY_HOST: '127.0.0.1',
    PARLEY_LOG_LEVEL: 'info',
    ...(pg ? { DATABASE_URL: pg.url } : { DATABASE_URL: '' }),
    ...extra,
  };
  return {
    env,
    dataDir,
    async destroy() {
      fs.rmSync(dataDir, { recursive: true, force: true });
      await pg?.drop();
    },
  };
}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `parley ARGS` to completion. */
export function runCli(args: string[], env: NodeJS.ProcessEnv): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...CLI_ARGS, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

export interface ServerProcess {
  child: ChildProcess;
  port: number;
  scheme: 'https' | 'http';
  /** Everything printed so far. */
  output(): string;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

export interface StartOptions {
  /**
   * Once it listens, keep only the last this many characters of its output: a server under load
   * logs two lines per request at the info level, which must not pile up in the test's memory.
   */
  keepOutputChars?: number;
}

/** Starts `parley serve` and waits until it listens. */
export function startServe(env: NodeJS.ProcessEnv, timeoutMs = 60_000, options: StartOptions = {}): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...CLI_ARGS, 'serve'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  let listening = false;
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`parley serve did not start in time:\n${output}`));
    }, timeoutMs);
    const onData = (chunk: Buffer) => {
      output += chunk;
      if (listening) {
        if (options.keepOutputChars !== undefined && output.length > 2 * options.keepOutputChars) output = output.slice(-options.keepOutputChars);
        return;
      }
      // The listening line is the last one a start prints (after any first-run banner).
      const match = /"url":"(https?):\/\/[^:]+:(\d+)".*Parley is listening/.exec(output);
      if (match) {
        listening = true;
        clearTimeout(timer);
        resolve({
          child,
          port: Number(match[2]),
          scheme: match[1] as 'https' | 'http',
          output: () => output,
          exited,
          stop(signal: NodeJS.Signals = 'SIGTERM') {
            child.kill(signal);
            return exited;
          },
        });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`parley serve exited with ${code}:\n${output}`));
    });
  });
}

/** The first-run banner's app id and keys. */
export function parseBanner(output: string): { appId: string; apiKey: string; authKey: string } {
  const appId = /App ID\s+(\S+)/.exec(output)?.[1];
  const apiKey = /REST key\s+([0-9a-f]{40})/.exec(output)?.[1];
  const authKey = /Auth key\s+([0-9a-f]{40})/.exec(output)?.[1];
  if (!appId || !apiKey || !authKey) throw new Error(`no first-run banner in:\n${output}`);
  return { appId, apiKey, authKey };
}

/**
 * A request to a `parley serve` on plain HTTP (PARLEY_INSECURE_HTTP=1) as `app`, with a JSON
 * body when given and `onBehalfOf` when named: the status and the raw body.
 */
export function callServer(
  agent: http.Agent,
  server: Pick<ServerProcess, 'port'>,
  app: { appId: string; apiKey: string },
  method: string,
  path: string,
  payload?: unknown,
  onBehalfOf?: string,
): Promise<{ status: number; body: string }> {
  const body = payload === undefined ? undefined : JSON.stringify(payload);
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { appid: app.appId, apikey: app.apiKey };
    if (body !== undefined) Object.assign(headers, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
    if (onBehalfOf) headers.onbehalfof = onBehalfOf;
    const req = http.request({ agent, host: '127.0.0.1', port: server.port, method, path, headers }, (res) => {
      let text = '';
      res.on('data', (chunk) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
