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

/**
 * The messages of one conversation, as a condition on the messages table `alias`: all of them,
 * or those after or before an id. `conversation` and the id are SQL expressions (a parameter,
 * or a column of an outer row), never values.
 *
 * Written as ranges of (conversation_id, id), `(conversation_id, id) > (c, after) and
 * conversation_id <= c` rather than `conversation_id = c and id > after`: the same rows, but
 * only the conversation's index (app_id, conversation_id, id) can serve them. With the
 * equality, the app's primary key (app_id, id) served them as well, and where the statistics
 * say the app's messages are nearly all in one conversation (taken before the others grew:
 * after an import, or with autovacuum behind) PostgreSQL walked the app's messages past every
 * other conversation's: the whole app for a short conversation's page, its unread count, or
 * its last message (docs/performance-log.md, "Plans that walked the app's messages"). Read them in conversationMessagesOrder, which only
 * that index gives (an equality would also make ordering by the conversation redundant).
 */
export function conversationMessages(alias: string, conversation: string, from?: { after: string } | { before: string }): string {
  const c = `${conversation} collate "C"`;
  const column = `${alias}.conversation_id`;
  if (from === undefined) return `${column} >= ${c} and ${column} <= ${c}`;
  return 'after' in from ? `(${column}, ${alias}.id) > (${c}, ${from.after}) and ${column} <= ${c}` : `(${column}, ${alias}.id) < (${c}, ${from.before}) and ${column} >= ${c}`;
}

/** The order of conversationMessages: by (conversation_id, id), oldest or newest first. */
export function conversationMessagesOrder(alias: string, direction: 'asc' | 'desc'): string {
  return `order by ${alias}.conversation_id ${direction}, ${alias}.id ${direction}`;
}
