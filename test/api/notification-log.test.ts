import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { NotificationLogEntry } from '../../src/domain/notifications/log.js';
import { NotificationLogRepository } from '../../src/repositories/notifications/notification-log.repository.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, type TestApp } from '../helpers/app.js';
import { newApp } from '../helpers/tenant-data.js';

let t: TestApp;
let log: NotificationLogRepository;
before(async () => {
  t = await createTestApp();
  log = new NotificationLogRepository(t.database.db);
});
after(async () => {
  await t.close();
});

const LOGS = '/v3/notifications/v1/logs';

const T0 = 1_742_980_459_000;

/** An entry with every field, about `messageId`: not triggered (a mute) unless `triggered` says otherwise. */
function entry(n: number, fields: Partial<Record<string, unknown>> = {}): NotificationLogEntry {
  const base = {
    processingStartedAtMS: T0 + n * 1000 + 696,
    processingEndedAtMS: T0 + n * 1000 + 738,
    channel: 'push',
    provider: 'apns',
    providerId: 'apns-provider',
    trigger: 'message_reaction_added',
    messageId: String(3000 + n),
    reactionId: String(60 + n),
    messageSentAtMS: T0 + n * 1000,
    messageCategory: 'message',
    messageType: 'text',
    sender: 'cometchat-uid-4',
    reactionSender: 'cometchat-uid-1',
    receiver: 'cometchat-guid-1',
    reactionReceiver: 'g-muted-yes',
    receiverType: 'group',
    member: 'g-muted-yes',
    tokenType: 'apns_ios_device',
    pushToken: 'pushtoken123',
    payload: { payload: { title: 'cometchat-uid-1', body: 'Reacted to your message: 😂', sessionId: null }, priority: 10, type: 'apns' },
    notificationTriggered: false,
    reason: 'MUTE_PREFERENCE',
  };
  return Object.assign(base, fields) as unknown as NotificationLogEntry;
}

const triggered = (n: number, success: boolean, fields: Partial<Record<string, unknown>> = {}) => entry(n, { notificationTriggered: true, reason: undefined, success, ...fields });

async function page(app: CreatedApp, query: Record<string, string> = {}): Promise<{ data: any[]; meta: any }> {
  const response = await t.call(app, LOGS, { query });
  assert.equal(response.statusCode, 200, response.body);
  return body(response);
}

const idsOf = (entries: any[]) => entries.map((e) => e._id as string);

describe('notifications-logs: the entries the engine recorded', () => {
  it("shows an entry in the vendor's shape", async () => {
    const app = await newApp(t, 'Log shape');
    await log.record(app.appId, [entry(0), triggered(1, false, { error: 'x'.repeat(5000), provider: 'fcm', component: 'custom-component' })]);
    const { data, meta } = await page(app);
    assert.equal(data.length, 2);
    const [muted, failed] = data;
    assert.deepEqual(muted, {
      _id: muted._id,
      processingStartedAtMS: T0 + 696,
      processingEndedAtMS: T0 + 738,
      totalProcessingTimeInMS: 42,
      component: 'notifications-core',
      channel: 'push',
      provider: 'apns',
      messageId: 3000,
      reactionId: 60,
      trigger: 'message_reaction_added',
      messageSentAtMS: T0,
      messageCategory: 'message',
      messageType: 'text',
      sender: 'cometchat-uid-4',
      reactionSender: 'cometchat-uid-1',
      receiver: 'cometchat-guid-1',
      reactionReceiver: 'g-muted-yes',
      receiverType: 'group',
      member: 'g-muted-yes',
      tokenType: 'apns_ios_device',
      pushToken: 'pushtoken123',
      providerId: 'apns-provider',
      payload: { payload: { title: 'cometchat-uid-1', body: 'Reacted to your message: 😂', sessionId: null }, priority: 10, type: 'apns' },
      notificationTriggered: false,
      reason: 'MUTE_PREFERENCE',
    });
    assert.match(muted._id, /^\d+$/);
    assert.equal(failed.notificationTriggered, true);
    assert.equal(failed.success, false);
    assert.equal(failed.reason, undefined);
    assert.equal(failed.component, 'custom-component');
    assert.equal(failed.error.length, 1000, "a provider's error is kept to 1000 characters");
    assert.ok(BigInt(failed._id) > BigInt(muted._id), 'recorded in order');
    assert.deepEqual(meta, { previous: { affix: 'prepend', logId: muted._id }, current: { limit: 20, count: 2 }, next: { affix: 'append', logId: failed._id } });
  });

  it('leaves out what an entry does not have; an empty log is an empty page', async () => {
    const app = await newApp(t, 'Log sparse');
    assert.deepEqual(await page(app), { data: [], meta: { current: { limit: 20, count: 0 } } });
    const sparse = {
      processingStartedAtMS: T0,
      processingEndedAtMS: T0 + 1,
      channel: 'email',
      trigger: 'after_group_joined',
      messageSentAtMS: T0,
      notificationTriggered: false,
      reason: 'MISSING_EMAIL',
    } as const;
    await log.record(app.appId, [sparse]);
    const [only] = (await page(app)).data;
    assert.deepEqual(
      Object.keys(only).sort(),
      ['_id', 'channel', 'component', 'messageSentAtMS', 'notificationTriggered', 'processingEndedAtMS', 'processingStartedAtMS', 'reason', 'totalProcessingTimeInMS', 'trigger'].sort(),
    );
  });

  it('records nothing for no entries, many in one statement, and refuses a statement of more than 1000', async () => {
    const app = await newApp(t, 'Log many');
    await log.record(app.appId, []);
    await log.record(
      app.appId,
      Array.from({ length: 250 }, (_, n) => entry(n)),
    );
    const { data } = await page(app, { limit: '100', affix: 'append' });
    assert.deepEqual(
      data.map((e) => e.messageId),
      Array.from({ length: 100 }, (_, n) => 3000 + n),
      'in the order given',
    );
    await assert.rejects(
      log.record(
        app.appId,
        Array.from({ length: 1001 }, (_, n) => entry(n)),
      ),
      /at most 1000/,
    );
  });

  it('keeps an entry consistent: a reason only when not triggered, success only when triggered', async () => {
    const app = await newApp(t, 'Log checks');
    await assert.rejects(log.record(app.appId, [entry(0, { reason: undefined })]));
    await assert.rejects(log.record(app.appId, [triggered(0, true, { success: undefined })]));
    await assert.rejects(log.record(app.appId, [entry(0, { channel: 'pigeon' })]));
    // A failed entry fails its statement: nothing of it is recorded.
    await assert.rejects(log.record(app.appId, [entry(1), entry(2, { receiverType: 'crowd' })]));
    assert.deepEqual((await page(app)).data, []);
  });
});

describe('notifications-logs: filters', () => {
  let app: CreatedApp;
  let all: any[];
  before(async () => {
    app = await newApp(t, 'Log filters');
    await log.record(app.appId, [
      entry(0),
      entry(1, { reason: 'DND_PREFERENCE', channel: 'push', provider: 'fcm', tokenType: 'fcm_android' }),
      triggered(2, true, {
        trigger: 'after_message',
        reactionId: undefined,
        reactionSender: undefined,
        reactionReceiver: undefined,
        sender: 'alice',
        receiver: 'bob',
        receiverType: 'user',
        member: undefined,
      }),
      triggered(3, false, { trigger: 'after_message', messageType: 'image', channel: 'email', provider: 'sendgrid', tokenType: undefined, pushToken: undefined }),
      entry(4, { messageCategory: 'custom', messageType: 'poll', trigger: 'message_edited', reason: 'MESSAGE_ACTIONS_PREFERENCE', channel: 'sms', provider: 'twilio', member: 'carol' }),
      triggered(5, true, { trigger: 'after_group_members_added', channel: 'push', provider: 'custom', reactionSender: 'dave', reactionReceiver: 'erin', messageId: '3002' }),
    ]);
    all = (await page(app)).data;
    assert.equal(all.length, 6);
  });

  const expectFilter = async (query: Record<string, string>, expected: (e: any) => boolean) => {
    const { data, meta } = await page(app, query);
    const want = idsOf(all.filter(expected));
    assert.ok(want.length > 0 && want.length < all.length, `${JSON.stringify(query)} is a real filter`);
    assert.deepEqual(idsOf(data), want, JSON.stringify(query));
    assert.equal(meta.current.count, want.length);
  };

  it('filters by message and reaction', async () => {
    await expectFilter({ messageId: '3002' }, (e) => e.messageId === 3002);
    await expectFilter({ reactionId: '64' }, (e) => e.reactionId === 64);
    assert.deepEqual((await page(app, { messageId: '999999' })).data, []);
  });

  it("filters by the message's time: from and to, inclusive", async () => {
    await expectFilter({ from: String(T0 + 2000) }, (e) => e.messageSentAtMS >= T0 + 2000);
    await expectFilter({ to: String(T0 + 2000) }, (e) => e.messageSentAtMS <= T0 + 2000);
    await expectFilter({ from: String(T0 + 1000), to: String(T0 + 3000) }, (e) => e.messageSentAtMS >= T0 + 1000 && e.messageSentAtMS <= T0 + 3000);
  });

  it("filters by the message's category and type, and the trigger", async () => {
    await expectFilter({ messageCategory: 'custom' }, (e) => e.messageCategory === 'custom');
    await expectFilter({ messageCategory: 'message' }, (e) => e.messageCategory === 'message');
    await expectFilter({ messageType: 'image' }, (e) => e.messageType === 'image');
    await expectFilter({ trigger: 'after_message' }, (e) => e.trigger === 'after_message');
  });

  it('filters by who: sender, reaction sender, receiver and its type, reaction receiver, member (any case)', async () => {
    await expectFilter({ sender: 'ALICE' }, (e) => e.sender === 'alice');
    await expectFilter({ reactionSender: 'dave' }, (e) => e.reactionSender === 'dave');
    await expectFilter({ receiver: 'bob' }, (e) => e.receiver === 'bob');
    await expectFilter({ receiverType: 'user' }, (e) => e.receiverType === 'user');
    await expectFilter({ reactionReceiver: 'Erin' }, (e) => e.reactionReceiver === 'erin');
    await expectFilter({ member: 'carol' }, (e) => e.member === 'carol');
  });

  it('filters by channel and provider', async () => {
    await expectFilter({ channel: 'push' }, (e) => e.channel === 'push');
    await expectFilter({ channel: 'sms' }, (e) => e.channel === 'sms');
    await expectFilter({ provider: 'fcm' }, (e) => e.provider === 'fcm');
    await expectFilter({ provider: 'custom' }, (e) => e.provider === 'custom');
  });

  it('filters by outcome: triggered, reason, success, and their combinations', async () => {
    await expectFilter({ notificationTriggered: 'true' }, (e) => e.notificationTriggered);
    await expectFilter({ notificationTriggered: 'false' }, (e) => !e.notificationTriggered);
    await expectFilter({ reason: 'DND_PREFERENCE' }, (e) => e.reason === 'DND_PREFERENCE');
    await expectFilter({ reason: 'MUTE_PREFERENCE', notificationTriggered: 'false' }, (e) => e.reason === 'MUTE_PREFERENCE');
    await expectFilter({ success: 'false' }, (e) => e.success === false);
    await expectFilter({ success: 'true', notificationTriggered: 'true' }, (e) => e.success === true);
    await expectFilter({ channel: 'push', notificationTriggered: 'true', trigger: 'after_message' }, (e) => e.channel === 'push' && e.notificationTriggered && e.trigger === 'after_message');
  });

  it('refuses bad filters with ERR_BAD_REQUEST naming them', async () => {
    const cases: Array<[Record<string, string>, string]> = [
      [{ messageId: 'abc' }, 'messageId'],
      [{ messageId: '0' }, 'messageId'],
      [{ messageId: '1.5' }, 'messageId'],
      [{ messageId: '99999999999999999999' }, 'messageId'],
      [{ reactionId: '-1' }, 'reactionId'],
      [{ from: 'yesterday' }, 'from'],
      [{ to: '-5' }, 'to'],
      [{ from: '1e309' }, 'from'],
      [{ from: String(T0 + 1), to: String(T0) }, 'to'],
      [{ messageCategory: 'action' }, 'messageCategory'],
      [{ messageType: 'x'.repeat(101) }, 'messageType'],
      [{ trigger: 'after_everything' }, 'trigger'],
      [{ sender: 'not a uid' }, 'sender'],
      [{ member: 'x'.repeat(101) }, 'member'],
      [{ receiverType: 'crowd' }, 'receiverType'],
      [{ channel: 'fax' }, 'channel'],
      [{ provider: 'pigeon' }, 'provider'],
      [{ notificationTriggered: 'maybe' }, 'notificationTriggered'],
      [{ reason: 'BECAUSE' }, 'reason'],
      [{ reason: 'MUTE_PREFERENCE', notificationTriggered: 'true' }, 'reason'],
      [{ success: 'true', notificationTriggered: 'false' }, 'success'],
      [{ affix: 'sideways' }, 'affix'],
      [{ logId: 'abc' }, 'logId'],
      [{ logId: '1'.repeat(19) }, 'logId'],
      [{ limit: '0' }, 'limit'],
      [{ limit: '101' }, 'limit'],
    ];
    for (const [query, field] of cases) {
      const response = await t.call(app, LOGS, { query });
      assert.equal(response.statusCode, 400, `${JSON.stringify(query)}: ${response.body}`);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.ok(field in (body(response).error.details ?? {}), `${JSON.stringify(query)}: ${response.body}`);
    }
  });
});

describe('notifications-logs: paging', () => {
  let app: CreatedApp;
  let ids: string[];
  before(async () => {
    app = await newApp(t, 'Log paging');
    await log.record(
      app.appId,
      Array.from({ length: 45 }, (_, n) => entry(n, n % 3 === 0 ? { channel: 'email' } : {})),
    );
    ids = idsOf((await page(app, { limit: '100', affix: 'append' })).data);
    assert.equal(ids.length, 45);
  });

  it('shows the newest 20 by default, in the order they were recorded', async () => {
    const { data, meta } = await page(app);
    assert.deepEqual(idsOf(data), ids.slice(25));
    assert.deepEqual(meta, { previous: { affix: 'prepend', logId: ids[25] }, current: { limit: 20, count: 20 }, next: { affix: 'append', logId: ids[44] } });
  });

  it('pages back with prepend and forward with append (logId alone reads forward)', async () => {
    const newest = await page(app, { limit: '10' });
    assert.deepEqual(idsOf(newest.data), ids.slice(35));
    const older = await page(app, { limit: '10', affix: 'prepend', logId: newest.meta.previous.logId });
    assert.deepEqual(idsOf(older.data), ids.slice(25, 35));
    const oldest = await page(app, { limit: '10', affix: 'append' });
    assert.deepEqual(idsOf(oldest.data), ids.slice(0, 10));
    const forward = await page(app, { limit: '10', affix: 'append', logId: oldest.meta.next.logId });
    assert.deepEqual(idsOf(forward.data), ids.slice(10, 20));
    const bare = await page(app, { limit: '10', logId: oldest.meta.next.logId });
    assert.deepEqual(idsOf(bare.data), ids.slice(10, 20));
    const end = await page(app, { affix: 'append', logId: ids[44]! });
    assert.deepEqual(end, { data: [], meta: { current: { limit: 20, count: 0 } } });
    const start = await page(app, { affix: 'prepend', logId: ids[0]! });
    assert.deepEqual(start.data, []);
  });

  it('pages through a filter', async () => {
    const email = ids.filter((_, n) => n % 3 === 0);
    const first = await page(app, { channel: 'email', limit: '5', affix: 'append' });
    assert.deepEqual(idsOf(first.data), email.slice(0, 5));
    const second = await page(app, { channel: 'email', limit: '5', affix: 'append', logId: first.meta.next.logId });
    assert.deepEqual(idsOf(second.data), email.slice(5, 10));
    const third = await page(app, { channel: 'email', limit: '5', affix: 'append', logId: second.meta.next.logId });
    assert.deepEqual(idsOf(third.data), email.slice(10, 15));
  });
});

describe('notifications-logs: isolation and access', () => {
  it('shows an app its own entries only, whatever the filters or logId name', async () => {
    const a = await newApp(t, 'Log A');
    const b = await newApp(t, 'Log B');
    await log.record(a.appId, [entry(7, { payload: { secret: 'only-a' } })]);
    const [mine] = (await page(a)).data;
    assert.deepEqual((await page(b)).data, []);
    assert.deepEqual((await page(b, { messageId: '3007' })).data, []);
    assert.deepEqual((await page(b, { affix: 'prepend', logId: String(BigInt(mine._id) + 1n) })).data, []);
    assert.deepEqual((await page(b, { affix: 'append', logId: '0' })).data, []);
    assert.equal((await page(a, { messageId: '3007' })).data.length, 1);
  });

  it('needs a fullAccess key', async () => {
    const response = await t.call(t.appA, LOGS, { key: 'auth' });
    assert.equal(response.statusCode, 403);
    assert.equal(errorCode(response), 'AUTH_ERR_NO_ACCESS');
    assert.equal((await t.call(t.appA, LOGS, { key: 'none' })).statusCode, 401);
  });
});

describe('the log’s retention: deleteOlderThan', () => {
  const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  it("deletes an app's entries recorded before the cutoff, oldest first, a batch at a time", async () => {
    const app = await newApp(t, 'Log retention');
    const other = await newApp(t, 'Log retention, other app');
    await log.record(
      app.appId,
      Array.from({ length: 5 }, (_, n) => entry(n)),
    );
    await log.record(other.appId, [entry(0)]);
    await sleep(20);
    const cutoff = new Date();
    await sleep(20);
    await log.record(app.appId, [entry(10), entry(11)]);
    assert.equal(await log.deleteOlderThan(app.appId, new Date(cutoff.getTime() - 60_000), 100), 0, 'nothing that old');
    assert.equal(await log.deleteOlderThan(app.appId, cutoff, 3), 3);
    assert.deepEqual(
      (await page(app)).data.map((e) => e.messageId),
      [3003, 3004, 3010, 3011],
    );
    assert.equal(await log.deleteOlderThan(app.appId, cutoff, 3), 2);
    assert.equal(await log.deleteOlderThan(app.appId, cutoff, 3), 0);
    assert.deepEqual(
      (await page(app)).data.map((e) => e.messageId),
      [3010, 3011],
    );
    assert.equal((await page(other)).data.length, 1, "another app's entries stay");
    const apps = await log.appsWithEntries();
    assert.ok(apps.includes(app.appId) && apps.includes(other.appId));
    assert.equal(await log.deleteOlderThan(app.appId, new Date(Date.now() + 60_000), 10), 2);
    assert.ok(!(await log.appsWithEntries()).includes(app.appId));
    await assert.rejects(log.deleteOlderThan(app.appId, cutoff, 0), /batch/);
  });
});
