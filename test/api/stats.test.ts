import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { silentLogger } from '../../src/domain/context.js';
import { StatsRepository } from '../../src/repositories/stats/stats.repository.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, type TestApp } from '../helpers/app.js';
import { newUids } from '../helpers/factories.js';
import { newApp } from '../helpers/tenant-data.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
  t.services.statsAggregator.start(silentLogger);
});
after(async () => {
  await t.close();
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** 10:00 UTC two days ago: the recorded events' times are laid out from it. */
const T0 = Math.floor(Date.now() / DAY) * DAY - 2 * DAY + 10 * HOUR;

async function stats(app: CreatedApp, url: string, query: Record<string, string | number> = {}) {
  const response = await t.call(app, url, { query: Object.fromEntries(Object.entries(query).map(([k, v]) => [k, String(v)])) });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
}
const activeUsers = async (app: CreatedApp, fromDate: number, toDate: number) => (await stats(app, '/v3/stats', { fromDate, toDate })).metrics.active_users as number;
const points = async (app: CreatedApp, fromDate: number, toDate: number) =>
  ((await stats(app, '/v3/stats/messages', { fromDate, toDate })).dataPoints as any[]).map((p) => [p.messagesSent, p.readReceipts, p.deliveryReceipts]);

/** Records events in the app's log as if at `atMs` (what the message store and the services record, with chosen times). */
async function record(app: CreatedApp, events: Array<{ trigger: string; atMs: number; data?: unknown }>) {
  for (const event of events) {
    const at = new Date(event.atMs);
    if (event.data === undefined) {
      await sql`insert into events (app_id, trigger, message_id, created_at) values (${app.appId}, ${event.trigger}, 1, ${at})`.execute(t.database.db);
    } else {
      await sql`insert into events (app_id, trigger, data, created_at) values (${app.appId}, ${event.trigger}, ${JSON.stringify(event.data)}::json, ${at})`.execute(t.database.db);
    }
  }
}
const receipt = (trigger: 'message_read_receipt' | 'message_delivery_receipt', sender: string, atMs: number) => ({ trigger, atMs, data: { sender, type: 'receipts' } });

describe('counts from the API', () => {
  it('counts sends, read and delivery receipts in the last hour, and their users as active', async () => {
    const app = await newApp(t, 'Stats from the API');
    const [alice, bob, idle] = await newUids(t, app, 3);
    for (let n = 0; n < 3; n++) {
      const sent = await t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: alice!, body: { receiver: bob, receiverType: 'user', data: { text: `hi ${n}` } } });
      assert.equal(sent.statusCode, 200, sent.body);
    }
    for (const mark of ['delivered', 'read']) {
      const marked = await t.call(app, `/v3/users/${alice}/conversation/${mark}`, { method: 'POST', onBehalfOf: bob! });
      assert.equal(marked.statusCode, 200, marked.body);
    }
    await t.services.statsAggregator.settled();

    const data = await stats(app, '/v3/stats/messages');
    assert.deepEqual(Object.keys(data), ['startTime', 'endTime', 'dataPoints', 'appId']);
    assert.equal(data.appId, app.appId);
    assert.equal(Number(data.endTime) - Number(data.startTime), HOUR);
    assert.ok(Number(data.endTime) > Date.now() && Number(data.endTime) % 300_000 === 0, 'to the end of the five minutes under way');
    assert.equal(data.dataPoints.length, 12);
    data.dataPoints.forEach((p: any, n: number) => {
      assert.deepEqual(Object.keys(p), ['messagesSent', 'readReceipts', 'deliveryReceipts', 'startTime', 'endTime']);
      assert.equal(p.startTime, String(Number(data.startTime) + n * 300_000));
      assert.equal(p.endTime, String(Number(p.startTime) + 300_000));
    });
    const sum = (field: string) => data.dataPoints.reduce((n: number, p: any) => n + p[field], 0);
    assert.deepEqual([sum('messagesSent'), sum('readReceipts'), sum('deliveryReceipts')], [3, 1, 1]);

    const now = Math.floor(Date.now() / 1000);
    const usage = await stats(app, '/v3/stats', { fromDate: now - 600, toDate: now + 60 });
    assert.deepEqual(usage, {
      metrics: { audio_minutes: 0, video_minutes: 0, recorded_minutes: 0, active_users: 2, concurrent_users: 0 },
      time_range: { fromDate: (now - 600) * 1000, toDate: (now + 60) * 1000 },
    });
    assert.ok(idle, 'a user who did nothing is not counted');
    // The same range in milliseconds.
    assert.equal(await activeUsers(app, (now - 600) * 1000, (now + 60) * 1000), 2);
  });
});

describe('buckets and ranges', () => {
  let app: CreatedApp;
  before(async () => {
    app = await newApp(t, 'Stats of recorded times');
    await record(app, [
      { trigger: 'message_sent', atMs: T0 + 10_000 },
      { trigger: 'message_sent', atMs: T0 + 290_000 },
      { trigger: 'message_sent', atMs: T0 + 300_000 },
      // Not counted as sent: an edit's event, a mention (the same message's second event).
      { trigger: 'message_edited', atMs: T0 + 20_000 },
      { trigger: 'user_mentioned', atMs: T0 + 10_000 },
      receipt('message_read_receipt', 'u1', T0 + 600_000),
      receipt('message_delivery_receipt', 'u2', T0 + 601_000),
      receipt('message_read_receipt', 'u1', T0 + HOUR + 5_000),
      { trigger: 'message_reaction_added', atMs: T0 + HOUR + 10_000, data: { reaction: { uid: 'u3', reaction: '👍' } } },
      // The next day, 00:30 and 00:40.
      { trigger: 'group_member_joined', atMs: T0 + 14.5 * HOUR, data: { group: { guid: 'g' }, members: { u4: { uid: 'u4' } } } },
      { trigger: 'user_blocked', atMs: T0 + 14 * HOUR + 40 * 60_000, data: { users: { u6: { uid: 'u6' } }, by: { uid: 'u5' } } },
      // What the app itself does counts no user.
      { trigger: 'group_updated', atMs: T0 + 14 * HOUR + 50 * 60_000, data: { group: { guid: 'g' }, by: { uid: 'app_system' } } },
    ]);
    // Another app's events at the same times.
    await record(t.appB, [{ trigger: 'message_sent', atMs: T0 + 10_000 }, receipt('message_read_receipt', 'u1', T0 + 600_000), receipt('message_read_receipt', 'b1', T0 + 700_000)]);
    await t.services.statsAggregator.settled();
  });

  it('puts each count in its five-minute bucket, zeros included', async () => {
    const s = T0 / 1000;
    assert.deepEqual(await points(app, s, s + 900), [
      [2, 0, 0],
      [1, 0, 0],
      [0, 1, 1],
    ]);
    const data = await stats(app, '/v3/stats/messages', { fromDate: s, toDate: s + 900 });
    assert.deepEqual([data.startTime, data.endTime], [String(T0), String(T0 + 900_000)]);
    assert.deepEqual(
      data.dataPoints.map((p: any) => [p.startTime, p.endTime]),
      [0, 1, 2].map((n) => [String(T0 + n * 300_000), String(T0 + (n + 1) * 300_000)]),
    );
  });

  it('takes milliseconds as well as seconds, and rounds a range outwards to whole buckets', async () => {
    assert.deepEqual(await points(app, T0, T0 + 900_000), [
      [2, 0, 0],
      [1, 0, 0],
      [0, 1, 1],
    ]);
    assert.deepEqual(await points(app, T0 / 1000 + 20, T0 / 1000 + 40), [[2, 0, 0]]);
    assert.deepEqual(await points(app, T0 + 299_000, T0 + 301_000), [
      [2, 0, 0],
      [1, 0, 0],
    ]);
    assert.deepEqual(await points(app, T0 + 300_000, T0 + 300_000), [[1, 0, 0]], 'an empty range: its bucket');
  });

  it('counts the distinct users active in the UTC hours a range touches', async () => {
    const s = T0 / 1000;
    assert.equal(await activeUsers(app, s, s + 1800), 2, 'u1 and u2 at 10:00');
    assert.equal(await activeUsers(app, T0, T0 + 1_800_000), 2, 'the same range in milliseconds');
    assert.equal(await activeUsers(app, s, s + 7200), 3, 'u1 twice, u2, u3');
    assert.equal(await activeUsers(app, T0 + HOUR, T0 + HOUR + 60_000), 2, 'u1 and u3 at 11:00');
    assert.equal(await activeUsers(app, s, s + 15 * 3600), 5, 'across midnight: u4 joined, u5 blocked; not app_system');
    assert.equal(await activeUsers(app, T0 + 14 * HOUR, T0 + 14 * HOUR), 2, 'an empty range: its hour');
    assert.equal(await activeUsers(app, T0 + 2 * HOUR, T0 + 13 * HOUR), 0);
  });

  it("never counts another app's events", async () => {
    assert.deepEqual(await points(t.appB, T0 / 1000, T0 / 1000 + 900), [
      [1, 0, 0],
      [0, 0, 0],
      [0, 2, 0],
    ]);
    assert.equal(await activeUsers(t.appB, T0 / 1000, T0 / 1000 + 1800), 2);
    const other = await newApp(t, 'Stats of no one');
    await t.services.statsAggregator.settled();
    assert.deepEqual(await points(other, T0, T0 + 900_000), [
      [0, 0, 0],
      [0, 0, 0],
      [0, 0, 0],
    ]);
    assert.equal(await activeUsers(other, T0, T0 + DAY), 0);
  });
});

describe('counted once', () => {
  it('counts each event once when steps race, and keeps the counts after the log is gone', async () => {
    const app = await newApp(t, 'Stats counted once');
    await record(app, [{ trigger: 'message_sent', atMs: T0 }, { trigger: 'message_sent', atMs: T0 + 1 }, receipt('message_read_receipt', 'r1', T0 + 2)]);
    // Two processes' steps at once, then the aggregation again: each app's stretch is one's.
    const last = String((await sql<{ id: string }>`select max(id)::text as id from events`.execute(t.database.db)).rows[0]!.id);
    const repositories = [new StatsRepository(t.database.db), new StatsRepository(t.database.consumerDb)];
    await Promise.all(repositories.map((repository) => repository.aggregate(last, 5_000)));
    await t.services.statsAggregator.settled();
    await repositories[0]!.aggregate(last, 5_000);
    assert.deepEqual(await points(app, T0, T0), [[2, 1, 0]]);
    // The log's retention deletes events, not counts.
    await sql`delete from events where app_id = ${app.appId}`.execute(t.database.db);
    await t.services.statsAggregator.settled();
    assert.deepEqual(await points(app, T0, T0), [[2, 1, 0]]);
    assert.equal(await activeUsers(app, T0, T0), 1);
  });
});

describe('bad ranges', () => {
  const now = Math.floor(Date.now() / 1000);
  const cases: Array<[string, string, Record<string, string>]> = [
    ['/v3/stats', 'both dates missing', {}],
    ['/v3/stats', 'toDate missing', { fromDate: String(now) }],
    ['/v3/stats', 'fromDate missing', { toDate: String(now) }],
    ['/v3/stats', 'a date that is not a number', { fromDate: 'yesterday', toDate: String(now) }],
    ['/v3/stats', 'a fractional date', { fromDate: '1.5', toDate: String(now) }],
    ['/v3/stats', 'a negative date', { fromDate: '-1', toDate: String(now) }],
    ['/v3/stats', 'a date past the year 9999', { fromDate: String(now), toDate: '253402300800000' }],
    ['/v3/stats', 'fromDate after toDate', { fromDate: String(now), toDate: String(now - 1) }],
    ['/v3/stats', 'fromDate after toDate, in milliseconds', { fromDate: String((now + 1) * 1000), toDate: String(now) }],
    ['/v3/stats', 'more than 31 days', { fromDate: String(now - 31 * 86_400 - 1), toDate: String(now) }],
    ['/v3/stats/messages', 'fromDate without toDate', { fromDate: String(now) }],
    ['/v3/stats/messages', 'toDate without fromDate', { toDate: String(now) }],
    ['/v3/stats/messages', 'more than a day', { fromDate: String(now - 86_401), toDate: String(now) }],
    ['/v3/stats/messages', 'a date that is not a number', { fromDate: 'x', toDate: String(now) }],
  ];
  for (const [url, what, query] of cases) {
    it(`${url}: ${what} is ERR_BAD_REQUEST`, async () => {
      const response = await t.call(t.appA, url, { query });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.equal(typeof body(response).error.message, 'string');
    });
  }

  it('takes 31 days exactly, and a day of points exactly', async () => {
    assert.equal((await t.call(t.appA, '/v3/stats', { query: { fromDate: String(now - 31 * 86_400), toDate: String(now) } })).statusCode, 200);
    const day = await stats(t.appA, '/v3/stats/messages', { fromDate: T0, toDate: T0 + DAY });
    assert.equal(day.dataPoints.length, 288);
  });
});
