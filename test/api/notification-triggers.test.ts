// Push notifications of more than new messages (docs/notifications.md, "What triggers a push
// notification"): edits and deletes, reactions and group actions reach the devices the vendor's
// settings and users' preferences say, through the app's FCM provider (a local fake that checks
// the protocol), with plain texts and the log's triggers and reasons; a reaction in a large group
// makes deliveries only for the members who could want it.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUser } from '../helpers/factories.js';
import { startFakeFcm, type FakeFcm } from '../helpers/fake-providers/fcm.js';
import { startReceiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let fcm: FakeFcm;
before(async () => {
  fcm = await startFakeFcm();
  t = await createTestApp({
    notificationEndpoints: { fcmUrl: fcm.baseUrl, fcmTokenOrigins: [fcm.origin] },
    webhookRetry: { delaysMs: [50, 100], maxDelayMs: 200, horizonMs: 60_000 },
  });
  await t.services.eventDispatcher.start(silentLogger);
});
after(async () => {
  await t?.close();
  await fcm?.close();
});
beforeEach(() => assert.deepEqual(fcm.problems, [], 'a request broke the FCM protocol'));

/** A new app with an FCM provider (each test its own: its settings and counts are its own). */
async function pushApp(): Promise<CreatedApp> {
  const app = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: uniqueId('triggers') });
  const added = await t.call(app, '/v3/notifications/push/v1/providers/fcm', { method: 'POST', body: { providerId: 'fcm-main', serviceAccountCreds: fcm.serviceAccount(`proj-${app.appId}`) } });
  assert.equal(added.statusCode, 200, added.body);
  return app;
}

/** A user named `name`, with a device (an FCM token) when `device`. */
async function person(app: CreatedApp, name: string, device = true): Promise<{ uid: string; token: string }> {
  const uid = String((await newUser(t, app, { name, uid: uniqueId(name.toLowerCase()) })).uid);
  if (!device) return { uid, token: '' };
  const session = await t.call(app, `/v3/users/${uid}/auth_tokens`, { method: 'POST', body: {} });
  assert.equal(session.statusCode, 200, session.body);
  const token = uniqueId('fcm-device');
  const registered = await t.call(app, '/v3/notifications/push/v1/tokens', { method: 'POST', body: { authToken: body(session).data.authToken, platform: 'fcm_android', fcmToken: token } });
  assert.equal(registered.statusCode, 200, registered.body);
  return { uid, token };
}

async function ok(app: CreatedApp, url: string, options: Parameters<TestApp['call']>[2]): Promise<any> {
  const response = await t.call(app, url, options);
  assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
  return body(response).data;
}

const send = async (app: CreatedApp, sender: string, receiver: string, text: string, receiverType: 'user' | 'group' = 'user') =>
  String((await ok(app, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType, category: 'message', type: 'text', data: { text } } })).id);
const settings = (app: CreatedApp, preferences: Record<string, unknown>) => ok(app, '/v3/notifications/v1/settings', { method: 'PATCH', body: { preferences } });
const prefer = (app: CreatedApp, uid: string, patch: Record<string, unknown>) => ok(app, '/v3/notifications/v1/preferences', { method: 'PATCH', query: { uid }, body: patch });
const react = (app: CreatedApp, uid: string, id: string, reaction: string) => ok(app, `/v3/messages/${id}/reactions/${encodeURIComponent(reaction)}`, { method: 'POST', onBehalfOf: uid, body: {} });
const addMembers = (app: CreatedApp, guid: string, uids: string[], onBehalfOf?: string) =>
  ok(app, `/v3/groups/${guid}/members`, { method: 'POST', body: { participants: uids }, ...(onBehalfOf ? { onBehalfOf } : {}) });

/** The data of the pushes `token` got, in order. */
const pushesTo = (token: string): Array<Record<string, any>> => fcm.sends.filter((s) => s.body?.message?.token === token).map((s) => s.body.message.data);

async function until(predicate: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await predicate())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Waits until `someone` got a new message sent after everything before it: one recipient's
 * notifications go in order, and the fan-out follows the log's order, so whatever earlier event
 * was to reach them (or not) has been dealt with by then.
 */
async function settled(app: CreatedApp, from: string, someone: { uid: string; token: string }): Promise<void> {
  const text = uniqueId('marker');
  await send(app, from, someone.uid, text);
  await until(() => pushesTo(someone.token).some((d) => d.body === text), `the marker to ${someone.uid}`);
}

async function logOf(app: CreatedApp, query: Record<string, string>): Promise<Array<Record<string, any>>> {
  return ok(app, '/v3/notifications/v1/logs', { query: { ...query, limit: '100' } });
}

/** The log's entries matching `query`, once there are `n` (each recipient's are recorded once their sends are done). */
async function logged(app: CreatedApp, query: Record<string, string>, n: number): Promise<Array<Record<string, any>>> {
  await until(async () => (await logOf(app, query)).length === n, `${n} log entries of ${JSON.stringify(query)}`);
  return logOf(app, query);
}

/** The notifications' deliveries the app's events of `trigger` made, per recipient. */
async function deliveries(app: CreatedApp, trigger: string): Promise<string[]> {
  const db = t.database.db;
  const rows = await db.selectFrom('event_deliveries').select('item').where('app_id', '=', app.appId).where('consumer', '=', 'notifications').where('trigger', '=', trigger).execute();
  return rows.map((row) => row.item).sort();
}

describe('push notifications of edits and deletes', () => {
  it("notify the conversation's other users by default, with who did it, and log message_edited and message_deleted", async () => {
    const app = await pushApp();
    const [alice, bob, carol] = [await person(app, 'Alice'), await person(app, 'Bob'), await person(app, 'Carol')];
    const id = await send(app, alice.uid, bob.uid, 'first draft');
    await until(() => pushesTo(bob.token).length === 1, 'the message');
    await ok(app, `/v3/messages/${id}`, { method: 'PUT', onBehalfOf: alice.uid, body: { data: { text: 'second draft' } } });
    await until(() => pushesTo(bob.token).length === 2, 'the edit');
    const edit = pushesTo(bob.token)[1]!;
    assert.equal(edit.title, 'Alice');
    assert.equal(edit.body, 'Alice edited a message');
    assert.equal(edit.sender, alice.uid);
    assert.equal(edit.type, 'chat');
    const deleted = await ok(app, `/v3/messages/${id}`, { method: 'DELETE', onBehalfOf: alice.uid });
    await until(() => pushesTo(bob.token).length === 3, 'the delete');
    assert.equal(pushesTo(bob.token)[2]!.body, 'Alice deleted a message');
    assert.equal(pushesTo(bob.token)[2]!.messageId, String(deleted.id), 'the delete action message');
    assert.equal(pushesTo(alice.token).length, 0, 'who acted is not notified');
    const edits = await logged(app, { trigger: 'message_edited' }, 1);
    assert.equal(edits[0]!.notificationTriggered, true);
    assert.equal(edits[0]!.success, true);
    assert.equal(edits[0]!.sender, alice.uid);
    assert.equal(edits[0]!.receiver, bob.uid);
    assert.equal(edits[0]!.payload.body, 'Alice edited a message');
    await logged(app, { trigger: 'message_deleted' }, 1);

    // In a group: every other member, titled as a group message.
    const group = await newGroup(t, app, { owner: alice.uid, name: 'Support' });
    await addMembers(app, String(group.guid), [bob.uid, carol.uid]);
    const inGroup = await send(app, bob.uid, String(group.guid), 'hello all', 'group');
    await until(() => pushesTo(carol.token).length === 1, "the group's message");
    await ok(app, `/v3/messages/${inGroup}`, { method: 'PUT', onBehalfOf: bob.uid, body: { data: { text: 'hello everyone' } } });
    await until(() => pushesTo(carol.token).length === 2 && pushesTo(alice.token).length === 2, 'the group edit');
    assert.equal(pushesTo(carol.token)[1]!.title, 'Bob @ Support');
    assert.equal(pushesTo(carol.token)[1]!.body, 'Bob edited a message');
    assert.equal(pushesTo(carol.token)[1]!.receiverType, 'group');
    assert.deepEqual(await deliveries(app, 'message_edited'), [bob.uid, alice.uid, carol.uid].sort(), 'Bob in the 1:1, then the group but its editor');
  });

  it("notify nobody where the app's setting says don't notify", async () => {
    const app = await pushApp();
    const [alice, bob] = [await person(app, 'Alice'), await person(app, 'Bob')];
    await settings(app, { oneOnOne: { messageEditedSetting: 1, messageDeletedSetting: 1 } });
    const id = await send(app, alice.uid, bob.uid, 'typo');
    // (A message's notification shows it as it is when sent: wait for it before editing.)
    await until(() => pushesTo(bob.token).length === 1, 'the message');
    await ok(app, `/v3/messages/${id}`, { method: 'PUT', onBehalfOf: alice.uid, body: { data: { text: 'no typo' } } });
    await ok(app, `/v3/messages/${id}`, { method: 'DELETE', onBehalfOf: alice.uid });
    await settled(app, alice.uid, bob);
    assert.deepEqual(
      pushesTo(bob.token)
        .map((d) => d.body)
        .slice(0, 1),
      ['typo'],
    );
    assert.equal(pushesTo(bob.token).length, 2, 'the message and the marker only');
    assert.deepEqual(await deliveries(app, 'message_edited'), []);
    assert.deepEqual(await deliveries(app, 'message_deleted'), []);
  });
});

describe('push notifications of reactions', () => {
  it("notify the message's author, not the others, by default", async () => {
    const app = await pushApp();
    const [alice, bob, carol] = [await person(app, 'Alice'), await person(app, 'Bob'), await person(app, 'Carol')];
    const id = await send(app, alice.uid, bob.uid, 'lunch?');
    await react(app, bob.uid, id, '👍');
    await until(() => pushesTo(alice.token).length === 1, 'the reaction');
    const [push] = pushesTo(alice.token);
    assert.equal(push!.title, 'Bob');
    assert.equal(push!.body, 'Bob reacted 👍 to your message');
    assert.equal(push!.sender, bob.uid);
    assert.equal(push!.messageId, id);
    const [entry] = await logged(app, { trigger: 'message_reaction_added' }, 1);
    assert.equal(entry!.notificationTriggered, true);
    assert.equal(String(entry!.messageId), id);
    assert.equal(entry!.reactionSender, bob.uid);
    assert.equal(entry!.reactionReceiver, alice.uid);
    assert.ok(entry!.reactionId !== undefined);

    // In a group: the author only; the reactor and the other members have no delivery at all.
    const group = await newGroup(t, app, { owner: alice.uid, name: 'Lunch' });
    await addMembers(app, String(group.guid), [bob.uid, carol.uid]);
    const inGroup = await send(app, alice.uid, String(group.guid), 'pizza?', 'group');
    await react(app, bob.uid, inGroup, '🍕');
    await until(() => pushesTo(alice.token).length === 2, 'the group reaction');
    assert.equal(pushesTo(alice.token)[1]!.title, 'Bob @ Lunch');
    assert.equal(pushesTo(alice.token)[1]!.body, 'Bob reacted 🍕 to your message');
    assert.deepEqual(await deliveries(app, 'message_reaction_added'), [alice.uid, alice.uid]);
    await settled(app, bob.uid, carol);
    assert.ok(!pushesTo(carol.token).some((d) => d.body.includes('reacted')));
  });

  it('notify the other members too when their preference says reactions to all messages', async () => {
    const app = await pushApp();
    const [alice, bob, carol, dave] = [await person(app, 'Alice'), await person(app, 'Bob'), await person(app, 'Carol'), await person(app, 'Dave')];
    const group = await newGroup(t, app, { owner: alice.uid, name: 'Team' });
    await addMembers(app, String(group.guid), [bob.uid, carol.uid, dave.uid]);
    await prefer(app, carol.uid, { groupPreferences: { groupReactions: 3 } });
    const id = await send(app, alice.uid, String(group.guid), 'shipped', 'group');
    await react(app, bob.uid, id, '🎉');
    await until(() => pushesTo(carol.token).some((d) => d.body.includes('reacted')), "Carol's notification");
    assert.equal(pushesTo(carol.token).find((d) => d.body.includes('reacted'))!.body, 'Bob reacted 🎉 to a message');
    await until(() => pushesTo(alice.token).some((d) => d.body === 'Bob reacted 🎉 to your message'), "the author's");
    assert.deepEqual(await deliveries(app, 'message_reaction_added'), [alice.uid, carol.uid].sort(), 'Dave, who asked for nothing more, has none');

    // The app's own setting of all messages reaches every member but the reactor.
    await settings(app, { group: { reactionsSetting: 3 } });
    await react(app, carol.uid, id, '🚀');
    await until(() => pushesTo(dave.token).some((d) => d.body === 'Carol reacted 🚀 to a message'), "Dave's");
    await until(() => pushesTo(bob.token).some((d) => d.body === 'Carol reacted 🚀 to a message'), "Bob's");
    assert.ok(!pushesTo(carol.token).some((d) => d.body.startsWith('Carol')), 'not the reactor');
  });

  it('log REACTIONS_PREFERENCE for an author who wants no reactions', async () => {
    const app = await pushApp();
    const [alice, bob] = [await person(app, 'Alice'), await person(app, 'Bob')];
    await prefer(app, alice.uid, { oneOnOnePreferences: { oneOnOneReactions: 1 } });
    const id = await send(app, alice.uid, bob.uid, 'no reactions please');
    await react(app, bob.uid, id, '😀');
    const [entry] = await logged(app, { trigger: 'message_reaction_added' }, 1);
    assert.equal(entry!.notificationTriggered, false);
    assert.equal(entry!.reason, 'REACTIONS_PREFERENCE');
    assert.equal(entry!.receiver, bob.uid);
    assert.equal(pushesTo(alice.token).length, 0);
  });
});

describe('push notifications of group actions', () => {
  it('notify nobody by default: no delivery is made', async () => {
    const app = await pushApp();
    const [alice, bob, carol] = [await person(app, 'Alice'), await person(app, 'Bob'), await person(app, 'Carol')];
    const group = await newGroup(t, app, { owner: alice.uid });
    const guid = String(group.guid);
    await addMembers(app, guid, [bob.uid, carol.uid], alice.uid);
    await ok(app, `/v3/groups/${guid}/members/${bob.uid}`, { method: 'PUT', onBehalfOf: alice.uid, body: { scope: 'moderator' } });
    await ok(app, `/v3/groups/${guid}/members/${carol.uid}`, { method: 'DELETE', onBehalfOf: alice.uid });
    await ok(app, `/v3/groups/${guid}/bannedusers/${carol.uid}`, { method: 'POST', onBehalfOf: alice.uid });
    await settled(app, alice.uid, bob);
    await settled(app, alice.uid, carol);
    for (const trigger of ['group_member_added', 'group_member_scope_changed', 'group_member_kicked', 'group_member_banned']) assert.deepEqual(await deliveries(app, trigger), [], trigger);
    assert.equal(pushesTo(bob.token).length, 1, 'the marker only');
    assert.deepEqual(await logOf(app, { receiverType: 'group' }), []);
  });

  it('notify the members and the members acted on when the app enables them, and log their triggers', async () => {
    const app = await pushApp();
    const [alice, bob, carol, dave] = [await person(app, 'Alice'), await person(app, 'Bob'), await person(app, 'Carol'), await person(app, 'Dave')];
    await settings(app, { group: { memberAddedSetting: 2, memberKickedSetting: 2, memberScopeChangedSetting: 2, memberLeftSetting: 2 } });
    const group = await newGroup(t, app, { owner: alice.uid, name: 'Crew' });
    const guid = String(group.guid);
    await addMembers(app, guid, [bob.uid, carol.uid], alice.uid);
    await until(() => pushesTo(bob.token).length === 1 && pushesTo(carol.token).length === 1, 'the adds');
    assert.equal(pushesTo(bob.token)[0]!.title, 'Crew');
    assert.equal(pushesTo(bob.token)[0]!.body, 'Alice added you and Carol');
    assert.equal(pushesTo(bob.token)[0]!.receiver, guid);
    assert.equal(pushesTo(bob.token)[0]!.sender, alice.uid);
    assert.equal(pushesTo(alice.token).length, 0, 'who acted is not notified');

    await addMembers(app, guid, [dave.uid], alice.uid);
    await until(() => pushesTo(dave.token).length === 1 && pushesTo(carol.token).length === 2, "Dave's add");
    assert.equal(pushesTo(dave.token)[0]!.body, 'Alice added you');
    assert.equal(pushesTo(carol.token)[1]!.body, 'Alice added Dave');

    await ok(app, `/v3/groups/${guid}/members/${bob.uid}`, { method: 'PUT', onBehalfOf: alice.uid, body: { scope: 'moderator' } });
    await until(() => pushesTo(bob.token).length === 3, 'the scope change');
    assert.equal(pushesTo(bob.token)[2]!.body, 'Alice made you a moderator');

    // The member kicked is no longer in the group, and is told too.
    await ok(app, `/v3/groups/${guid}/members/${dave.uid}`, { method: 'DELETE', onBehalfOf: bob.uid });
    await until(() => pushesTo(dave.token).length === 3 && pushesTo(carol.token).length === 4, 'the kick');
    assert.equal(pushesTo(dave.token)[1]!.body, 'Alice made Bob a moderator');
    assert.equal(pushesTo(dave.token)[2]!.body, 'Bob kicked you');
    assert.equal(pushesTo(carol.token)[3]!.body, 'Bob kicked Dave');
    await ok(app, `/v3/groups/${guid}/members/${carol.uid}`, { method: 'DELETE', onBehalfOf: carol.uid });
    await until(() => pushesTo(alice.token).some((d) => d.body.endsWith('left')), 'the leave');
    assert.ok(pushesTo(alice.token).some((d) => d.body === 'Carol left'));
    assert.ok(pushesTo(bob.token).some((d) => d.body === 'Carol left'));

    const kicked = await logged(app, { trigger: 'after_group_members_kicked' }, 3);
    assert.deepEqual(kicked.map((e) => e.member).sort(), [alice.uid, carol.uid, dave.uid].sort());
    assert.ok(kicked.every((e) => e.notificationTriggered && e.success && e.sender === bob.uid && e.receiver === guid && e.receiverType === 'group'));
    // Bob and Carol; then Bob, Carol and Dave.
    await logged(app, { trigger: 'after_group_members_added' }, 5);
    await logged(app, { trigger: 'after_scope_changed' }, 3);
    await logged(app, { trigger: 'after_group_left' }, 2);
  });

  it("follow a user's own preference where the app lets them, and log GROUP_ACTIONS_PREFERENCE", async () => {
    const app = await pushApp();
    const [alice, bob, carol, erin] = [await person(app, 'Alice'), await person(app, 'Bob'), await person(app, 'Carol'), await person(app, 'Erin')];
    const group = await newGroup(t, app, { owner: alice.uid, name: 'Open' });
    const guid = String(group.guid);
    await addMembers(app, guid, [bob.uid, carol.uid], alice.uid);
    // The app keeps joins quiet; Carol asks for them.
    await prefer(app, carol.uid, { groupPreferences: { groupMemberJoined: 2 } });
    await addMembers(app, guid, [erin.uid], erin.uid);
    await until(() => pushesTo(carol.token).some((d) => d.body === 'Erin joined'), "Carol's join notification");
    assert.deepEqual(await deliveries(app, 'group_member_joined'), [carol.uid]);
    assert.equal((await logged(app, { trigger: 'after_group_joined' }, 1))[0]!.sender, erin.uid);

    // The app notifies bans; Bob asks not to be.
    await settings(app, { group: { memberBannedSetting: 2 } });
    await prefer(app, bob.uid, { groupPreferences: { groupMemberBanned: 1 } });
    await ok(app, `/v3/groups/${guid}/bannedusers/${erin.uid}`, { method: 'POST', onBehalfOf: alice.uid });
    await until(() => pushesTo(erin.token).some((d) => d.body === 'Alice banned you'), "Erin's ban notification");
    await logged(app, { trigger: 'after_group_members_banned' }, 3);
    const bans = await logOf(app, { trigger: 'after_group_members_banned', member: bob.uid });
    assert.equal(bans.length, 1);
    assert.equal(bans[0]!.notificationTriggered, false);
    assert.equal(bans[0]!.reason, 'GROUP_ACTIONS_PREFERENCE');
    assert.ok(pushesTo(carol.token).some((d) => d.body === 'Alice banned Erin'));
    assert.ok(!pushesTo(bob.token).some((d) => d.body.includes('banned')));
  });
});

describe('a reaction in a large group', () => {
  it('makes deliveries only for the members who can want it', async () => {
    // A custom push provider: every member can be reached, token or not.
    const receiver = await startReceiver();
    try {
      const app = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: uniqueId('large') });
      await ok(app, '/v3/notifications/push/v1/providers/custom', { method: 'POST', body: { webhookURL: receiver.url, isEnabled: true } });
      const members: string[] = [];
      for (let n = 0; n < 200; n += 25) members.push(...(await Promise.all(Array.from({ length: 25 }, async () => (await person(app, 'Member', false)).uid))));
      const [author, reactor, fan1, fan2] = members as [string, string, string, string];
      const group = await newGroup(t, app, { owner: author });
      for (let n = 0; n < members.length; n += 25)
        await addMembers(
          app,
          String(group.guid),
          members.slice(n, n + 25).filter((uid) => uid !== author),
        );
      await prefer(app, fan1, { groupPreferences: { groupReactions: 3 } });
      await prefer(app, fan2, { groupPreferences: { groupReactions: 3 } });
      const id = await send(app, author, String(group.guid), 'big news', 'group');
      await react(app, reactor, id, '👏');
      await receiver.waitFor((got) => got.filter((r) => /reacted/.test(r.body.data.notificationDetails.body)).length === 3, 30_000);
      // The message itself: every member but its sender (199); the reaction: the author and the two who asked.
      assert.equal((await deliveries(app, 'message_sent')).length, 199);
      assert.deepEqual(await deliveries(app, 'message_reaction_added'), [author, fan1, fan2].sort());
      const reactions = receiver.received.filter((r) => /reacted/.test(r.body.data.notificationDetails.body));
      assert.deepEqual(reactions.map((r) => r.body.data.to.uid).sort(), [author, fan1, fan2].sort(), 'each once, on the custom provider');
    } finally {
      await receiver.close();
    }
  });
});
