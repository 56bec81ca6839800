import { sql, type Compilable, type RawBuilder } from 'kysely';

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

/**
 * `any(array(<keys>))`, for `.where(column, '=', anyOfQuery(keys))`: the rows whose key a
 * subquery gives (a deep page's keys, found in an index first). Not `in (<keys>)`: with that,
 * the generic plan of the prepared statement hashes the keys and scans the whole table.
 */
export function anyOfQuery(keys: Compilable): RawBuilder<string> {
  return sql<string>`any(array(${keys}))`;
}
