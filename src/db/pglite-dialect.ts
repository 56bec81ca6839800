import type { PGlite } from '@electric-sql/pglite';
import { acquireTimeout, translateDriverError } from './driver-errors.js';
import {
  CompiledQuery,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  type DatabaseConnection,
  type DatabaseIntrospector,
  type Dialect,
  type DialectAdapter,
  type Driver,
  type Kysely,
  type QueryCompiler,
  type QueryResult,
  type TransactionSettings,
} from 'kysely';

/**
 * Kysely over PGlite. PGlite is one PostgreSQL backend with one session, so the driver hands
 * out that single connection to one holder at a time: a transaction keeps it until it ends and
 * every other query waits in line. The SQL is PostgreSQL's, unchanged.
 */
export class PGliteDialect implements Dialect {
  constructor(
    private readonly pg: PGlite,
    /** Longest wait in line for the session; then the caller gets acquireTimeout (a 503). */
    private readonly acquireMs: number,
    private readonly line = new SessionLine(),
  ) {}

  createAdapter(): DialectAdapter {
    return new PostgresAdapter();
  }
  createDriver(): Driver {
    return new PGliteDriver(this.pg, this.acquireMs, this.line);
  }
  createQueryCompiler(): QueryCompiler {
    return new PostgresQueryCompiler();
  }
  // biome-ignore lint/suspicious/noExplicitAny: the signature of Kysely's Dialect interface
  createIntrospector(db: Kysely<any>): DatabaseIntrospector {
    return new PostgresIntrospector(db);
  }
}

/** The line for the one session: who holds it or waits, and the waits so far (Database.poolStats). */
export class SessionLine {
  /** The caller using the session and those in line for it. */
  holders = 0;
  acquired = 0;
  waited = 0;
  waitedMs = 0;
  timeouts = 0;
}

class PGliteDriver implements Driver {
  private readonly connection: PGliteConnection;
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly pg: PGlite,
    private readonly acquireMs: number,
    private readonly line: SessionLine,
  ) {
    this.connection = new PGliteConnection(pg);
  }

  async init(): Promise<void> {
    await this.pg.waitReady;
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    let passOn!: () => void;
    const turn = new Promise<void>((resolve) => (passOn = resolve));
    const line = this.line;
    // The clock is read only when there is a line to wait in.
    const waitedFrom = line.holders++ > 0 ? performance.now() : undefined;
    const release = () => {
      line.holders--;
      passOn();
    };
    const previous = this.queue;
    this.queue = previous.then(() => turn);
    // A caller that gave up keeps its place in line, and passes its turn on at once.
    let gaveUp = false;
    let timer: NodeJS.Timeout | undefined;
    const waited = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        gaveUp = true;
        line.timeouts++;
        reject(acquireTimeout(this.acquireMs));
      }, this.acquireMs);
    });
    void previous.then(() => {
      if (gaveUp) release();
    });
    try {
      await Promise.race([previous, waited]);
    } finally {
      clearTimeout(timer);
    }
    line.acquired++;
    if (waitedFrom !== undefined) {
      line.waited++;
      line.waitedMs += performance.now() - waitedFrom;
    }
    this.connection.release = release;
    return this.connection;
  }

  async beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    let statement = 'begin';
    if (settings.isolationLevel) statement += ` isolation level ${settings.isolationLevel}`;
    if (settings.accessMode) statement += ` ${settings.accessMode}`;
    await connection.executeQuery(CompiledQuery.raw(statement));
  }

  async commitTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('commit'));
  }

  async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('rollback'));
  }

  async releaseConnection(connection: DatabaseConnection): Promise<void> {
    (connection as PGliteConnection).release();
  }

  async destroy(): Promise<void> {
    await this.queue;
    if (!this.pg.closed) await this.pg.close();
  }
}

const ROW_COUNT_COMMANDS = new Set(['INSERT', 'UPDATE', 'DELETE', 'MERGE']);

class PGliteConnection implements DatabaseConnection {
  release: () => void = () => {};

  constructor(private readonly pg: PGlite) {}

  async executeQuery<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.run<R>(compiled);
    } catch (error) {
      // Driver errors are translated here, once, for every statement (see driver-errors.ts).
      throw translateDriverError(error);
    }
  }

  private async run<R>(compiled: CompiledQuery): Promise<QueryResult<R>> {
    // Without parameters use the simple protocol, as `pg` does, so scripts of several
    // statements (migrations) run as one call.
    if (compiled.parameters.length === 0) {
      const results = await this.pg.exec(compiled.sql);
      const last = results[results.length - 1];
      return toQueryResult<R>(last?.rows ?? [], last?.affectedRows, last?.command);
    }
    const result = await this.pg.query<R>(compiled.sql, compiled.parameters as unknown[], { rowMode: 'object' });
    return toQueryResult<R>(result.rows, result.affectedRows, result.command);
  }

  // biome-ignore lint/correctness/useYield: PGlite has no cursors; this generator only throws to say so
  async *streamQuery<R>(): AsyncIterableIterator<QueryResult<R>> {
    throw new Error('Streaming queries are not supported on the embedded database.');
  }
}

function toQueryResult<R>(rows: unknown[], affectedRows: number | undefined, command: string | undefined): QueryResult<R> {
  const counts = command === undefined || ROW_COUNT_COMMANDS.has(command.toUpperCase());
  return {
    rows: rows as R[],
    numAffectedRows: counts && affectedRows !== undefined ? BigInt(affectedRows) : undefined,
  };
}
