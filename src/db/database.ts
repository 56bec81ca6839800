import fs from 'node:fs';
import path from 'node:path';
import { PGlite, types } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql, type PostgresPool } from 'kysely';
import pg from 'pg';
import { DEFAULT_CONSUMER_POOL_SIZE, DEFAULT_DB_TIMEOUTS, type DatabaseTimeouts } from '../config.js';
import type { Logger } from '../domain/context.js';
import { DataDirLock } from './data-dir-lock.js';
import { acquireTimeout, translateDriverError, unavailable } from './driver-errors.js';
import { PGliteDialect, SessionLine } from './pglite-dialect.js';
import { createClusterIfNew } from './pglite-cluster.js';
import { DEFAULT_PGLITE_SETTINGS, pgliteStartParams } from './pglite-start.js';
import { embeddedSessionLock, holdSessionLock, type SessionLock } from './session-lock.js';
import { TableStatistics } from './table-statistics.js';
import { parseTimestamptz } from './timestamps.js';
import type { DB } from './schema.js';

export type Engine = 'postgres' | 'pglite';

export interface Database {
  readonly engine: Engine;
  readonly db: Kysely<DB>;
  /**
   * Tells the database that a bulk write of `rows` rows just committed. PGlite has no
   * autovacuum, so after enough such rows it runs VACUUM ANALYZE to keep the planner's
   * statistics fresh. PostgreSQL's own autovacuum does this already.
   */
  noteBulkWrite(rows: number): void;
  /** Runs VACUUM ANALYZE now. */
  vacuumAnalyze(): Promise<void>;
  /** The embedded database only: a tarball of its data dir (a backup, or a test template). */
  dumpDataDir?(): Promise<Blob>;
  /**
   * PostgreSQL only: calls `onNotify` on each NOTIFY of `channel` (from any process) with its
   * payload (undefined when empty), on a connection of its own, reconnecting after a loss (and
   * calling `onNotify()` then, with no payload: a signal may have been missed). Answers the function that stops listening. (The embedded database is one
   * process's alone: nothing else commits to it.)
   */
  listen?(channel: string, onNotify: (payload?: string) => void, log: Logger): Promise<() => Promise<void>>;
  /**
   * Where the event log's consumers read and write (docs/events.md): on PostgreSQL a small pool
   * of their own, so requests holding every connection of `db` do not stop them; `db` itself on
   * the embedded database (one connection).
   */
  readonly consumerDb: Kysely<DB>;
  /**
   * Holds the session-level advisory lock `key` while this process lives (see SessionLock): on
   * PostgreSQL on a connection of its own, taken again after a loss; on the embedded database on
   * its one connection. Answers the lock, to ask whether it is held and to let it go.
   */
  holdLock(key: bigint, log: Logger): Promise<SessionLock>;
  /** Each pool's connections and waits now (the metrics read them: docs/metrics.md). */
  poolStats(): PoolStats[];
  close(): Promise<void>;
}

/** One pool's connections and the waits for them. */
export interface PoolStats {
  /** `requests`: the requests' pool (`db`); `consumers`: the event log consumers' own (PostgreSQL). */
  pool: 'requests' | 'consumers';
  /** Connections it may open, has open, and has idle (the embedded database: one, busy or not). */
  max: number;
  open: number;
  idle: number;
  /** Callers waiting for a connection now. */
  waiting: number;
  /** Since it opened: connections handed out, those a caller had to wait for, the time waited (ms), the waits that timed out. */
  acquired: number;
  waited: number;
  waitedMs: number;
  timeouts: number;
}

/** The running totals of a pool's waits (PoolStats). */
export type PoolWaits = Pick<PoolStats, 'acquired' | 'waited' | 'waitedMs' | 'timeouts'>;

export const noWaits = (): PoolWaits => ({ acquired: 0, waited: 0, waitedMs: 0, timeouts: 0 });

export type DatabaseOptions =
  | { engine: 'postgres'; url: string; poolSize?: number; consumerPoolSize?: number; timeouts?: DatabaseTimeouts; log: Logger }
  | {
      engine: 'pglite';
      /** Only acquireMs applies: the embedded database runs one statement at a time, in this process. */
      timeouts?: DatabaseTimeouts;
      /** Directory of the embedded database; omitted for an in-memory database (tests). */
      dataDir?: string;
      /** A dump to start from (tests use a migrated template). */
      loadDataDir?: Blob;
      /** PostgreSQL settings (`name=value`) over DEFAULT_PGLITE_SETTINGS (PARLEY_PGLITE_SETTINGS). */
      settings?: readonly string[];
      log: Logger;
    };

/** How long a pooled PostgreSQL connection may sit idle before it is closed. */
export const POOL_IDLE_TIMEOUT_MS = 5 * 60_000;

/** Rows written in bulk after which PGlite is vacuumed and analysed. */
const PGLITE_VACUUM_THRESHOLD = 5_000;

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  return options.engine === 'postgres' ? openPostgres(options) : openPGlite(options);
}

async function openPostgres(options: { url: string; poolSize?: number; consumerPoolSize?: number; timeouts?: DatabaseTimeouts; log: Logger }): Promise<Database> {
  const timeouts = options.timeouts ?? DEFAULT_DB_TIMEOUTS;
  const { db, stats: requestsPool } = postgresKysely(options.url, options.poolSize ?? 20, timeouts, options.log);
  // The event log's consumers read and write through a small pool of their own, so that they
  // keep moving while requests hold every connection of the main one (docs/events.md).
  const { db: consumerDb, stats: consumersPool } = postgresKysely(options.url, options.consumerPoolSize ?? DEFAULT_CONSUMER_POOL_SIZE, timeouts, options.log);
  try {
    await sql`select 1`.execute(db);
  } catch (error) {
    await db.destroy();
    await consumerDb.destroy();
    throw new Error(`Cannot connect to PostgreSQL at ${redactUrl(options.url)}: ${(error as Error).message}`, {
      cause: error,
    });
  }
  return {
    engine: 'postgres',
    db,
    consumerDb,
    listen: (channel, onNotify, log) => listenTo(options.url, channel, onNotify, log),
    holdLock: (key, log) => holdSessionLock(options.url, key, log),
    poolStats: () => [requestsPool('requests'), consumersPool('consumers')],
    noteBulkWrite() {},
    async vacuumAnalyze() {
      await sql`vacuum analyze`.execute(db);
    },
    async close() {
      await consumerDb.destroy();
      await db.destroy();
    },
  };
}

function postgresKysely(url: string, max: number, timeouts: DatabaseTimeouts, log: Logger): { db: Kysely<DB>; stats: (name: PoolStats['pool']) => PoolStats } {
  const pool = new pg.Pool({
    connectionString: url,
    max,
    // A request waits at most this long for a connection (then 503), and no statement or
    // transaction left open can hold locks and connections for ever (docs/timeouts.md).
    connectionTimeoutMillis: timeouts.acquireMs,
    statement_timeout: timeouts.statementMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    // No JIT compilation: Parley's statements are short, and a coalesced one is costed for the
    // 100 records PostgreSQL assumes of json_to_recordset, so a page costed over 1,000 would be
    // compiled at 50–800 ms a run (docs/performance-log.md, "JIT compilation, turned off"). A connection string's own options win.
    options: '-c jit=off',
    // pg closes a client idle for 10 s by default. Its replacement is a new backend that plans
    // every statement anew: after a quiet spell of 12 s a send took ~50 ms instead of 4–18 ms.
    idleTimeoutMillis: POOL_IDLE_TIMEOUT_MS,
    types: {
      getTypeParser: ((oid: number, format?: 'text' | 'binary') => (oid === pg.types.builtins.TIMESTAMPTZ ? parseTimestamptz : pg.types.getTypeParser(oid, format))) as typeof pg.types.getTypeParser,
    },
  });
  // An idle client that loses its server emits 'error'; without a listener that kills the process.
  pool.on('error', (error) => log.warn({ err: error }, 'idle PostgreSQL client failed'));
  const waits = noWaits();
  const stats = (name: PoolStats['pool']): PoolStats => ({ pool: name, max, open: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount, ...waits });
  return { db: new Kysely<DB>({ dialect: new PostgresDialect({ pool: preparingPool(pool, timeouts.acquireMs, log, waits) }) }), stats };
}

/** How long a lost LISTEN connection waits before its first try to connect again; each failed try doubles it. */
const LISTEN_RETRY_MS = 1_000;
/** The longest wait between tries (the feed polls meanwhile: a missed signal only delays a wake). */
const LISTEN_RETRY_MAX_MS = 30_000;

/**
 * After `failures` failed tries in a row (the lost connection counts as the first): how long to
 * wait before the next, and how loudly to log the failure. An outage is logged once as a warning
 * (the first failure), its further tries at debug level, and its end once (see listenTo).
 */
export function listenRetry(failures: number): { delayMs: number; level: 'warn' | 'debug' } {
  const delayMs = Math.min(LISTEN_RETRY_MAX_MS, LISTEN_RETRY_MS * 2 ** Math.min(Math.max(0, failures - 1), 16));
  return { delayMs, level: failures <= 1 ? 'warn' : 'debug' };
}

/** Database.listen for PostgreSQL: one client of its own, outside the pool (a LISTEN holds its connection). */
async function listenTo(url: string, channel: string, onNotify: (payload?: string) => void, log: Logger): Promise<() => Promise<void>> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`not a plain channel name: ${channel}`);
  let client: pg.Client | undefined;
  let stopped = false;
  let retry: NodeJS.Timeout | undefined;
  /** Failed tries since the connection last stood. */
  let failures = 0;
  const failed = (error: unknown, what: string) => {
    failures++;
    const { delayMs, level } = listenRetry(failures);
    log[level]({ err: error, failures, retryInMs: delayMs }, `${what}; trying again (less often while it fails)`);
    if (!stopped) retry = setTimeout(() => void connect(), delayMs).unref();
  };
  const connect = async () => {
    // Bounded, so a stop never waits on an unreachable server; TCP keep-alive finds a dead peer.
    const candidate = new pg.Client({ connectionString: url, connectionTimeoutMillis: LISTEN_RETRY_MS * 5, keepAlive: true });
    candidate.on('notification', (message) => onNotify(message.payload || undefined));
    candidate.on('error', (error) => {
      void candidate.end().catch(() => undefined);
      if (client === candidate) {
        client = undefined;
        failed(error, `the LISTEN connection (${channel}) failed`);
      }
    });
    try {
      await candidate.connect();
      await candidate.query(`listen ${channel}`);
    } catch (error) {
      await candidate.end().catch(() => undefined);
      return failed(error, `could not LISTEN on ${channel}`);
    }
    if (stopped) return void (await candidate.end().catch(() => undefined));
    if (failures > 0) log.info({ failures }, `listening on ${channel} again`);
    failures = 0;
    client = candidate;
    onNotify();
  };
  await connect();
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const last = client;
    client = undefined;
    await last?.end().catch(() => undefined);
  };
}

/** Distinct statements given a name; past this, statements run unnamed (a bound on memory). */
const MAX_PREPARED_STATEMENTS = 2_000;

/**
 * Hands Kysely pool clients whose parameterised queries run as named prepared statements, so
 * PostgreSQL parses and plans each statement once per connection instead of on every call
 * (measured: about 1.8x the rate of unnamed queries for a keyed read).
 */
function preparingPool(pool: pg.Pool, acquireMs: number, log: Logger, waits: PoolWaits): PostgresPool {
  const names = new Map<string, string>();
  const patched = new WeakSet<pg.PoolClient>();
  const nameOf = (text: string) => {
    let name = names.get(text);
    if (!name && names.size < MAX_PREPARED_STATEMENTS) {
      name = `p${names.size}`;
      names.set(text, name);
    }
    return name;
  };
  const connect = async () => {
    let client: pg.PoolClient;
    // Timed only when every connection is taken: the clock is read on waits, not on every statement.
    const waitedFrom = pool.idleCount === 0 && pool.totalCount >= (pool.options.max ?? 10) ? performance.now() : undefined;
    try {
      client = await pool.connect();
    } catch (error) {
      const timedOut = /timeout/.test((error as Error).message);
      if (timedOut) waits.timeouts++;
      throw timedOut ? acquireTimeout(acquireMs, error) : (unavailable(error) ?? error);
    }
    waits.acquired++;
    if (waitedFrom !== undefined) {
      waits.waited++;
      waits.waitedMs += performance.now() - waitedFrom;
    }
    if (!patched.has(client)) {
      patched.add(client);
      // A connection the server ends while it is checked out (idle_in_transaction_session_timeout,
      // a restart) emits 'error' outside any query: without a listener that kills the process.
      // The query that next uses it fails instead, and the pool drops it when it is released.
      client.on('error', (error) => log.warn({ err: error }, 'PostgreSQL connection failed'));
      const query = client.query.bind(client) as (...args: unknown[]) => unknown;
      (client as { query: unknown }).query = (text: unknown, values?: unknown[]) => {
        // Anything but SQL text (a cursor) goes to pg as it is.
        if (typeof text !== 'string') return values === undefined ? query(text) : query(text, values);
        const name = values && values.length > 0 ? nameOf(text) : undefined;
        // pg's callback form, under a promise of our own: with the promise pg makes itself, each
        // query's results outlived two scavenges under load (~2 MB promoted per scavenge, pauses
        // of 7–9 ms); this way ~0.2 MB and 3.5–4 ms (docs/performance-log.md, "where the p99 comes from").
        return new Promise((resolve, reject) => query(name ? { name, text, values } : { text, values }, (error: unknown, result: unknown) => (error ? reject(error) : resolve(result)))).catch(
          (error: Error) => {
            // A stack that leads back to the caller, not to the socket read (as pg's promise does).
            Error.captureStackTrace(error);
            // Driver errors are translated here, once, for every statement (see driver-errors.ts).
            throw unavailable(error) ?? translateDriverError(error);
          },
        );
      };
    }
    return client;
  };
  return { connect, end: () => pool.end() };
}

async function openPGlite(options: { dataDir?: string; loadDataDir?: Blob; settings?: readonly string[]; timeouts?: DatabaseTimeouts; log: Logger }): Promise<Database> {
  let lock: DataDirLock | undefined;
  let pgDir: string | undefined;
  if (options.dataDir) {
    // PGlite's own mkdir is not recursive.
    fs.mkdirSync(options.dataDir, { recursive: true });
    lock = DataDirLock.acquire(options.dataDir);
    pgDir = path.join(options.dataDir, 'pglite');
  }
  let db: Kysely<DB>;
  let pglite: PGlite;
  const line = new SessionLine();
  const settings = [...DEFAULT_PGLITE_SETTINGS, ...(options.settings ?? [])];
  // What PostgreSQL writes while it starts (why it refused to, say); nothing after.
  let startErrors: string[] | undefined = [];
  try {
    // A new data dir's cluster: the prebuilt empty one, or initdb in a child process.
    if (pgDir && !options.loadDataDir) await createClusterIfNew(pgDir, settings, options.log);
    else if (pgDir) fs.mkdirSync(pgDir, { recursive: true });
    pglite = new PGlite({
      ...(pgDir ? { dataDir: pgDir } : {}),
      ...(options.loadDataDir ? { loadDataDir: options.loadDataDir } : {}),
      startParams: pgliteStartParams(settings),
      onStderr: (text) => {
        if (startErrors && startErrors.length < 10 && /\b(FATAL|PANIC|ERROR):/.test(text)) startErrors.push(text.replace(/^.*?\b(FATAL|PANIC|ERROR):\s*/, ''));
        return false;
      },
      // bigint as a string of digits, as `pg` returns it, so both engines read alike.
      parsers: { [types.INT8]: (value: string) => value, [types.TIMESTAMPTZ]: parseTimestamptz },
    });
    try {
      await pglite.waitReady;
    } catch (error) {
      throw startErrors.length > 0 ? new Error(`The embedded database did not start: ${startErrors.join('; ')}`, { cause: error }) : error;
    }
    startErrors = undefined;
    db = new Kysely<DB>({ dialect: new PGliteDialect(pglite, (options.timeouts ?? DEFAULT_DB_TIMEOUTS).acquireMs, line) });
  } catch (error) {
    lock?.release();
    throw error;
  }

  const vacuumAnalyze = async () => {
    await sql`vacuum analyze`.execute(db);
  };
  // No autovacuum in PGlite: after every PGLITE_VACUUM_THRESHOLD rows written in bulk.
  const afterBulkWrites = new TableStatistics({
    analyze: async () => {
      await vacuumAnalyze();
      return 0;
    },
    firstAfter: PGLITE_VACUUM_THRESHOLD,
    what: 'VACUUM ANALYZE',
  });
  return {
    engine: 'pglite',
    db,
    consumerDb: db,
    holdLock: (key) => embeddedSessionLock(db, key),
    poolStats: () => [
      {
        pool: 'requests',
        max: 1,
        open: 1,
        idle: line.holders === 0 ? 1 : 0,
        waiting: Math.max(0, line.holders - 1),
        acquired: line.acquired,
        waited: line.waited,
        waitedMs: line.waitedMs,
        timeouts: line.timeouts,
      },
    ],
    noteBulkWrite(rows: number) {
      afterBulkWrites.noteWritten(rows, options.log);
    },
    vacuumAnalyze,
    async dumpDataDir() {
      // Through the driver's queue, so no transaction is half-way when the files are read; after a
      // checkpoint, so the files hold every commit and a restore needs no WAL replay.
      return db.connection().execute(async (conn) => {
        await sql`checkpoint`.execute(conn);
        return pglite.dumpDataDir('none');
      });
    },
    async close() {
      await afterBulkWrites.idle();
      try {
        await db.destroy();
      } finally {
        lock?.release();
      }
    },
  };
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(unparseable URL)';
  }
}
