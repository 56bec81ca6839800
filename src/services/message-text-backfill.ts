import type { Kysely } from 'kysely';
import type { DB } from '../db/schema.js';
import { withTransaction } from '../db/transaction.js';
import type { MessageKey, MessageText, MessageTextsRepository } from '../repositories/message-store/message-texts.repository.js';
import { shownTextOfRow } from './views/shown-messages.js';

/** Messages read by one statement of the backfill: few enough that each statement is short. */
const BACKFILL_BATCH = 1_000;

export interface BackfillProgress {
  /** Messages read so far, and of them given a stored text. */
  read: number;
  stored: number;
}

/**
 * Gives the messages stored without a stored text (messages.shown: those stored before migration
 * 0017) the text a send would have stored with them, so that history pages read them as fast as
 * new ones (docs/performance-log.md, "Stored message text"). Every app's messages, in key order, a batch at a time; a
 * message changed since it was stored (or while the backfill reads it) keeps none and is rendered
 * from its columns as before. Run by `parley messages backfill-texts`; safe beside running
 * servers, and again.
 */
export class MessageTextBackfill {
  constructor(private readonly deps: { db: Kysely<DB>; texts: MessageTextsRepository }) {}

  async run(options: { batch?: number | undefined; onBatch?: (progress: BackfillProgress) => void } = {}): Promise<BackfillProgress> {
    const progress: BackfillProgress = { read: 0, stored: 0 };
    for (let after: MessageKey | undefined; ; ) {
      const { read, last, untexted } = await this.deps.texts.scan(after, options.batch ?? BACKFILL_BATCH);
      if (last === undefined) return progress;
      const texts: MessageText[] = [];
      for (const { row, rowVersion } of untexted) {
        const shown = shownTextOfRow(row);
        if (shown !== null) texts.push({ appId: row.app_id, id: String(row.id), rowVersion, shown });
      }
      progress.read += read;
      progress.stored += await this.store(texts);
      options.onBatch?.(progress);
      after = last;
    }
  }

  /** A batch's texts, in one transaction (retried after a deadlock with a concurrent change). */
  private store(texts: MessageText[]): Promise<number> {
    return texts.length === 0 ? Promise.resolve(0) : withTransaction(this.deps.db, 'store_message_texts', (tx) => this.deps.texts.store(texts, tx));
  }
}
