import { ForeignKeyViolation } from '../db/driver-errors.js';

/**
 * Runs `work` again when a row it names was deleted between its checks and its write (the
 * database refused the write with a foreign key violation), so that the request is answered as if
 * the delete had come first: its checks then see the row gone and answer the vendor's not-found
 * error. Bounded: a row cannot be deleted twice, so a second violation is rare and a third is
 * thrown.
 */
export function againIfDeletedMeanwhile<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  // A promise chain, not an async loop: a send runs this, and the common path is one call.
  return work().catch((error: unknown) => {
    if (!(error instanceof ForeignKeyViolation) || attempts <= 1) throw error;
    return againIfDeletedMeanwhile(work, attempts - 1);
  });
}
