import { AppError } from '../domain/errors.js';

/**
 * Driver errors, translated once, where every statement runs (database.ts for PostgreSQL,
 * pglite-dialect.ts for PGlite): a unique or foreign key violation arrives as these classes,
 * which services turn into catalogue errors. Both `pg` and PGlite put the SQLSTATE in `code`.
 */
export class UniqueViolation extends Error {
  override name = 'UniqueViolation';
  constructor(
    readonly constraint: string | undefined,
    cause: unknown,
  ) {
    super(`unique violation${constraint ? ` on ${constraint}` : ''}`, { cause });
  }
}

export class ForeignKeyViolation extends Error {
  override name = 'ForeignKeyViolation';
  constructor(
    readonly constraint: string | undefined,
    cause: unknown,
  ) {
    super(`foreign key violation${constraint ? ` on ${constraint}` : ''}`, { cause });
  }
}

const SQLSTATE = /^[0-9A-Z]{5}$/;

/** The SQLSTATE of a driver error, or of the driver error a translated one wraps. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && SQLSTATE.test(code)) return code;
  const cause = (error as { cause?: unknown } | null)?.cause;
  return cause !== undefined && cause !== error ? sqlState(cause) : undefined;
}

/** serialization_failure, deadlock_detected: the work may be run again as it was. */
export function isRetryable(error: unknown): boolean {
  const state = sqlState(error);
  return state === '40001' || state === '40P01';
}

/**
 * Whether the database refused the data of a statement (class 22, data exception: e.g. text it
 * cannot store; class 23, integrity constraint violation), as opposed to failing whatever the
 * data (a lost connection, a timeout, a cancelled query): only then can running the items of a
 * shared statement apart tell which item was at fault.
 */
export function isDataError(error: unknown): boolean {
  const state = sqlState(error);
  return state !== undefined && (state.startsWith('22') || state.startsWith('23'));
}

export function translateDriverError(error: unknown): unknown {
  const { code, constraint } = (error ?? {}) as { code?: string; constraint?: string };
  if (code === '23505') return new UniqueViolation(constraint, error);
  if (code === '23503') return new ForeignKeyViolation(constraint, error);
  return error;
}

/** Seconds a client is told to wait after the database was busy or unreachable. */
const RETRY_AFTER_BUSY = 1;
const RETRY_AFTER_TIMEOUT = 5;

/** The pool had no free connection within its acquisition timeout (PostgreSQL's pool, or PGlite's one session). */
export function acquireTimeout(waitedMs: number, cause?: unknown): AppError {
  return new AppError('ERR_MISSION_FAILED', {
    message: `The server is busy: no database connection was free within ${waitedMs / 1000} s. Retry later.`,
    retryAfter: RETRY_AFTER_BUSY,
    cause,
  });
}

/**
 * A failure that is the database's state, not the request's: a timeout (statement_timeout,
 * idle_in_transaction_session_timeout, lock_timeout), a server shutting down or refusing
 * connections, a lost connection. As ERR_MISSION_FAILED (503, with Retry-After), or undefined
 * for any other error.
 */
export function unavailable(error: unknown): AppError | undefined {
  if (error instanceof AppError) return undefined;
  const state = sqlState(error);
  const message = (error as { message?: unknown } | null)?.message;
  if (state === '57014' || state === '55P03' || state === '25P03') {
    return new AppError('ERR_MISSION_FAILED', {
      message: 'The database did not complete the request in time. Retry later.',
      retryAfter: RETRY_AFTER_TIMEOUT,
      cause: error,
    });
  }
  const lost =
    (state !== undefined && (state.startsWith('08') || state.startsWith('57P') || state === '53300')) ||
    (state === undefined && typeof message === 'string' && /^(Connection terminated|timeout exceeded when trying to connect)|ECONNREFUSED|ECONNRESET/.test(message));
  if (!lost) return undefined;
  return new AppError('ERR_MISSION_FAILED', {
    message: 'The database cannot be reached right now. Retry later.',
    retryAfter: RETRY_AFTER_TIMEOUT,
    cause: error,
  });
}
