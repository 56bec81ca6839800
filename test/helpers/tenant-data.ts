/**
 * A tenant's data for isolation tests: one of everything an operation can name (users, a group
 * with members and a ban, friends, a block, a role with permissions, 1:1 and group messages, a
 * thread reply, reactions, receipts and conversation tags, an API key, an auth token, and
 * moderation: a keyword list, a rule, a reason, flags, a held message, a hook), and the
 * database side: every table from the catalogue, a snapshot of an app's rows, and a copy of one
 * app's rows into another.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { sql } from 'kysely';
import { silentLogger } from '../../src/domain/context.js';
import { NotificationLogRepository } from '../../src/repositories/notifications/notification-log.repository.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, type CallOptions, type TestApp } from './app.js';

/** What two tenants may share: ids chosen by the client, so a twin of A can hold the same ones. */
export interface SharedIds {
  /** u1 (owner, sender), u2 (role, friend, member), u3 (moderator), u4 (banned, blocked), u5 (deactivated). */
  users: string[];
  group: string;
  role: string;
  tag: string;
  reaction: string;
  /** A moderation rule (it holds messages with the word `${prefix}held` or its keyword list's terms), a keyword list, a reason. */
  rule: string;
  keywordList: string;
  reason: string;
  /** An FCM provider's id and an APNs provider's. */
  fcmProvider: string;
  apnsProvider: string;
  /** Every name and text starts with it, so that it is what a search looks for. */
  prefix: string;
}

export interface Tenant extends SharedIds {
  app: CreatedApp;
  /** In every stored name, text, description and metadata of this tenant, never in a request. */
  marker: string;
  /**
   * m1 (1:1 u1 → u2, flagged by u2), m2 (u1 → group, flagged by u3, reviewed), m3 (u2's reply to m2),
   * m4 (u2 → u1, deleted), m5 (u1 → u2, held by the rule, marked reviewed).
   */
  messages: string[];
  /** The 1:1 conversation of u1 and u2, and the group's. */
  conversations: string[];
  /** An API key made through the API, and its masked form (which names it too). */
  apiKeys: string[];
  /** u1's auth token, and its masked form. */
  authTokens: string[];
  /** A device's push token registered for u1 with that auth token (it carries the marker). */
  pushTokens: string[];
  /** What must never appear in another app's answer: every key and token, plain and masked, and the hook's signing secret. */
  secrets: string[];
  /** A user that no twin holds: the one messages made by the matrix mention. */
  loner?: string;
}

const hex = (bytes: number) => crypto.randomBytes(bytes).toString('hex');

export function sharedIds(): SharedIds {
  const prefix = `iso${hex(4)}`;
  return {
    users: [1, 2, 3, 4, 5].map((n) => `${prefix}-u${n}`),
    group: `${prefix}-g1`,
    role: `${prefix}-r1`,
    tag: `${prefix}-tag`,
    reaction: `${prefix}-re`,
    rule: `${prefix}-rule`,
    keywordList: `${prefix}-kw`,
    reason: `${prefix}-reason`,
    fcmProvider: `${prefix}-fcm`,
    apnsProvider: `${prefix}-apns`,
    prefix,
  };
}

/** A rule's condition: text messages holding a term of the keyword list `list`. */
export function listCondition(list: string): Record<string, unknown> {
  return { operand: 'text', category: 'word', operator: 'contains', isKeywordsReferencePresent: true, value: [list] };
}

export function newMarker(): string {
  return `mk${hex(6)}`;
}

/** Creates an app outside the API, as `parley apps create` does. */
export function newApp(t: TestApp, name: string): Promise<CreatedApp> {
  return t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name });
}

/** Creates `ids`' entities in `app` through the API; every stored text carries `marker`. */
export async function seedTenant(t: TestApp, app: CreatedApp, ids: SharedIds, marker: string): Promise<Tenant> {
  const ok = async (url: string, options: CallOptions & { method: NonNullable<CallOptions['method']> }) => {
    const response = await t.call(app, url, options);
    assert.equal(response.statusCode, 200, `seeding ${options.method} ${url}: ${response.body}`);
    return body(response).data;
  };
  const [u1, u2, u3, u4, u5] = ids.users as [string, string, string, string, string];
  const text = (what: string) => `${ids.prefix} ${what} ${marker}`;
  await ok('/v3/roles', { method: 'POST', body: { role: ids.role, name: text('role'), description: marker, metadata: { marker } } });
  await ok(`/v3/roles/${ids.role}/restrictedfeatures`, { method: 'POST', body: { featuresToRestrict: ['getCall'] } });
  await ok(`/v3/roles/${ids.role}/permissions`, { method: 'PUT', body: { permissions: { initiateCall: 'deny' } } });
  for (const [n, uid] of ids.users.entries()) {
    const role = uid === u2 ? { role: ids.role } : {};
    await ok('/v3/users', { method: 'POST', body: { uid, name: text(`user${n + 1}`), statusMessage: marker, metadata: { marker }, tags: [ids.tag], ...role } });
  }
  await ok('/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [u5] } });
  await ok('/v3/groups', {
    method: 'POST',
    body: {
      guid: ids.group,
      name: text('group'),
      type: 'public',
      owner: u1,
      description: marker,
      metadata: { marker },
      tags: [ids.tag],
      members: { participants: [u2], moderators: [u3] },
    },
  });
  await ok(`/v3/groups/${ids.group}/bannedusers/${u4}`, { method: 'POST' });
  await ok(`/v3/groups/${ids.group}/scopes/participant/permissions`, { method: 'PUT', body: { permissions: { listReactions: 'allow' } } });
  await ok(`/v3/users/${u1}/friends`, { method: 'POST', body: { accepted: [u2] } });
  await ok(`/v3/users/${u1}/blockedusers`, { method: 'POST', body: { blockedUids: [u4] } });
  const send = (from: string, receiver: string, receiverType: string, what: string, url = '/v3/messages') =>
    ok(url, {
      method: 'POST',
      onBehalfOf: from,
      body: { receiver, receiverType, category: 'message', type: 'text', data: { text: text(`${what} <@uid:${u2}>`), metadata: { marker } }, tags: [ids.tag] },
    });
  const m1 = await send(u1, u2, 'user', 'hello');
  const m2 = await send(u1, ids.group, 'group', 'hello group');
  const m3 = await send(u2, ids.group, 'group', 'reply', `/v3/messages/${m2.id}/thread`);
  const m4 = await send(u2, u1, 'user', 'deleted');
  await ok(`/v3/messages/${m4.id}`, { method: 'DELETE', onBehalfOf: u2 });
  await ok(`/v3/messages/${m1.id}/reactions/${ids.reaction}`, { method: 'POST', onBehalfOf: u2 });
  await ok(`/v3/messages/${m2.id}/reactions/${ids.reaction}`, { method: 'POST', onBehalfOf: u3 });
  await ok(`/v3/users/${u1}/conversation/delivered`, { method: 'POST', onBehalfOf: u2, body: { messageId: m1.id } });
  await ok(`/v3/users/${u1}/conversation/read`, { method: 'POST', onBehalfOf: u2, body: { messageId: m1.id } });
  await ok(`/v3/users/${u2}/conversation`, { method: 'PUT', onBehalfOf: u1, body: { tags: [ids.tag] } });
  await ok(`/v3/groups/${ids.group}/conversation`, { method: 'PUT', onBehalfOf: u1, body: { tags: [ids.tag] } });
  await ok(`/v3/groups/${ids.group}/conversation/read`, { method: 'POST', onBehalfOf: u3, body: { messageId: m2.id } });
  const key = await ok('/v3/apikeys', { method: 'POST', body: { name: text('key'), scope: 'fullAccess' } });
  const keys = await ok('/v3/apikeys', { method: 'GET', query: { searchKey: ids.prefix } });
  const keyHint = (keys as Array<{ apiKey: string; name: string }>).find((k) => k.name === text('key'))!.apiKey;
  const token = await ok(`/v3/users/${u1}/auth_tokens`, { method: 'POST', body: {} });
  await ok(`/v3/users/${u1}/auth_tokens/${token.authToken}`, { method: 'PUT', body: { platform: marker, userAgent: marker, appInfo: { marker } } });
  const tokens = (await ok(`/v3/users/${u1}/auth_tokens`, { method: 'GET' })) as Array<{ authToken: string }>;
  const tokenHint = tokens[0]!.authToken;
  // Notifications: u1's device, and a log entry about m1 (recorded as the delivery engine does).
  const pushToken = `${ids.prefix}-fcm-${marker}`;
  await ok('/v3/notifications/push/v1/tokens', { method: 'POST', body: { authToken: token.authToken, platform: 'fcm_android', fcmToken: pushToken, timezone: 'Asia/Kolkata' } });
  assert.ok(tokenHint.includes('*') && keyHint.includes('*'), 'keys and tokens are listed masked');
  // Moderation: a list and a rule that references it, a built-in rule and reason changed, a
  // reason of A's own, flags (m2's reviewed), a message the rule holds, and a hook (off: no send calls it).
  await ok('/v3/moderation/keywords', { method: 'POST', body: { id: ids.keywordList, name: text('keywords'), description: marker, category: 'word', searchTerms: [`${ids.prefix}kw`] } });
  const held = `${ids.prefix}held`;
  const words = { operand: 'text', category: 'word', operator: 'contains', value: [held], message: [marker] };
  await ok('/v3/moderation/rules', {
    method: 'POST',
    body: { id: ids.rule, name: text('rule'), description: marker, enabled: true, conditions: [words, listCondition(ids.keywordList)], action: ['blockMessage'] },
  });
  await ok('/v3/moderation/rules/link_filter', { method: 'PUT', body: { description: marker } });
  await ok('/v3/moderation/reasons', { method: 'POST', body: { id: ids.reason, name: text('reason'), description: marker } });
  await ok('/v3/moderation/reasons/spam', { method: 'PUT', body: { description: marker } });
  await ok(`/v3/messages/${m1.id}/flagged`, { method: 'POST', onBehalfOf: u2, body: { reasonId: ids.reason, remark: marker } });
  await ok(`/v3/messages/${m2.id}/flagged`, { method: 'POST', onBehalfOf: u3, body: { reasonId: 'spam', remark: marker } });
  await ok(`/v3/moderation/flagged-messages/${m2.id}`, { method: 'PATCH', body: { status: 'approved' } });
  const m5 = await send(u1, u2, 'user', `held ${held}`);
  assert.equal(m5.data.moderation.status, 'pending', 'the rule holds the message');
  await ok(`/v3/moderation/blocked-messages/${m5.id}`, { method: 'PATCH', body: { reviewed: true } });
  const hook = await ok('/v3/moderation/hook', { method: 'PUT', body: { url: `https://hooks.example.com/${marker}`, enabled: false } });
  // Notifications: an FCM and an APNs provider (the marker in their file names and e-mail), their keys made here and never answered.
  const rsa = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const p8 = crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  await ok('/v3/notifications/push/v1/providers/fcm', {
    method: 'POST',
    body: {
      providerId: ids.fcmProvider,
      serviceAccountFilename: `${marker}.json`,
      serviceAccountCreds: { type: 'service_account', project_id: `${ids.prefix}-project`, client_email: `${marker}@${ids.prefix}.iam.gserviceaccount.com`, private_key: rsa },
    },
  });
  await ok('/v3/notifications/push/v1/providers/apns', {
    method: 'POST',
    body: { providerId: ids.apnsProvider, keyId: 'AKEY000001', teamId: 'ATEAM00001', bundleId: `com.example.${ids.prefix}`, p8KeyFilename: `${marker}.p8`, p8Key: p8 },
  });
  // A piece of each key past the part every key of its kind shares (its PEM body's start).
  const keyPieces = [rsa, p8].map((pem) =>
    pem
      .split('\n')
      .filter((line) => line && !line.startsWith('-----'))
      .join('')
      .slice(64, 104),
  );
  // Notifications: A's Twilio, SendGrid and custom providers (the marker in their URLs, names and secrets; secrets answered masked only).
  const twilio = await ok('/v3/notifications/sms/v1/providers/twilio', {
    method: 'POST',
    body: { twilioAccountSID: `AC${hex(16)}`, twilioAuthToken: `${marker}${hex(8)}`, twilioSenderPhoneNumber: '+13611364718' },
  });
  const sendGrid = await ok('/v3/notifications/email/v1/providers/sendgrid', {
    method: 'POST',
    body: { sendGridApiKey: `SG.${marker}.${hex(16)}`, sendGridTemplateID: `d-${hex(16)}`, sendGridUnsubscribeGroupID: '33832', senderName: text('mailer'), senderEmail: `${marker}@example.com` },
  });
  for (const channel of ['push', 'sms', 'email']) {
    const provider = { webhookURL: `https://hooks.example.com/${channel}/${marker}`, useBasicAuth: true, basicAuthUsername: marker, basicAuthPassword: `pw-${marker}` };
    await ok(`/v3/notifications/${channel}/v1/providers/custom`, { method: 'POST', body: provider });
  }
  // Their plain secrets hold the marker; their masked forms name them too.
  const providerSecrets = [twilio.twilioAuthToken as string, sendGrid.sendGridApiKey as string];
  await new NotificationLogRepository(t.database.db).record(app.appId, [
    {
      processingStartedAtMS: Date.now() - 5,
      processingEndedAtMS: Date.now(),
      channel: 'push',
      provider: 'fcm',
      trigger: 'after_message',
      messageId: String(m1.id),
      messageSentAtMS: Number(m1.sentAt) * 1000,
      messageCategory: 'message',
      messageType: 'text',
      sender: u1,
      receiver: u2,
      receiverType: 'user',
      tokenType: 'fcm_android',
      pushToken,
      payload: { title: marker },
      notificationTriggered: false,
      reason: 'MUTE_PREFERENCE',
    },
  ]);
  // Notifications, who is notified and when: the app's settings, u1's preferences, time zone, contact
  // details (the marker in a template, a sound and the e-mail address) and mutes (of u2 and the group).
  await ok('/v3/notifications/v1/settings', { method: 'PATCH', body: { sound: { chat: marker }, templates: { textMessageTemplatePrivacy: { body: text('template') } } } });
  await ok('/v3/notifications/v1/preferences', { method: 'PATCH', query: { uid: u1 }, body: { groupPreferences: { groupMessages: 3 }, mutePreferences: { dnd: 2 } } });
  await ok('/v3/notifications/v1/preferences/timezone', { method: 'PATCH', query: { uid: u1 }, body: { timezone: 'Asia/Tokyo' } });
  await ok('/v3/notifications/v1/contact-details', { method: 'PATCH', onBehalfOf: u1, body: { email: `${marker}@example.com`, phno: '+14155550123' } });
  await ok('/v3/notifications/v1/preferences/mute', {
    method: 'PUT',
    query: { uid: u1 },
    body: {
      conversations: [
        { id: u2, type: 'oneOnOne' },
        { id: ids.group, type: 'group', until: Date.now() + 86_400_000 },
      ],
    },
  });
  return {
    ...ids,
    app,
    marker,
    messages: [m1.id, m2.id, m3.id, m4.id, m5.id].map(String),
    conversations: [m1.conversationId, m2.conversationId],
    apiKeys: [key.apiKey, keyHint],
    authTokens: [token.authToken, tokenHint],
    pushTokens: [pushToken],
    secrets: [app.apiKey, app.authKey, key.apiKey, keyHint, token.authToken, tokenHint, hook.signingSecret, ...providerSecrets, ...keyPieces],
  };
}

// ---------------------------------------------------------------------------------------------
// The database side.

export interface Catalogue {
  /** Tables with an app_id column: every row belongs to one app. */
  perApp: string[];
  /** The columns a row is written with (not generated), per table with app_id. */
  columns: Map<string, string[]>;
  /** Every base table of the schema, for snapshots of the whole database. */
  all: string[];
}

/**
 * Tables without app_id, and how they relate to apps. A new table without app_id fails the test
 * until it is listed here: otherwise its rows would silently escape the snapshots.
 */
export const TABLES_WITHOUT_APP_ID: Record<string, { appColumn: string | null; why: string }> = {
  apps: { appColumn: 'id', why: 'the tenants themselves: an app is the row whose id is the app id' },
  parley_migrations: { appColumn: null, why: 'deployment-wide bookkeeping of applied migrations, no app’s data' },
  management_keys: { appColumn: null, why: 'the deployment’s management credentials (docs/management-api.md): they act on every app, no app’s data' },
};

export async function readCatalogue(t: TestApp): Promise<Catalogue> {
  const { rows } = await sql<{ table_name: string; columns: string[] }>`
    select t.table_name,
           array(select c.column_name::text from information_schema.columns c
                  where c.table_schema = t.table_schema and c.table_name = t.table_name and c.is_generated = 'NEVER'
                  order by c.ordinal_position) as columns
      from information_schema.tables t
     where t.table_schema = current_schema() and t.table_type = 'BASE TABLE'
     order by t.table_name`.execute(t.database.db);
  const perApp = rows.filter((r) => r.columns.includes('app_id'));
  const unexplained = rows.filter((r) => !r.columns.includes('app_id') && !TABLES_WITHOUT_APP_ID[r.table_name]).map((r) => r.table_name);
  assert.deepEqual(unexplained, [], 'tables without app_id: list each in TABLES_WITHOUT_APP_ID, saying how its rows belong to apps');
  return {
    perApp: perApp.map((r) => r.table_name),
    columns: new Map(perApp.map((r) => [r.table_name, r.columns])),
    all: rows.map((r) => r.table_name),
  };
}

/** Every row of `appId` (or, without it, of the whole database), as JSON text, per table and sorted. */
export async function snapshot(t: TestApp, catalogue: Catalogue, appId?: string): Promise<Map<string, string[]>> {
  const parts = catalogue.all.flatMap((table) => {
    const column = catalogue.perApp.includes(table) ? 'app_id' : TABLES_WITHOUT_APP_ID[table]!.appColumn;
    if (appId !== undefined && column === null) return [];
    const where = appId === undefined ? sql`` : sql` where x.${sql.ref(column!)} = ${appId}`;
    return [sql`select ${table}::text as t, row_to_json(x)::text as r from ${sql.table(table)} x${where}`];
  });
  const { rows } = await sql<{ t: string; r: string }>`${sql.join(parts, sql` union all `)}`.execute(t.database.db);
  const tables = new Map<string, string[]>();
  for (const { t: table, r } of rows) tables.set(table, [...(tables.get(table) ?? []), r]);
  for (const list of tables.values()) list.sort();
  return tables;
}

/** The rows that differ between two snapshots, as lines: `- table row` gone, `+ table row` new. */
export function snapshotDiff(before: Map<string, string[]>, after: Map<string, string[]>): string[] {
  const lines: string[] = [];
  for (const table of new Set([...before.keys(), ...after.keys()])) {
    const old = new Set(before.get(table) ?? []);
    const now = new Set(after.get(table) ?? []);
    for (const row of old) if (!now.has(row)) lines.push(`- ${table} ${row}`);
    for (const row of now) if (!old.has(row)) lines.push(`+ ${table} ${row}`);
  }
  return lines;
}

/**
 * Copies every row of app `from` into app `to` (an app just made), so that `to` starts as a copy
 * of `from`, message ids included.
 * Triggers and foreign-key checks are off for the copy (session_replication_role), so counters
 * kept by triggers are copied as they are instead of being counted twice. API keys are not
 * copied: `to` keeps its own, and `from`'s must stay unknown on `to`'s host.
 */
export async function copyAppRows(t: TestApp, catalogue: Catalogue, from: string, to: string): Promise<void> {
  // One statement: an insert per table, as the steps of one WITH.
  const inserts = catalogue.perApp
    .filter((table) => table !== 'api_keys')
    .map((table, n) => {
      const columns = catalogue.columns.get(table)!;
      const values = columns.map((column) => (column === 'app_id' ? sql`${to}::text` : sql.ref(`s.${column}`)));
      return sql`${sql.raw(`copy${n}`)} as (insert into ${sql.table(table)} (${sql.join(columns.map((c) => sql.ref(c)))}) overriding system value
                 select ${sql.join(values)} from ${sql.table(table)} s where s.app_id = ${from} on conflict do nothing returning 1)`;
    });
  await t.database.db.transaction().execute(async (tx) => {
    await sql`set local session_replication_role = replica`.execute(tx);
    await sql`with ${sql.join(inserts)} select 1`.execute(tx);
  });
}
