import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { BackupError, writeBackup, type BackupSummary } from './db/backup.js';
import type { Database } from './db/database.js';
import type { Logger } from './domain/context.js';

/**
 * The embedded database's control socket: a Unix domain socket in the data dir (`parley.sock`,
 * owner only) on which a running server takes requests from `parley` commands on the same
 * machine. The server holds the data dir, so another process cannot open the database there;
 * `parley backup` asks the server to write the backup through its own database instead.
 *
 * One request a connection, one line of JSON each way: `{"command":"backup","file":"/abs"}`,
 * answered `{"ok":true,...BackupSummary}` or `{"ok":false,"error":"..."}`.
 */
export const CONTROL_SOCKET = 'parley.sock';

/** A request's line is short; a longer one is not Parley's. */
const MAX_REQUEST_BYTES = 16 * 1024;
/** How long a connection may take to send its request. */
const REQUEST_TIMEOUT_MS = 10_000;
/** The longest path a Unix socket address takes (sun_path is 104–108 bytes). */
const MAX_SOCKET_PATH = 100;

/**
 * The address of the data dir's socket: its path, or that path relative to the working directory
 * when only that is short enough; undefined when neither is.
 */
export function controlSocketAddress(dataDir: string): string | undefined {
  const absolute = path.join(dataDir, CONTROL_SOCKET);
  if (Buffer.byteLength(absolute) <= MAX_SOCKET_PATH) return absolute;
  const relative = path.relative(process.cwd(), absolute);
  return Buffer.byteLength(relative) <= MAX_SOCKET_PATH ? relative : undefined;
}

export interface ControlSocket {
  /** Stops taking requests, and waits for the one being written. */
  close(): Promise<void>;
}

/** Listens on the data dir's control socket (the embedded database only). */
export async function startControlSocket(options: { dataDir: string; database: Database; log: Logger }): Promise<ControlSocket | undefined> {
  const { dataDir, database, log } = options;
  const address = controlSocketAddress(dataDir);
  if (!address) {
    log.warn({ dataDir }, 'the data dir’s path is too long for its control socket: `parley backup` works only while the server is stopped');
    return undefined;
  }
  let running: Promise<unknown> | undefined;
  const server = net.createServer((socket) => {
    socket.setTimeout(REQUEST_TIMEOUT_MS, () => socket.destroy());
    let received = '';
    const answer = (reply: object) => socket.end(`${JSON.stringify(reply)}\n`);
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => {
      received += chunk.toString('utf8');
      if (received.length > MAX_REQUEST_BYTES) return void socket.destroy();
      const end = received.indexOf('\n');
      if (end < 0) return;
      socket.removeAllListeners('data');
      socket.setTimeout(0);
      let request: { command?: unknown; file?: unknown };
      try {
        request = JSON.parse(received.slice(0, end)) as typeof request;
      } catch {
        return answer({ ok: false, error: 'the request is not JSON' });
      }
      if (request.command !== 'backup' || typeof request.file !== 'string' || !path.isAbsolute(request.file)) {
        return answer({ ok: false, error: 'unknown request (this server takes {"command":"backup","file":"/absolute/path"})' });
      }
      // Two at once would hold two copies of the database in memory: the second is refused.
      if (running) return answer({ ok: false, error: 'a backup is being written already; try again when it is done' });
      const file = request.file;
      const started = Date.now();
      running = writeBackup(database, dataDir, file).then(
        (summary) => {
          log.info({ file, bytes: summary.bytes, migration: summary.migration, ms: Date.now() - started }, 'wrote a backup');
          answer({ ok: true, ...summary });
        },
        (error: unknown) => {
          if (!(error instanceof BackupError)) log.error({ err: error, file }, 'a backup failed');
          answer({ ok: false, error: error instanceof BackupError ? error.message : `the backup failed: ${(error as Error).message}` });
        },
      );
      void running.finally(() => (running = undefined));
    });
  });
  try {
    // This process holds the data dir's lock: a socket file left there is a stopped process's.
    fs.rmSync(address, { force: true });
    const listening = new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.once('listening', () => {
        server.off('error', reject);
        resolve();
      });
    });
    // Owner only from its first moment: the socket is made (bound) within listen(), under this
    // umask, which goes back at once; chmod makes sure.
    const umask = process.umask(0o177);
    try {
      server.listen(address);
    } finally {
      process.umask(umask);
    }
    await listening;
    fs.chmodSync(address, 0o600);
  } catch (error) {
    // The server serves on without it: only a backup while it runs is not possible.
    log.warn({ err: error, address }, 'cannot listen on the control socket: `parley backup` works only while the server is stopped');
    server.close();
    return undefined;
  }
  server.on('error', (error) => log.warn({ err: error }, 'control socket failed'));
  return {
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await running;
      fs.rmSync(address, { force: true });
    },
  };
}

/** No server answers on the data dir's control socket. */
export class NoServerError extends Error {
  override name = 'NoServerError';
}

/** Asks the server running on `dataDir` to write a backup to `file` (absolute). */
export function requestBackup(dataDir: string, file: string): Promise<BackupSummary> {
  const address = controlSocketAddress(dataDir);
  if (!address) return Promise.reject(new NoServerError('the data dir’s path is too long for a control socket'));
  return new Promise((resolve, reject) => {
    const socket = net.connect(address);
    let received = '';
    let connected = false;
    socket.on('connect', () => {
      connected = true;
      socket.write(`${JSON.stringify({ command: 'backup', file })}\n`);
    });
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('error', (error: NodeJS.ErrnoException) => {
      if (!connected && (error.code === 'ENOENT' || error.code === 'ECONNREFUSED')) reject(new NoServerError(error.message));
      else reject(new BackupError(`The server's control socket failed: ${error.message}`));
    });
    socket.on('close', () => {
      if (!connected) return;
      let reply: { ok?: boolean; error?: string } & Partial<BackupSummary>;
      try {
        reply = JSON.parse(received) as typeof reply;
      } catch {
        return reject(new BackupError('The server closed its control socket before the backup was written (did it stop?).'));
      }
      if (reply.ok) resolve({ file: reply.file!, bytes: reply.bytes!, migration: reply.migration!, createdAt: reply.createdAt! });
      else reject(new BackupError(`The server did not write the backup: ${reply.error ?? 'no reason given'}`));
    });
  });
}
