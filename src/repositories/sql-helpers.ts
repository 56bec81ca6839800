import { sql, type RawBuilder } from 'kysely';

/** Escapes LIKE wildcards so that user input matches literally. */
export function escapeLike(value: string): string {
  return value.replace(/[\\%_]/g, (char) => `\\${char}`);
}

/**
 * `= any($1::text[])`, for `.where(column, '=', anyOf(values))`: one statement text (and one
 * prepared plan) for any number of values, where `in ($1, $2, ...)` makes one per count.
 */
export function anyOf(values: readonly string[]): RawBuilder<string> {
  return sql<string>`any(${values}::text[])`;
}
