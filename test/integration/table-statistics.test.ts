/**
 * The event queue's statistics (db/table-statistics.ts): analysed after its first rows
 * and then about each time it doubles, on a real database of each engine, so that its
 * statements are planned from statistics even where autovacuum is off or absent.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { Logger } from '../../src/domain/context.js';
import { silentLogger } from '../../src/domain/context.js';
import { WebhookDeliveriesRepository } from '../../src/repositories/webhook-deliveries.repository.js';
import { TableStatistics } from '../../src/db/table-statistics.js';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

let t: TestDatabase;
let deliveries: WebhookDeliveriesRepository;
before(async () => {
  t = await createTestDatabase();
  deliveries = new WebhookDeliveriesRepository(t.database.db);
  await sql`insert into webhooks (app_id, id, name, url, signing_secret, triggers) values ('stats-app', 'hook', 'Hook', 'https://example.com/hook', 'secret', '{message_sent}')`.execute(t.database.db);
});
after(async () => {
  await t?.drop();
});

/** Adds `n` events and a pending delivery of each to the queue. */
async function addDeliveries(n: number): Promise<void> {
  await sql`
    with made as (
      insert into events (app_id, trigger, conversation_id, data)
      select 'stats-app', 'message_sent', 'c' || i, '{}'::json from generate_series(1, ${n}::int) as i
      returning id, trigger, conversation_id)
    insert into event_deliveries (app_id, consumer, target, event_id, trigger, lane)
    select 'stats-app', 'webhooks', 'hook', id, trigger, conversation_id from made`.execute(t.database.db);
}

/** Whether the planner has column statistics of the deliveries table. */
async function hasStatistics(): Promise<boolean> {
  const rows = await sql<{ n: number }>`select count(*)::int as n from pg_stats where tablename = 'event_deliveries'`.execute(t.database.db);
  return rows.rows[0]!.n > 0;
}

describe('the webhook queue’s statistics', () => {
  it('are made after the first rows written, then again once the rows written since reach the table’s size', async () => {
    const sizes: number[] = [];
    const statistics = new TableStatistics({
      analyze: async () => {
        const size = await deliveries.analyze();
        sizes.push(size);
        return size;
      },
      firstAfter: 30,
      what: 'ANALYZE of the webhook queue',
    });
    assert.equal(await hasStatistics(), false);
    await addDeliveries(20);
    statistics.noteWritten(20, silentLogger);
    await statistics.idle();
    assert.deepEqual(sizes, [], 'not before firstAfter rows');
    assert.equal(await hasStatistics(), false);

    await addDeliveries(20);
    statistics.noteWritten(20, silentLogger);
    await statistics.idle();
    assert.deepEqual(sizes, [40], 'the analysis answers the table’s size');
    assert.equal(await hasStatistics(), true);

    // Next after 40 more rows (the size then), not after firstAfter.
    await addDeliveries(30);
    statistics.noteWritten(30, silentLogger);
    await statistics.idle();
    assert.deepEqual(sizes, [40]);
    await addDeliveries(10);
    statistics.noteWritten(10, silentLogger);
    await statistics.idle();
    assert.deepEqual(sizes, [40, 80]);
  });

  it('runs one analysis at a time, and one that fails is logged and tried again after more writes', async () => {
    const warnings: string[] = [];
    const log = { warn: (_fields: unknown, message: string) => warnings.push(message) } as unknown as Logger;
    let calls = 0;
    let release: () => void = () => undefined;
    const statistics = new TableStatistics({
      analyze: async () => {
        calls++;
        if (calls === 1) {
          await new Promise<void>((resolve) => (release = resolve));
          throw new Error('permission denied');
        }
        return deliveries.analyze();
      },
      firstAfter: 5,
      what: 'ANALYZE of the webhook queue',
    });
    statistics.noteWritten(5, log);
    statistics.noteWritten(2, log);
    assert.equal(calls, 1, 'no second analysis while one runs');
    release();
    await statistics.idle();
    assert.deepEqual(warnings, ['ANALYZE of the webhook queue failed; tried again after more writes']);
    // The rows written since the failed one began count towards the next.
    statistics.noteWritten(2, log);
    assert.equal(calls, 1);
    statistics.noteWritten(1, log);
    await statistics.idle();
    assert.equal(calls, 2);
    assert.equal(warnings.length, 1);
  });
});
