import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { silentLogger } from '../../src/domain/context.js';
import { defaultNotificationSettings } from '../../src/domain/notifications/preferences-defaults.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, type TestApp } from '../helpers/app.js';

const URL = '/v3/notifications/v1/settings';
let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const freshApp = () => t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Fresh app' });
const read = async (app: CreatedApp) => {
  const response = await t.call(app, URL);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const change = (app: CreatedApp, payload: unknown) => t.call(app, URL, { method: 'PATCH', body: payload });
const refused = async (app: CreatedApp, payload: unknown, field: string) => {
  const before = await read(app);
  const response = await change(app, payload);
  assert.equal(response.statusCode, 400, response.body);
  assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
  assert.ok(Object.keys(body(response).error.details ?? {}).includes(field), `${field} named: ${response.body}`);
  assert.deepEqual(await read(app), before, 'nothing changed');
};

/** The vendor's example of list-settings (../shared/reference), when present. */
function vendorExample(): any {
  const file = path.resolve('../shared/reference/cometchat-chat-apis.json');
  if (!fs.existsSync(file)) return undefined;
  const spec = JSON.parse(fs.readFileSync(file, 'utf8'));
  return spec.paths['/notifications/v1/settings'].get.responses['200'].content['application/json'].example.data;
}

describe('notifications-push-list-settings', () => {
  it('answers the defaults, with every field of the vendor’s example', async () => {
    const data: any = await read(await freshApp());
    assert.deepEqual(data, defaultNotificationSettings());
    const example = vendorExample();
    if (example) {
      const keys = (o: object) => Object.keys(o).sort();
      assert.deepEqual(keys(data), keys(example));
      for (const section of Object.keys(example.preferences)) {
        const ours = (data.preferences as unknown as Record<string, object>)[section]!;
        if (typeof example.preferences[section] === 'object') {
          for (const key of Object.keys(example.preferences[section])) assert.ok(key in ours, `preferences.${section}.${key}`);
        }
      }
      for (const key of Object.keys(example.templates)) assert.ok(key in data.templates, `templates.${key}`);
      assert.deepEqual(data.sound, example.sound);
    }
    assert.equal(data.preferences.group.messagesSetting, 2);
    assert.equal(data.preferences.group.memberJoinedSetting, 1, 'group actions are not notified by default');
    assert.equal(data.preferences.oneOnOne.reactionsSetting, 2, 'reactions to own messages by default');
  });
});

describe('notifications-push-update-settings', () => {
  it('changes the fields given, keeps the others, and answers success', async () => {
    const app = await freshApp();
    const response = await change(app, {
      preferences: { group: { messagesSetting: 3, messagesOverride: false }, bypassPreferencesForMentions: true, push: { customJson: { hello: 'world' } }, email: { maxPerDay: 5 } },
      sound: { chat: 'ping' },
      templates: { usePrivacyTemplate: 2, textMessageTemplateDefault: { body: 'New: {{message.data.text}}' } },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response), { data: { success: true } });
    const expected = defaultNotificationSettings();
    expected.preferences.group.messagesSetting = 3;
    expected.preferences.group.messagesOverride = false;
    expected.preferences.bypassPreferencesForMentions = true;
    expected.preferences.push.customJson = { hello: 'world' };
    expected.preferences.email.maxPerDay = 5;
    expected.sound.chat = 'ping';
    expected.templates.usePrivacyTemplate = 2;
    (expected.templates.textMessageTemplateDefault as Record<string, string>).body = 'New: {{message.data.text}}';
    assert.deepEqual(await read(app), expected);
    // customJson is replaced whole; a schedule day in part keeps its other fields.
    assert.equal((await change(app, { preferences: { push: { customJson: { other: [1, { x: null }] } }, mute: { schedulePreferenceSetting: { friday: { from: 900 } } } } })).statusCode, 200);
    const after = await read(app);
    assert.deepEqual(after.preferences.push.customJson, { other: [1, { x: null }] });
    assert.deepEqual(after.preferences.mute.schedulePreferenceSetting.friday, { from: 900, to: 2359, dnd: false });
    assert.equal(after.preferences.group.messagesSetting, 3);
  });

  it('takes back what it answers (a read, changed and sent whole)', async () => {
    const app = await freshApp();
    const data = await read(app);
    data.preferences.call.initiatedSetting = 1;
    data.preferences.mute.dndPreferenceSetting = 2;
    const response = await change(app, data);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(await read(app), data);
  });

  it('refuses fields that do not exist, values out of range or of another type, and changes nothing', async () => {
    const app = await freshApp();
    // An unknown field: its object is named (the validator does not name the field itself).
    await refused(app, { preferences: { group: { messageSetting: 2 } } }, 'preferences.group');
    await refused(app, { preference: {} }, 'body');
    await refused(app, { preferences: { group: { messagesSetting: 4 } } }, 'preferences.group.messagesSetting');
    await refused(app, { preferences: { group: { memberLeftSetting: 3 } } }, 'preferences.group.memberLeftSetting');
    await refused(app, { preferences: { oneOnOne: { messagesSetting: '2' } } }, 'preferences.oneOnOne.messagesSetting');
    await refused(app, { preferences: { call: { busySetting: 0 } } }, 'preferences.call.busySetting');
    await refused(app, { preferences: { bypassPreferencesForMentions: 'yes' } }, 'preferences.bypassPreferencesForMentions');
    await refused(app, { preferences: { email: { intervalInSeconds: 10 } } }, 'preferences.email.intervalInSeconds');
    await refused(app, { preferences: { sms: { maxPerDay: 1_000_000 } } }, 'preferences.sms.maxPerDay');
    await refused(app, { preferences: { mute: { schedulePreferenceSetting: { monday: { from: 2400 } } } } }, 'preferences.mute.schedulePreferenceSetting.monday.from');
    await refused(app, { preferences: { mute: { schedulePreferenceSetting: { someday: {} } } } }, 'preferences.mute.schedulePreferenceSetting');
    await refused(app, { sound: { chat: '' } }, 'sound.chat');
    await refused(app, { templates: { textMessageTemplateDefault: { body: 'x'.repeat(1001) } } }, 'templates.textMessageTemplateDefault.body');
    await refused(app, { templates: { textMessageTemplateDefault: { body_image: 'x' } } }, 'templates.textMessageTemplateDefault');
    await refused(app, { templates: { usePrivacyTemplate: true } }, 'templates.usePrivacyTemplate');
  });

  it('refuses what its schema cannot see: a time of day that is none, customJson too large, a digest’s maxima the wrong way round', async () => {
    const app = await freshApp();
    // With a valid field beside: all or nothing.
    await refused(
      app,
      { preferences: { group: { messagesSetting: 1 }, mute: { schedulePreferenceSetting: { monday: { from: 1179, to: 1179, dnd: true } } } } },
      'preferences.mute.schedulePreferenceSetting.monday.from',
    );
    await refused(app, { preferences: { push: { customJson: { blob: 'x'.repeat(5000) } } } }, 'preferences.push.customJson');
    await refused(app, { preferences: { email: { maxPerDay: 3, maxPerDayPerConversation: 4 } } }, 'preferences.email.maxPerDayPerConversation');
    // Against what is stored: maxPerDay below the stored maxPerDayPerConversation (2).
    await refused(app, { preferences: { sms: { maxPerDay: 1 } } }, 'preferences.sms.maxPerDayPerConversation');
    assert.equal((await change(app, { preferences: { sms: { maxPerDay: 2 } } })).statusCode, 200);
  });

  it('refuses bodies that are no object, hostile text, huge numbers and deep nesting, with a clear 400', async () => {
    const app = await freshApp();
    const deep = `${'{"a":'.repeat(100)}1${'}'.repeat(100)}`;
    for (const payload of [
      '[]',
      '"x"',
      '{"preferences": []}',
      '{"preferences": {"push": {"customJson": [1]}}}',
      `{"preferences": {"push": {"customJson": ${deep}}}}`,
      '{"templates": {"textMessageTemplateDefault": {"body": "\\ud800"}}}',
      '{"sound": {"chat": "a\\u0000b"}}',
      '{"sound": {"chat": 1e400}}',
      '{"preferences": {"group": {"messagesSetting": 2',
    ]) {
      const response = await t.call(app, URL, { method: 'PATCH', body: payload, headers: { 'content-type': 'application/json' } });
      assert.equal(response.statusCode, 400, `${payload}: ${response.body}`);
    }
    assert.deepEqual(await read(app), defaultNotificationSettings());
  });

  it('keeps both of two concurrent changes to different fields', async () => {
    const app = await freshApp();
    const responses = await Promise.all([
      change(app, { preferences: { group: { memberJoinedSetting: 2 } } }),
      change(app, { preferences: { oneOnOne: { repliesSetting: 3 } } }),
      change(app, { sound: { call: 'ring' } }),
      change(app, { templates: { smsContentTemplateDefault: { bodyGroup: 'sms' } } }),
    ]);
    for (const response of responses) assert.equal(response.statusCode, 200, response.body);
    const data = await read(app);
    assert.equal(data.preferences.group.memberJoinedSetting, 2);
    assert.equal(data.preferences.oneOnOne.repliesSetting, 3);
    assert.equal(data.sound.call, 'ring');
    assert.equal(data.templates.smsContentTemplateDefault.bodyGroup, 'sms');
  });

  it('reads stored settings over the defaults: a field stored damaged or missing has its default', async () => {
    const app = await freshApp();
    assert.equal((await change(app, { preferences: { group: { messagesSetting: 3 } } })).statusCode, 200);
    await sql`update notification_settings set preferences = jsonb_set(preferences - 'sms', '{group,repliesSetting}', '"two"') where app_id = ${app.appId}`.execute(t.database.db);
    const data = await read(app);
    assert.equal(data.preferences.group.messagesSetting, 3);
    assert.equal(data.preferences.group.repliesSetting, 2);
    assert.deepEqual(data.preferences.sms, defaultNotificationSettings().preferences.sms);
  });
});

describe('notifications-push-reset-settings', () => {
  it('puts the defaults back, and answers success', async () => {
    const app = await freshApp();
    assert.equal((await change(app, { preferences: { group: { messagesSetting: 1 } }, sound: { chat: 'x' } })).statusCode, 200);
    const response = await t.call(app, URL, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response), { data: { success: true } });
    assert.deepEqual(await read(app), defaultNotificationSettings());
    assert.equal((await t.call(app, URL, { method: 'DELETE' })).statusCode, 200, 'resetting the defaults is no error');
  });
});

describe('isolation', () => {
  it('one app’s settings are its own', async () => {
    const [a, b] = [await freshApp(), await freshApp()];
    assert.equal((await change(a, { preferences: { group: { messagesSetting: 3 } }, templates: { textMessageTemplatePrivacy: { body: 'A only' } } })).statusCode, 200);
    assert.deepEqual(await read(b), defaultNotificationSettings());
    assert.equal((await change(b, { sound: { chat: 'b' } })).statusCode, 200);
    assert.equal((await t.call(b, URL, { method: 'DELETE' })).statusCode, 200);
    const data = await read(a);
    assert.equal(data.preferences.group.messagesSetting, 3);
    assert.equal(data.templates.textMessageTemplatePrivacy.body, 'A only');
    assert.equal(data.sound.chat, 'default');
  });

  it('needs a fullAccess key of the app', async () => {
    const app = await freshApp();
    assert.equal((await t.call(app, URL, { key: 'auth' })).statusCode, 403);
    assert.equal((await t.call(app, URL, { key: { literal: t.appB.apiKey } })).statusCode, 401);
    assert.equal((await t.call(app, URL, { method: 'PATCH', body: { sound: { chat: 'x' } }, key: 'none' })).statusCode, 401);
    assert.deepEqual(await read(app), defaultNotificationSettings());
  });
});
