import type { Kysely, Transaction } from 'kysely';
import type { Logger } from '../domain/context.js';
import type { DB } from './schema.js';

export type Tx = Transaction<DB>;
/** Either the database or an open transaction: repositories accept both. */
export type Executor = Kysely<DB> | Transaction<DB>;

/** serialization_failure, deadlock_detected: safe to retry the whole unit of work. */
const RETRYABLE = new Set(['40001', '40P01']);
const MAX_ATTEMPTS = 4;

/**
 * Runs `work` as one named transaction, retrying a bounded number of times when PostgreSQL
 * aborts it for a serialization failure or a deadlock.
 */
export async function withTransaction<T>(
  db: Kysely<DB>,
  name: string,
  work: (tx: Tx) => Promise<T>,
  log?: Logger,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (!code || !RETRYABLE.has(code) || attempt >= MAX_ATTEMPTS) throw error;
      log?.warn({ tx: name, attempt, code }, 'transaction aborted; retrying');
      await new Promise((resolve) => setTimeout(resolve, 5 * attempt * Math.random()));
    }
  }
}
