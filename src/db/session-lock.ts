import { sql, type Kysely } from 'kysely';
import pg from 'pg';
import type { Logger } from '../domain/context.js';
import type { DB } from './schema.js';

/**
 * A session-level advisory lock a process holds while it lives: its claims on shared work (the
 * event log's lanes, docs/events.md) name the lock's key, and whoever finds no session holding
 * that key knows the claimant is gone: a process killed outright loses its connection, and with
 * it the lock, at once.
 */
export interface SessionLock {
  readonly key: bigint;
  /** Whether the lock is held now (false while its connection is lost and not yet taken again). */
  held(): boolean;
  release(): Promise<void>;
}

/** How long a lost lock's connection waits before trying again. */
const RETRY_MS = 1_000;

/** The lock on PostgreSQL: a connection of its own, outside the pools, taken again after a loss. */
export async function holdSessionLock(url: string, key: bigint, log: Logger): Promise<SessionLock> {
  let client: pg.Client | undefined;
  let locked = false;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  const lost = (error: unknown) => {
    locked = false;
    log.warn({ err: error, retryInMs: RETRY_MS }, 'the consumers’ claim lock lost its connection; taking it again');
    if (!stopped) retry = setTimeout(() => void connect(), RETRY_MS).unref();
  };
  const connect = async (): Promise<void> => {
    // TCP keep-alive finds a dead peer; the lock itself needs no traffic.
    const candidate = new pg.Client({ connectionString: url, connectionTimeoutMillis: RETRY_MS * 5, keepAlive: true });
    candidate.on('error', (error) => {
      void candidate.end().catch(() => undefined);
      if (client === candidate) {
        client = undefined;
        lost(error);
      }
    });
    try {
      await candidate.connect();
      const result = await candidate.query<{ locked: boolean }>('select pg_try_advisory_lock($1::bigint) as locked', [key.toString()]);
      if (!result.rows[0]?.locked) throw new Error(`the advisory lock ${key} is another session's`);
    } catch (error) {
      await candidate.end().catch(() => undefined);
      return lost(error);
    }
    if (stopped) return void (await candidate.end().catch(() => undefined));
    client = candidate;
    locked = true;
  };
  await connect();
  return {
    key,
    held: () => locked,
    async release() {
      stopped = true;
      clearTimeout(retry);
      locked = false;
      const last = client;
      client = undefined;
      // Ending the session lets the lock go.
      await last?.end().catch(() => undefined);
    },
  };
}

/**
 * The lock on the embedded database: its one connection is this process's for as long as it
 * lives, so the lock is held until released (a process that starts after a crash finds none).
 */
export async function embeddedSessionLock(db: Kysely<DB>, key: bigint): Promise<SessionLock> {
  await sql`select pg_advisory_lock(${key.toString()}::bigint)`.execute(db);
  let held = true;
  return {
    key,
    held: () => held,
    async release() {
      if (!held) return;
      held = false;
      await sql`select pg_advisory_unlock(${key.toString()}::bigint)`.execute(db).catch(() => undefined);
    },
  };
}
