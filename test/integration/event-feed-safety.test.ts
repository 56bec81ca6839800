/**
 * The event feed's safe id (docs/events.md) never passes an event that a running transaction
 * drew, even when that transaction has the newest transaction id and nothing newer has ended
 * (then the snapshot's xmax is not past it, and its xmin does not count it); and a transaction
 * in another database holds nothing back. PostgreSQL only: PGlite runs one transaction at a time.
 */
import assert from 'node:assert/strict';
import pg from 'pg';
import { after, before, describe, it } from 'node:test';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { ADMIN_URL, TEST_ENGINE } from '../helpers/db.js';

describe('the event feed’s safe id', { skip: TEST_ENGINE !== 'postgres' && 'PostgreSQL only' }, () => {
  let t: TestApp;
  before(async () => {
    t = await createTestApp();
  });
  after(async () => {
    await t?.close();
  });

  const insertEvent = async (client: pg.Client) => String((await client.query(`insert into events (app_id, trigger, data) values ($1, 'user_blocked', '{}') returning id`, [t.appA.appId])).rows[0].id);

  it('stays below an event drawn by a transaction still running with the newest transaction id, and passes it once it commits', async () => {
    const feed = t.services.eventFeed;
    const writer = new pg.Client({ connectionString: t.url });
    await writer.connect();
    try {
      const committed = await insertEvent(writer);
      for (let n = 0; n < 3; n++) await feed.poll();
      assert.ok(feed.safeId! >= BigInt(committed));
      await writer.query('begin');
      const open = await insertEvent(writer);
      for (let n = 0; n < 4; n++) await feed.poll();
      assert.ok(feed.safeId! < BigInt(open), `safe id ${feed.safeId} passed the open transaction's event ${open}`);
      await writer.query('commit');
      for (let n = 0; n < 3; n++) await feed.poll();
      assert.ok(feed.safeId! >= BigInt(open));
    } finally {
      await writer.query('rollback').catch(() => undefined);
      await writer.end();
    }
  });

  it('is not held back by a write transaction in another database', async () => {
    const feed = t.services.eventFeed;
    const writer = new pg.Client({ connectionString: t.url });
    const elsewhere = new pg.Client({ connectionString: ADMIN_URL });
    await writer.connect();
    await elsewhere.connect();
    try {
      await elsewhere.query('begin');
      await elsewhere.query('create temp table held (n int)');
      await elsewhere.query('insert into held values (1)');
      const event = await insertEvent(writer);
      for (let n = 0; n < 3; n++) await feed.poll();
      assert.ok(feed.safeId! >= BigInt(event));
    } finally {
      await elsewhere.query('rollback').catch(() => undefined);
      await Promise.all([writer.end(), elsewhere.end()]);
    }
  });
});
