/**
 * Driver errors, translated once. Repositories rethrow these; services turn them into
 * catalogue errors. Both `pg` and PGlite put the SQLSTATE in `code`.
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

/** The SQLSTATE of a driver error, or of the driver error a translated one wraps. */
export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') return code;
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

/** Runs a query, translating driver errors. */
export async function translated<T>(query: () => Promise<T>): Promise<T> {
  try {
    return await query();
  } catch (error) {
    throw translateDriverError(error);
  }
}
