import type { Kysely, Transaction } from 'kysely';
import type { Logger } from '../domain/context.js';
import { isRetryable, sqlState } from './driver-errors.js';
import type { DB } from './schema.js';

export type Tx = Transaction<DB>;
/** Either the database or an open transaction: repositories accept both. */
export type Executor = Kysely<DB> | Transaction<DB>;

const MAX_ATTEMPTS = 4;

/**
 * Runs `work` as one named transaction, retrying a bounded number of times when PostgreSQL
 * aborts it for a serialization failure or a deadlock.
 */
export async function withTransaction<T>(db: Kysely<DB>, name: string, work: (tx: Tx) => Promise<T>, log?: Logger): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await db.transaction().execute(work);
    } catch (error) {
      if (!isRetryable(error) || attempt >= MAX_ATTEMPTS) throw error;
      log?.warn({ tx: name, attempt, code: sqlState(error) }, 'transaction aborted; retrying');
      await retryPause(attempt);
    }
  }
}

/** A short random pause before the `attempt`-th retry, so racing retries fall apart. */
export function retryPause(attempt: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 5 * attempt * Math.random()));
}
