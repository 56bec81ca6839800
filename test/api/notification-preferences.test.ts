import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql, type KyselyPlugin } from 'kysely';
import { silentLogger } from '../../src/domain/context.js';
import { defaultNotificationSettings } from '../../src/domain/notifications/preferences-defaults.js';
import { UserPreferencesRepository } from '../../src/repositories/notifications/preferences.repository.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, uniqueId, type CallOptions, type TestApp } from '../helpers/app.js';
import { newGroup, newUser } from '../helpers/factories.js';

const PREFS = '/v3/notifications/v1/preferences';
const MUTE = '/v3/notifications/v1/preferences/mute';
const TZ = '/v3/notifications/v1/preferences/timezone';
const CONTACT = '/v3/notifications/v1/contact-details';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const freshApp = () => t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Fresh app' });
const uidOf = async (app: CreatedApp) => (await newUser(t, app)).uid as string;
const call = (app: CreatedApp, url: string, uid: string | undefined, options: CallOptions = {}) => t.call(app, url, { ...(uid !== undefined ? { query: { uid } } : {}), ...options });
const ok = async (app: CreatedApp, url: string, uid: string | undefined, options: CallOptions = {}) => {
  const response = await call(app, url, uid, options);
  assert.equal(response.statusCode, 200, `${options.method ?? 'GET'} ${url}: ${response.body}`);
  return body(response).data;
};
const expectError = (response: { statusCode: number; body: string }, status: number, code: string, field?: string) => {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(errorCode(response as never), code, response.body);
  if (field) assert.ok(Object.keys(JSON.parse(response.body).error.details ?? {}).includes(field), `${field} named: ${response.body}`);
};
const settings = (app: CreatedApp, payload: unknown) => ok(app, '/v3/notifications/v1/settings', undefined, { method: 'PATCH', body: payload });

function vendorExample(route: string, method: string): any {
  const file = path.resolve('../shared/reference/cometchat-chat-apis.json');
  if (!fs.existsSync(file)) return undefined;
  return JSON.parse(fs.readFileSync(file, 'utf8')).paths[route][method].responses['200'].content['application/json'].example.data;
}

describe('notifications-push-list-preferences', () => {
  it('answers the app’s settings for a user who set nothing, in the vendor’s shape', async () => {
    const app = await freshApp();
    const data: any = await ok(app, PREFS, await uidOf(app));
    const defaults = defaultNotificationSettings();
    assert.deepEqual(data, {
      preferences: { group: defaults.preferences.group, oneOnOne: defaults.preferences.oneOnOne, mute: defaults.preferences.mute, usePrivacyTemplate: false },
      sound: defaults.sound,
      templates: defaults.templates,
    });
    const example = vendorExample('/notifications/v1/preferences', 'get');
    if (example) {
      for (const section of ['group', 'oneOnOne', 'mute']) {
        for (const key of Object.keys(example.preferences[section])) assert.ok(key in (data.preferences as unknown as Record<string, object>)[section]!, `preferences.${section}.${key}`);
      }
      assert.deepEqual(Object.keys(data).sort(), Object.keys(example).sort());
    }
  });

  it('refuses a uid the app does not have (another app’s, a deactivated user), and a request without one', async () => {
    const app = await freshApp();
    const other = await uidOf(await freshApp());
    expectError(await call(app, PREFS, other), 404, 'ERR_UID_NOT_FOUND');
    expectError(await call(app, PREFS, 'nobody-here'), 404, 'ERR_UID_NOT_FOUND');
    const gone = await uidOf(app);
    assert.equal((await t.call(app, `/v3/users/${gone}`, { method: 'DELETE' })).statusCode, 200);
    expectError(await call(app, PREFS, gone), 404, 'ERR_UID_NOT_FOUND');
    expectError(await call(app, PREFS, undefined), 400, 'ERR_BAD_REQUEST', 'uid');
    expectError(await call(app, PREFS, 'not a uid!'), 400, 'ERR_BAD_REQUEST', 'uid');
  });
});

describe('notifications-push-update-preferences', () => {
  it('sets the user’s values and answers what applies after; a uid in any case names the user', async () => {
    const app = await freshApp();
    const uid = await uidOf(app);
    const data = await ok(app, PREFS, uid.toUpperCase(), {
      method: 'PATCH',
      body: {
        groupPreferences: { groupMessages: 3, groupReactions: 3, groupMemberJoined: 2 },
        oneOnOnePreferences: { oneOnOneReplies: 1 },
        mutePreferences: { dnd: 2, schedule: { monday: { from: 900, to: 1730 }, sunday: { dnd: true } } },
        usePrivacyTemplate: true,
      },
    });
    assert.equal(data.preferences.group.messagesSetting, 3);
    assert.equal(data.preferences.group.reactionsSetting, 3);
    assert.equal(data.preferences.group.memberJoinedSetting, 2);
    assert.equal(data.preferences.group.repliesSetting, 2, 'the others stay the app’s');
    assert.equal(data.preferences.oneOnOne.repliesSetting, 1);
    assert.equal(data.preferences.mute.dndPreferenceSetting, 2);
    assert.deepEqual(data.preferences.mute.schedulePreferenceSetting.monday, { from: 900, to: 1730, dnd: false });
    assert.deepEqual(data.preferences.mute.schedulePreferenceSetting.sunday, { from: 0, to: 2359, dnd: true });
    assert.equal(data.preferences.usePrivacyTemplate, true);
    assert.deepEqual(await ok(app, PREFS, uid), data);
    // A second change merges with the first.
    const again = await ok(app, PREFS, uid, { method: 'PATCH', body: { mutePreferences: { schedule: { monday: { to: 1800 } } } } });
    assert.deepEqual(again.preferences.mute.schedulePreferenceSetting.monday, { from: 900, to: 1800, dnd: false });
    assert.equal(again.preferences.group.messagesSetting, 3);
    // An empty change answers what applies.
    assert.deepEqual(await ok(app, PREFS, uid, { method: 'PATCH', body: {} }), again);
  });

  it('leaves out, with no error, what the app does not let users override; applies the rest', async () => {
    const app = await freshApp();
    const uid = await uidOf(app);
    await settings(app, { preferences: { group: { messagesOverride: false }, mute: { dndPreferenceOverride: false } }, templates: { usePrivacyTemplate: 1 } });
    const data = await ok(app, PREFS, uid, {
      method: 'PATCH',
      body: { groupPreferences: { groupMessages: 1, groupReplies: 3 }, mutePreferences: { dnd: 2 }, usePrivacyTemplate: true },
    });
    assert.equal(data.preferences.group.messagesSetting, 2);
    assert.equal(data.preferences.group.messagesOverride, false);
    assert.equal(data.preferences.group.repliesSetting, 3);
    assert.equal(data.preferences.mute.dndPreferenceSetting, 1);
    assert.equal(data.preferences.usePrivacyTemplate, false);
    // Left out, not kept for later: allowing overrides afterwards does not bring them back.
    await settings(app, { preferences: { group: { messagesOverride: true } } });
    assert.equal((await ok(app, PREFS, uid)).preferences.group.messagesSetting, 2);
    // An override withdrawn later: the app's value applies again; given back, the user's again.
    await settings(app, { preferences: { group: { repliesOverride: false, repliesSetting: 1 } } });
    assert.equal((await ok(app, PREFS, uid)).preferences.group.repliesSetting, 1);
    await settings(app, { preferences: { group: { repliesOverride: true } } });
    assert.equal((await ok(app, PREFS, uid)).preferences.group.repliesSetting, 3);
  });

  it('keeps every one of concurrent changes to different fields', async () => {
    const app = await freshApp();
    const uid = await uidOf(app);
    const changes = [
      { groupPreferences: { groupMessages: 3 } },
      { groupPreferences: { groupReplies: 1 } },
      { oneOnOnePreferences: { oneOnOneReactions: 3 } },
      { mutePreferences: { dnd: 2 } },
      { mutePreferences: { schedule: { monday: { from: 700 } } } },
      { mutePreferences: { schedule: { monday: { to: 2100 } } } },
    ];
    const responses = await Promise.all(changes.map((payload) => call(app, PREFS, uid, { method: 'PATCH', body: payload })));
    for (const response of responses) assert.equal(response.statusCode, 200, response.body);
    const { preferences } = await ok(app, PREFS, uid);
    assert.deepEqual([preferences.group.messagesSetting, preferences.group.repliesSetting, preferences.oneOnOne.reactionsSetting, preferences.mute.dndPreferenceSetting], [3, 1, 3, 2]);
    assert.deepEqual(preferences.mute.schedulePreferenceSetting.monday, { from: 700, to: 2100, dnd: false });
  });

  it('refuses bad values, unknown fields, times of day that are none, and changes nothing', async () => {
    const app = await freshApp();
    const uid = await uidOf(app);
    const before = await ok(app, PREFS, uid);
    const cases: Array<[unknown, string]> = [
      [{ groupPreferences: { groupMessages: 4 } }, 'groupPreferences.groupMessages'],
      [{ groupPreferences: { groupMemberLeft: 3 } }, 'groupPreferences.groupMemberLeft'],
      [{ oneOnOnePreferences: { oneOnOneMessages: '2' } }, 'oneOnOnePreferences.oneOnOneMessages'],
      [{ oneOnOnePreferences: { oneOnOneMemberLeft: 2 } }, 'oneOnOnePreferences'],
      [{ mutePreferences: { dnd: 3 } }, 'mutePreferences.dnd'],
      [{ mutePreferences: { schedule: { monday: { from: 1179, to: 1179, dnd: true } } } }, 'mutePreferences.schedule.monday.from'],
      [{ mutePreferences: { schedule: { monday: { from: -1 } } } }, 'mutePreferences.schedule.monday.from'],
      [{ groupPreferences: { groupMessages: 1 }, mutePreferences: { schedule: { friday: { to: 2360 } } } }, 'mutePreferences.schedule.friday.to'],
      [{ preferences: { group: { messagesSetting: 1 } } }, 'body'],
      [{ usePrivacyTemplate: 'yes' }, 'usePrivacyTemplate'],
    ];
    for (const [payload, field] of cases) expectError(await call(app, PREFS, uid, { method: 'PATCH', body: payload }), 400, 'ERR_BAD_REQUEST', field);
    assert.deepEqual(await ok(app, PREFS, uid), before);
    expectError(await call(app, PREFS, 'missing-user', { method: 'PATCH', body: { groupPreferences: { groupMessages: 1 } } }), 404, 'ERR_UID_NOT_FOUND');
  });
});

describe('notifications-push-reset-preferences', () => {
  it('forgets the user’s values and answers the app’s in the vendor’s reset shape; time zone, contact details and mutes stay', async () => {
    const app = await freshApp();
    const uid = await uidOf(app);
    const group = (await newGroup(t, app)).guid as string;
    await ok(app, PREFS, uid, { method: 'PATCH', body: { groupPreferences: { groupMessages: 1 }, mutePreferences: { dnd: 2 } } });
    await ok(app, TZ, uid, { method: 'PATCH', body: { timezone: 'Asia/Tokyo' } });
    await ok(app, CONTACT, uid, { method: 'PATCH', body: { email: 'me@example.com' } });
    await ok(app, MUTE, uid, { method: 'PUT', body: { conversations: [{ id: group, type: 'group' }] } });
    await settings(app, { preferences: { group: { memberLeftSetting: 2 } }, templates: { usePrivacyTemplate: 2 } });
    const data = await ok(app, PREFS, uid, { method: 'DELETE' });
    const schedule = defaultNotificationSettings().preferences.mute.schedulePreferenceSetting;
    assert.deepEqual(data, {
      groupPreferences: {
        groupMessages: 2,
        groupReplies: 2,
        groupQuotedReplies: 2,
        groupReactions: 2,
        groupMemberLeft: 2,
        groupMemberAdded: 1,
        groupMemberJoined: 1,
        groupMemberKicked: 1,
        groupMemberBanned: 1,
        groupMemberUnbanned: 1,
        groupMemberScopeChanged: 1,
      },
      oneOnOnePreferences: { oneOnOneMessages: 2, oneOnOneReplies: 2, oneOnOneQuotedReplies: 2, oneOnOneReactions: 2 },
      mutePreferences: { dnd: 1, schedule },
      usePrivacyTemplate: true,
    });
    const example = vendorExample('/notifications/v1/preferences', 'delete');
    if (example) {
      assert.deepEqual(Object.keys(data).sort(), Object.keys(example).sort());
      assert.deepEqual(Object.keys(data.groupPreferences).sort(), Object.keys(example.groupPreferences).sort());
      assert.deepEqual(Object.keys(data.oneOnOnePreferences).sort(), Object.keys(example.oneOnOnePreferences).sort());
    }
    assert.equal((await ok(app, PREFS, uid)).preferences.group.messagesSetting, 2);
    assert.equal((await ok(app, TZ, uid)).timezone, 'Asia/Tokyo');
    assert.equal((await ok(app, CONTACT, uid)).email, 'me@example.com');
    assert.equal((await ok(app, MUTE, uid)).mutedConversations.length, 1);
    // A user with nothing stored resets too.
    assert.equal((await call(app, PREFS, await uidOf(app), { method: 'DELETE' })).statusCode, 200);
    expectError(await call(app, PREFS, 'missing-user', { method: 'DELETE' }), 404, 'ERR_UID_NOT_FOUND');
  });
});

describe('muted conversations', () => {
  it('mutes 1:1 conversations (by the other user) and groups, until a time or until unmuted, and lists them', async () => {
    const app = await freshApp();
    const [uid, bob] = [await uidOf(app), await uidOf(app)];
    const group = (await newGroup(t, app)).guid as string;
    const until = Date.now() + 3_600_000;
    assert.deepEqual(
      body(
        await call(app, MUTE, uid, {
          method: 'PUT',
          body: {
            conversations: [
              { id: bob.toUpperCase(), type: 'oneOnOne', until },
              { id: group, type: 'group' },
            ],
          },
        }),
      ),
      { data: { success: true } },
    );
    const listed = await ok(app, MUTE, uid);
    assert.deepEqual(listed.mutedConversations, [
      { id: group, type: 'group' },
      { id: bob, type: 'oneOnOne', until },
    ]);
    // Muting again sets the new until (none: until unmuted); a repeat in one call: the last wins.
    await ok(app, MUTE, uid, {
      method: 'PUT',
      body: {
        conversations: [
          { id: bob, type: 'oneOnOne', until: until + 1 },
          { id: bob, type: 'oneOnOne' },
        ],
      },
    });
    assert.deepEqual((await ok(app, MUTE, uid)).mutedConversations, [
      { id: group, type: 'group' },
      { id: bob, type: 'oneOnOne' },
    ]);
    // Another user's mutes are theirs.
    assert.deepEqual((await ok(app, MUTE, bob)).mutedConversations, []);
    assert.deepEqual(
      body(
        await call(app, MUTE, uid, {
          method: 'DELETE',
          body: {
            conversations: [
              { id: group, type: 'group' },
              { id: 'never-muted', type: 'group' },
            ],
          },
        }),
      ),
      { data: { success: true } },
    );
    assert.deepEqual((await ok(app, MUTE, uid)).mutedConversations, [{ id: bob, type: 'oneOnOne' }]);
    // A 1:1 with a user named like the group is not the group's conversation.
    await ok(app, MUTE, uid, { method: 'DELETE', body: { conversations: [{ id: bob, type: 'group' }] } });
    assert.equal((await ok(app, MUTE, uid)).mutedConversations.length, 1);
  });

  it('does not list a mute that ended', async () => {
    const app = await freshApp();
    const [uid, bob] = [await uidOf(app), await uidOf(app)];
    await ok(app, MUTE, uid, { method: 'PUT', body: { conversations: [{ id: bob, type: 'oneOnOne', until: Date.now() + 60_000 }] } });
    await sql`update notification_mutes set until = now() - interval '1 second' where app_id = ${app.appId}`.execute(t.database.db);
    assert.deepEqual((await ok(app, MUTE, uid)).mutedConversations, []);
  });

  it('refuses all of a call naming what the app does not have, a time past, the user themselves; mutes none of it', async () => {
    const app = await freshApp();
    const [uid, bob] = [await uidOf(app), await uidOf(app)];
    const group = (await newGroup(t, app)).guid as string;
    const otherApp = await freshApp();
    const foreignUser = await uidOf(otherApp);
    const foreignGroup = (await newGroup(t, otherApp)).guid as string;
    const mute = (conversations: unknown[]) => call(app, MUTE, uid, { method: 'PUT', body: { conversations } });
    expectError(
      await mute([
        { id: group, type: 'group' },
        { id: 'no-such-user', type: 'oneOnOne' },
      ]),
      404,
      'ERR_UID_NOT_FOUND',
    );
    expectError(
      await mute([
        { id: bob, type: 'oneOnOne' },
        { id: 'no-such-group', type: 'group' },
      ]),
      404,
      'ERR_GUID_NOT_FOUND',
    );
    expectError(await mute([{ id: foreignUser, type: 'oneOnOne' }]), 404, 'ERR_UID_NOT_FOUND');
    expectError(await mute([{ id: foreignGroup, type: 'group' }]), 404, 'ERR_GUID_NOT_FOUND');
    expectError(await mute([{ id: group, type: 'oneOnOne' }]), 404, 'ERR_UID_NOT_FOUND');
    expectError(await mute([{ id: bob, type: 'oneOnOne', until: Date.now() - 1 }]), 400, 'ERR_BAD_REQUEST', 'conversations[0].until');
    expectError(await mute([{ id: uid, type: 'oneOnOne' }]), 400, 'ERR_BAD_REQUEST', 'conversations[0].id');
    expectError(await mute([{ id: bob, type: 'user' }]), 400, 'ERR_BAD_REQUEST');
    expectError(await mute([{ id: bob, type: 'oneOnOne', until: 1e20 }]), 400, 'ERR_BAD_REQUEST', 'conversations.0.until');
    expectError(await mute([{ id: bob, type: 'oneOnOne', extra: 1 }]), 400, 'ERR_BAD_REQUEST');
    expectError(await mute([]), 400, 'ERR_BAD_REQUEST', 'conversations');
    expectError(await mute(Array.from({ length: 101 }, () => ({ id: bob, type: 'oneOnOne' }))), 400, 'ERR_BAD_REQUEST', 'conversations');
    expectError(await call(app, MUTE, uid, { method: 'PUT', body: {} }), 400, 'ERR_BAD_REQUEST', 'conversations');
    expectError(await call(app, MUTE, 'no-such-user', { method: 'PUT', body: { conversations: [{ id: bob, type: 'oneOnOne' }] } }), 404, 'ERR_UID_NOT_FOUND');
    assert.deepEqual((await ok(app, MUTE, uid)).mutedConversations, []);
    expectError(await call(app, MUTE, uid, { method: 'DELETE', body: { conversations: [{ id: 'bad id!', type: 'group' }] } }), 400, 'ERR_BAD_REQUEST');
  });

  it('holds at most 1000 muted conversations per user', async () => {
    const app = await freshApp();
    const uid = await uidOf(app);
    await sql`insert into groups (app_id, guid, name, type) select ${app.appId}, 'cap-' || n, 'Cap', 'public' from generate_series(1, 1001) n`.execute(t.database.db);
    for (let start = 1; start <= 1000; start += 100) {
      const conversations = Array.from({ length: 100 }, (_, i) => ({ id: `cap-${start + i}`, type: 'group' }));
      await ok(app, MUTE, uid, { method: 'PUT', body: { conversations } });
    }
    expectError(await call(app, MUTE, uid, { method: 'PUT', body: { conversations: [{ id: 'cap-1001', type: 'group' }] } }), 403, 'ERR_PLAN_QUOTA_RESTRICTION');
    // Muting again what is muted already counts nothing new.
    await ok(app, MUTE, uid, { method: 'PUT', body: { conversations: [{ id: 'cap-1', type: 'group', until: Date.now() + 60_000 }] } });
    assert.equal((await ok(app, MUTE, uid)).mutedConversations.length, 1000);
    await ok(app, MUTE, uid, { method: 'DELETE', body: { conversations: [{ id: 'cap-2', type: 'group' }] } });
    await ok(app, MUTE, uid, { method: 'PUT', body: { conversations: [{ id: 'cap-1001', type: 'group' }] } });
  });

  it('goes with the group or the user muted, and with the user who muted', async () => {
    const app = await freshApp();
    const [uid, bob, carol] = [await uidOf(app), await uidOf(app), await uidOf(app)];
    const group = (await newGroup(t, app)).guid as string;
    await ok(app, MUTE, uid, {
      method: 'PUT',
      body: {
        conversations: [
          { id: group, type: 'group' },
          { id: bob, type: 'oneOnOne' },
          { id: carol, type: 'oneOnOne' },
        ],
      },
    });
    await ok(app, MUTE, carol, { method: 'PUT', body: { conversations: [{ id: uid, type: 'oneOnOne' }] } });
    assert.equal((await t.call(app, `/v3/groups/${group}`, { method: 'DELETE' })).statusCode, 200);
    assert.equal((await t.call(app, `/v3/users/${bob}`, { method: 'DELETE', body: { permanent: true } })).statusCode, 200);
    assert.deepEqual((await ok(app, MUTE, uid)).mutedConversations, [{ id: carol, type: 'oneOnOne' }]);
    assert.equal((await t.call(app, `/v3/users/${carol}`, { method: 'DELETE', body: { permanent: true } })).statusCode, 200);
    const { rows } = await sql<{ n: string }>`select count(*)::text as n from notification_mutes where app_id = ${app.appId}`.execute(t.database.db);
    assert.equal(rows[0]!.n, '0');
  });
});

describe('time zone', () => {
  it('is UTC until set; takes IANA names in any case', async () => {
    const app = await freshApp();
    const uid = await uidOf(app);
    assert.deepEqual(await ok(app, TZ, uid), { timezone: 'UTC' });
    assert.deepEqual(await ok(app, TZ, uid, { method: 'PATCH', body: { timezone: 'Asia/Kolkata' } }), { timezone: 'Asia/Kolkata' });
    assert.deepEqual(await ok(app, TZ, uid), { timezone: 'Asia/Kolkata' });
    assert.deepEqual(await ok(app, TZ, uid, { method: 'PATCH', body: { timezone: 'america/new_york' } }), { timezone: 'America/New_York' });
    assert.deepEqual(await ok(app, TZ, uid), { timezone: 'America/New_York' });
  });

  it('refuses names that are no IANA time zone, clearly, and keeps the one set', async () => {
    const app = await freshApp();
    const uid = await uidOf(app);
    await ok(app, TZ, uid, { method: 'PATCH', body: { timezone: 'Europe/Paris' } });
    for (const timezone of ['Mars/Olympus_Mons', '+05:30', 'GMT+05:30', 'Asia/Tokyo/', ' Asia/Tokyo', 'x'.repeat(65), '']) {
      expectError(await call(app, TZ, uid, { method: 'PATCH', body: { timezone } }), 400, 'ERR_BAD_REQUEST', 'timezone');
    }
    expectError(await call(app, TZ, uid, { method: 'PATCH', body: { timezone: 5 } }), 400, 'ERR_BAD_REQUEST', 'timezone');
    expectError(await call(app, TZ, uid, { method: 'PATCH', body: {} }), 400, 'ERR_BAD_REQUEST', 'timezone');
    expectError(await call(app, TZ, 'missing-user', { method: 'PATCH', body: { timezone: 'UTC' } }), 404, 'ERR_UID_NOT_FOUND');
    expectError(await call(app, TZ, 'missing-user'), 404, 'ERR_UID_NOT_FOUND');
    assert.deepEqual(await ok(app, TZ, uid), { timezone: 'Europe/Paris' });
  });
});

describe('contact details', () => {
  it('sets, reads and removes the e-mail address and phone number of the onBehalfOf user (or uid)', async () => {
    const app = await freshApp();
    const uid = await uidOf(app);
    const asUser: CallOptions = { onBehalfOf: uid };
    assert.deepEqual(await ok(app, CONTACT, undefined, asUser), {});
    assert.deepEqual(await ok(app, CONTACT, undefined, { ...asUser, method: 'PATCH', body: { email: 'someone@example.com', phno: '+919591128691' } }), {
      email: 'someone@example.com',
      phno: '+919591128691',
    });
    assert.deepEqual(await ok(app, CONTACT, uid), { email: 'someone@example.com', phno: '+919591128691' });
    assert.deepEqual(await ok(app, CONTACT, uid, { method: 'PATCH', body: { phno: '+14155550123' } }), { email: 'someone@example.com', phno: '+14155550123' });
    assert.deepEqual(await ok(app, CONTACT, undefined, { ...asUser, method: 'PATCH', body: { email: null } }), { phno: '+14155550123' });
    assert.deepEqual(await ok(app, CONTACT, uid, { ...asUser, method: 'DELETE' }), { success: true });
    assert.deepEqual(await ok(app, CONTACT, undefined, asUser), {});
    assert.deepEqual(await ok(app, CONTACT, undefined, { ...asUser, method: 'DELETE' }), { success: true }, 'nothing to delete is no error');
  });

  it('refuses bad addresses and numbers, a request naming no user or two, and users the app does not have', async () => {
    const app = await freshApp();
    const [uid, other] = [await uidOf(app), await uidOf(app)];
    const patch = (payload: unknown, options: CallOptions = { onBehalfOf: uid }) => call(app, CONTACT, undefined, { ...options, method: 'PATCH', body: payload });
    expectError(await patch({ email: 'not-an-address' }), 400, 'ERR_BAD_REQUEST', 'email');
    expectError(await patch({ email: 'someone@example.com', phno: '9591128691' }), 400, 'ERR_BAD_REQUEST', 'phno');
    expectError(await patch({ phno: '+1 415 555 0123' }), 400, 'ERR_BAD_REQUEST', 'phno');
    expectError(await patch({ email: `${'a'.repeat(250)}@example.com` }), 400, 'ERR_BAD_REQUEST', 'email');
    expectError(await patch({}), 400, 'ERR_BAD_REQUEST');
    expectError(await patch({ mobile: '+14155550123' }), 400, 'ERR_BAD_REQUEST');
    expectError(await patch({ email: 'a@example.com' }, {}), 400, 'ERR_BAD_REQUEST', 'onBehalfOf');
    expectError(await call(app, CONTACT, other, { onBehalfOf: uid }), 400, 'ERR_BAD_REQUEST', 'uid');
    expectError(await call(app, CONTACT, undefined, { onBehalfOf: 'missing-user' }), 404, 'ERR_UID_NOT_FOUND');
    expectError(await call(app, CONTACT, 'missing-user', { method: 'DELETE' }), 404, 'ERR_UID_NOT_FOUND');
    assert.deepEqual(await ok(app, CONTACT, uid), {});
  });
});

describe('isolation between apps', () => {
  it('another app reaches none of a user’s notification data, even with the same uid', async () => {
    const [a, b] = [await freshApp(), await freshApp()];
    const uid = uniqueId('twin');
    await newUser(t, a, { uid });
    const bob = await uidOf(a);
    await ok(a, PREFS, uid, { method: 'PATCH', body: { groupPreferences: { groupMessages: 1 } } });
    await ok(a, TZ, uid, { method: 'PATCH', body: { timezone: 'Asia/Tokyo' } });
    await ok(a, CONTACT, uid, { method: 'PATCH', body: { email: 'a@example.com' } });
    await ok(a, MUTE, uid, { method: 'PUT', body: { conversations: [{ id: bob, type: 'oneOnOne' }] } });
    // B without the user: not found, everywhere.
    for (const [url, method, payload] of [
      [PREFS, 'GET'],
      [PREFS, 'PATCH', {}],
      [PREFS, 'DELETE'],
      [MUTE, 'GET'],
      [MUTE, 'PUT', { conversations: [{ id: bob, type: 'oneOnOne' }] }],
      [MUTE, 'DELETE', { conversations: [{ id: bob, type: 'oneOnOne' }] }],
      [TZ, 'GET'],
      [TZ, 'PATCH', { timezone: 'UTC' }],
      [CONTACT, 'GET'],
      [CONTACT, 'DELETE'],
    ] as Array<[string, 'GET', unknown?]>) {
      expectError(await call(b, url, uid, { method, ...(payload ? { body: payload } : {}) }), 404, 'ERR_UID_NOT_FOUND');
    }
    // B with a user of the same uid: its own, empty data.
    await newUser(t, b, { uid });
    assert.equal((await ok(b, PREFS, uid)).preferences.group.messagesSetting, 2);
    assert.deepEqual(await ok(b, TZ, uid), { timezone: 'UTC' });
    assert.deepEqual(await ok(b, CONTACT, uid), {});
    assert.deepEqual((await ok(b, MUTE, uid)).mutedConversations, []);
    expectError(await call(b, MUTE, uid, { method: 'PUT', body: { conversations: [{ id: bob, type: 'oneOnOne' }] } }), 404, 'ERR_UID_NOT_FOUND');
    await ok(b, PREFS, uid, { method: 'DELETE' });
    await ok(b, CONTACT, uid, { method: 'DELETE' });
    await ok(b, MUTE, uid, { method: 'DELETE', body: { conversations: [{ id: bob, type: 'oneOnOne' }] } });
    assert.equal((await ok(a, PREFS, uid)).preferences.group.messagesSetting, 1);
    assert.deepEqual(await ok(a, TZ, uid), { timezone: 'Asia/Tokyo' });
    assert.deepEqual(await ok(a, CONTACT, uid), { email: 'a@example.com' });
    assert.deepEqual((await ok(a, MUTE, uid)).mutedConversations, [{ id: bob, type: 'oneOnOne' }]);
  });
});

describe('the delivery engine’s read', () => {
  /** Counts the statements run through the database it wraps. */
  const counting = () => {
    let statements = 0;
    const plugin: KyselyPlugin = {
      transformQuery: (args) => {
        statements++;
        return args.node;
      },
      transformResult: async (args) => args.result,
    };
    return { db: t.database.db.withPlugin(plugin), statements: () => statements };
  };

  it('reads each recipient’s values, time zone, mute of the conversation and contact details in one statement', async () => {
    const app = await freshApp();
    const [ann, ben, cat, dan] = [await uidOf(app), await uidOf(app), await uidOf(app), await uidOf(app)];
    const group = (await newGroup(t, app)).guid as string;
    const other = (await newGroup(t, app)).guid as string;
    await ok(app, PREFS, ann, { method: 'PATCH', body: { groupPreferences: { groupMessages: 3 } } });
    await ok(app, TZ, ann, { method: 'PATCH', body: { timezone: 'Asia/Tokyo' } });
    await ok(app, CONTACT, ann, { method: 'PATCH', body: { email: 'ann@example.com', phno: '+14155550123' } });
    await ok(app, MUTE, ann, { method: 'PUT', body: { conversations: [{ id: group, type: 'group' }] } });
    await ok(app, MUTE, ben, {
      method: 'PUT',
      body: {
        conversations: [
          { id: other, type: 'group' },
          { id: group, type: 'group', until: Date.now() + 60_000 },
        ],
      },
    });
    await ok(app, MUTE, cat, { method: 'PUT', body: { conversations: [{ id: group, type: 'group', until: Date.now() + 60_000 }] } });
    await sql`update notification_mutes set until = now() - interval '1 second' where app_id = ${app.appId} and uid = ${cat}`.execute(t.database.db);
    assert.equal((await t.call(app, `/v3/users/${dan}`, { method: 'DELETE' })).statusCode, 200);
    const foreign = await freshApp();
    const stranger = await uidOf(foreign);
    const { db, statements } = counting();
    const rows = await new UserPreferencesRepository(db).recipients(app.appId, [ann, ben, cat, dan, stranger, 'nobody'], { type: 'group', id: group }, new Date());
    assert.equal(statements(), 1);
    const byUid = new Map(rows.map((row) => [row.uid, row]));
    assert.deepEqual([...byUid.keys()].sort(), [ann, ben, cat].sort(), 'deactivated, unknown and other apps’ users are left out');
    const conversation = { type: 'group', id: group };
    assert.deepEqual(byUid.get(ann), { uid: ann, conversation, preferences: { 'group.messagesSetting': 3 }, timezone: 'Asia/Tokyo', email: 'ann@example.com', phone: '+14155550123', muted: true });
    assert.deepEqual(byUid.get(ben), { uid: ben, conversation, preferences: {}, timezone: null, email: null, phone: null, muted: true });
    assert.equal(byUid.get(cat)!.muted, false, 'a mute that ended');
    assert.deepEqual(await new UserPreferencesRepository(db).recipients(app.appId, [], { type: 'group', id: group }, new Date()), []);
    // 1:1: the mute of the other user.
    await ok(app, MUTE, ben, { method: 'PUT', body: { conversations: [{ id: ann, type: 'oneOnOne' }] } });
    const direct = await new UserPreferencesRepository(t.database.db).recipients(app.appId, [ben, cat], { type: 'oneOnOne', id: ann }, new Date());
    assert.deepEqual(
      direct.map((row) => [row.uid, row.muted]).sort(),
      [
        [ben, true],
        [cat, false],
      ].sort(),
    );
    // Many conversations in one statement (a round of deliveries): each row names its own.
    const counted = counting();
    const many = await new UserPreferencesRepository(counted.db).recipientsIn(
      app.appId,
      [
        { uid: ben, conversation: { type: 'oneOnOne', id: ann } },
        { uid: ben, conversation: { type: 'group', id: other } },
        { uid: ann, conversation: { type: 'group', id: group } },
        { uid: cat, conversation: { type: 'oneOnOne', id: ann } },
      ],
      new Date(),
    );
    assert.equal(counted.statements(), 1);
    assert.deepEqual(
      many.map((row) => [row.uid, row.conversation.type, row.conversation.id, row.muted]).sort(),
      [
        [ben, 'oneOnOne', ann, true],
        [ben, 'group', other, true],
        [ann, 'group', group, true],
        [cat, 'oneOnOne', ann, false],
      ].sort(),
    );
  });

  it('answers what applies to each recipient (PreferencesService.recipients)', async () => {
    const app = await freshApp();
    const [ann, ben] = [await uidOf(app), await uidOf(app)];
    await settings(app, { preferences: { group: { repliesOverride: false, repliesSetting: 1 } } });
    await ok(app, PREFS, ann, { method: 'PATCH', body: { groupPreferences: { groupMessages: 3, groupReplies: 2 } } });
    const ctx = { appId: app.appId, requestId: 'engine', log: silentLogger };
    const recipients = await t.services.notificationPreferences.recipients(ctx, [ann, ben], { type: 'group', id: 'g' });
    assert.equal(recipients.get(ann)!.preferences.group.messagesSetting, 3);
    assert.equal(recipients.get(ann)!.preferences.group.repliesSetting, 1, 'the app does not let users override replies');
    assert.equal(recipients.get(ben)!.preferences.group.messagesSetting, 2);
    assert.deepEqual({ ...recipients.get(ben)!, preferences: undefined }, { uid: ben, preferences: undefined, timeZone: null, muted: false, email: null, phone: null });
  });
});

describe('a user deleted permanently', () => {
  it('takes their preferences, time zone, contact details and mutes along', async () => {
    const app = await freshApp();
    const [uid, bob] = [await uidOf(app), await uidOf(app)];
    await ok(app, PREFS, uid, { method: 'PATCH', body: { groupPreferences: { groupMessages: 1 } } });
    await ok(app, TZ, uid, { method: 'PATCH', body: { timezone: 'UTC' } });
    await ok(app, MUTE, uid, { method: 'PUT', body: { conversations: [{ id: bob, type: 'oneOnOne' }] } });
    assert.equal((await t.call(app, `/v3/users/${uid}`, { method: 'DELETE', body: { permanent: true } })).statusCode, 200);
    const { rows } = await sql<{ n: string }>`
      select ((select count(*) from notification_user_preferences where app_id = ${app.appId}) + (select count(*) from notification_mutes where app_id = ${app.appId}))::text as n`.execute(
      t.database.db,
    );
    assert.equal(rows[0]!.n, '0');
    // Made again, the uid starts with nothing.
    await newUser(t, app, { uid });
    assert.deepEqual(await ok(app, TZ, uid), { timezone: 'UTC' });
    assert.equal((await ok(app, PREFS, uid)).preferences.group.messagesSetting, 2);
  });
});
