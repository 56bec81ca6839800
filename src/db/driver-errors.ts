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
