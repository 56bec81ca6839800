import type { Kysely } from 'kysely';
import type { DB } from '../../db/schema.js';

/**
 * Where each consumer's fan-out stands in the event log, for the metrics' lag (docs/metrics.md):
 * the lowest cursor of its apps. Every fan-out step moves the cursors of the apps with nothing
 * new up to the safe id, so the lowest is the app furthest behind. One row per app and consumer,
 * read once a scrape.
 */
export class EventLagRepository {
  constructor(private readonly db: Kysely<DB>) {}

  async lowestCursors(): Promise<Array<{ consumer: string; eventId: string }>> {
    const rows = await this.db
      .selectFrom('event_cursors')
      .select(['consumer', (eb) => eb.fn.min('event_id').as('event_id')])
      .groupBy('consumer')
      .execute();
    return rows.map((row) => ({ consumer: row.consumer, eventId: String(row.event_id) }));
  }
}
