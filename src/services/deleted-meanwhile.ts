import { ForeignKeyViolation } from '../db/driver-errors.js';

/**
 * Runs `work` again when a row it names was deleted between its checks and its write (the
 * database refused the write with a foreign key violation), so that the request is answered as if
 * the delete had come first: its checks then see the row gone and answer the vendor's not-found
 * error. Bounded: a row cannot be deleted twice, so a second violation is rare and a third is
 * thrown.
 */
export async function againIfDeletedMeanwhile<T>(work: () => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await work();
    } catch (error) {
      if (!(error instanceof ForeignKeyViolation) || attempt >= attempts) throw error;
    }
  }
}
