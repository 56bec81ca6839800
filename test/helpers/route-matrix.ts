/**
 * Every operation the server routes, and requests that name another tenant's entities in every
 * place an operation names one. The operations come from the server's own OpenAPI document and
 * its route table; what each path, query or body parameter names comes from the tables below,
 * by parameter name. A parameter missing from them is a problem the tests report, naming the
 * operation and the parameter: a new route or field is never skipped silently.
 */
import crypto from 'node:crypto';
import Fastify from 'fastify';
import type { ApiKeyScope } from '../../src/domain/context.js';
import { dataImportRoutes } from '../../src/http/routes/data-import/index.js';
import { ImportCallLimiter } from '../../src/http/plugins/import-limits.js';
import { v3Routes } from '../../src/http/routes/v3/index.js';
import { body, TEST_DOMAIN, TEST_REGION, type TestApp } from './app.js';
import { listCondition, type Tenant } from './tenant-data.js';

/** What a parameter can name: each kind has values from a seeded tenant. */
export type Kind =
  | 'user'
  | 'group'
  | 'role'
  | 'message'
  | 'apiKey'
  | 'authToken'
  | 'conversation'
  | 'reaction'
  | 'tag'
  | 'search'
  | 'receiver'
  | 'receiverType'
  | 'mention'
  | 'moderationRule'
  | 'keywordList'
  | 'reason'
  /** A rule's condition that references one of A's keyword lists by its id. */
  | 'keywordReference'
  /** A message one of A's rules held for review (the moderation queue names it). */
  | 'heldMessage'
  /** One of A's FCM providers, one of its APNs providers (named by their providerId). */
  | 'fcmProvider'
  | 'apnsProvider'
  /** A conversation a user mutes: a 1:1 (named by one of A's users) or A's group. */
  | 'mutedConversation'
  /** A user that only A has (no twin): a list of users names it after a user a twin shares. */
  | 'loner'
  /** A device's push token registered for u1 (its value carries the tenant's marker, so a twin's differs). */
  | 'pushToken';

type Rule =
  /** Names an entity of this kind. */
  | { kind: Kind }
  /** The same entity as the path parameter `path` names (a body field that repeats it). */
  | { kind: Kind; samePath: string }
  /**
   * Names an entity of this kind, but in a request of required fields only (a create that must
   * succeed in B, as B's own) sends `minimal` instead: a value that names nothing.
   */
  | { kind: Kind; minimal: unknown }
  /**
   * Names nothing of a tenant's: sent only when required (or `always`), with `example` or a
   * value from its schema.
   */
  | { plain: true; example?: unknown; always?: boolean; fresh?: () => unknown }
  /**
   * An object (or a map of records) whose own fields are classified. `separately`: an
   * alternative to the fields `replaces`, sent in a request of its own instead of them.
   */
  | { container: true; separately?: { replaces: string[] } }
  /** Computed from the other fields of its object. */
  | { derived: (siblings: Record<string, unknown>) => unknown }
  /**
   * The data import's "created first when missing": the entity that the field `details` of the
   * record names (when the field `when[0]` is `when[1]`), with its required fields. Sent only in
   * requests of their own, where B may create its own entities with A's ids.
   */
  | { details: string; when?: [string, string] };

const kind = (k: Kind): Rule => ({ kind: k });
const plain = (example?: unknown): Rule => (example === undefined ? { plain: true } : { plain: true, example });
const container: Rule = { container: true };

export const PATH_RULES: Record<string, Rule> = {
  uid: kind('user'),
  guid: kind('group'),
  role: kind('role'),
  id: kind('message'),
  apiKey: kind('apiKey'),
  authToken: kind('authToken'),
  conversationId: kind('conversation'),
  reaction: kind('reaction'),
  ruleId: kind('moderationRule'),
  keywordId: kind('keywordList'),
  // Notifications: a device's push token.
  pushToken: kind('pushToken'),
  // Catalogue names (the same for every app), not data of an app.
  permission: plain('sendMessage'),
  scope: plain(),
};

/** Query parameters are filters of a list: a filter naming A's entities must find none of them in B. */
export const QUERY_RULES: Record<string, Rule> = {
  searchKey: kind('search'),
  role: kind('role'),
  roles: kind('role'),
  tags: kind('tag'),
  userTags: kind('tag'),
  groupTags: kind('tag'),
  sender: kind('user'),
  mentionedUids: kind('user'),
  conversationId: kind('conversation'),
  id: kind('message'),
  reasonId: kind('reason'),
  // Notifications: the user whose preferences, mutes or time zone these are (required: filled in as a path parameter is).
  uid: kind('user'),
  // Notifications: push tokens are listed through an auth token; the log's filters.
  authToken: kind('authToken'),
  messageId: kind('message'),
  receiver: kind('receiver'),
  member: kind('user'),
  reactionSender: kind('user'),
  reactionReceiver: kind('user'),
  // The Metrics' range (Unix seconds): the caller's own app's counts, whatever it names.
  fromDate: plain(Math.floor(Date.now() / 1000) - 3600),
  toDate: plain(Math.floor(Date.now() / 1000)),
  ...Object.fromEntries(
    ['all', 'reactionId', 'from', 'to', 'messageCategory', 'messageType', 'trigger', 'channel', 'provider', 'notificationTriggered', 'reason', 'success', 'logId'].map((name) => [name, plain()]),
  ),
  ...Object.fromEntries(
    [
      'searchIn',
      'status',
      'count',
      'perPage',
      'page',
      'withTags',
      'onlyDeactivated',
      'withDeactivated',
      'scope',
      'sortBy',
      'sortOrder',
      'affix',
      'updatedAt',
      'type',
      'types',
      'hasJoined',
      'scopes',
      'direction',
      'limit',
      'sentAt',
      'fromTimestamp',
      'toTimestamp',
      'category',
      'categories',
      'hideReplies',
      'hideDeleted',
      'onlyDeleted',
      'hasAttachments',
      'attachmentTypes',
      'hasMentions',
      'hasLinks',
      'mentionsWithTagInfo',
      'mentionsWithBlockedInfo',
      'hasReactions',
      'receiverType',
      'hideMessagesFromBlockedUsers',
      'myMentionsOnly',
      'unread',
      'undelivered',
      'conversationType',
      'withUserAndGroupTags',
      'recordEvents',
      'source',
      'moderate',
      // Accepted as the vendor's client SDK sends it (docs/client-api.md).
      'withThreadSubscribed',
    ].map((name) => [name, plain()]),
  ),
};

const now = Math.floor(Date.now() / 1000);
/** B's push provider keys (an RSA key for FCM's service account, an EC P-256 .p8 key for APNs). */
const B_KEYS = {
  rsa: crypto.generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  p8: crypto.generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
};
let muids = 0;

export const BODY_RULES: Record<string, Rule> = {
  ...Object.fromEntries(
    ['uid', 'owner', 'sender', 'uidsToDeactivate', 'uidsToActivate', 'admins', 'moderators', 'participants', 'usersToBan', 'accepted', 'friends', 'blockedUids', 'uids'].map((name) => [
      name,
      kind('user'),
    ]),
  ),
  guid: kind('group'),
  guids: kind('group'),
  role: kind('role'),
  messageId: kind('message'),
  receiver: kind('receiver'),
  receiverType: kind('receiverType'),
  // "The uid in the path (optional; checked when given)".
  conversationWith: { kind: 'user', samePath: 'uid' },
  // A message's content: its text mentions one of A's users.
  data: kind('mention'),
  memberId: { derived: (record) => `${String(record.guid)}_member_${String(record.uid)}` },
  members: container,
  multipleReceivers: { container: true, separately: { replaces: ['receiver', 'receiverType'] } },
  users: container,
  groups: container,
  messages: container,
  // What B writes about its own entities: names, texts, flags, times and catalogue values.
  name: plain('Made in B'),
  tags: plain(['b-tag']),
  // A new one each time: a muid B has imported before answers ERR_IMPORT_MUID_ALREADY_EXISTS.
  muid: { plain: true, fresh: () => `b-muid-${++muids}` },
  sentAt: plain(now - 60),
  permissions: plain({ sendMessage: 'allow' }),
  featuresToRestrict: plain(['getCall']),
  // Optional, but without it (or allowAll) the request is malformed.
  featuresToAllow: { plain: true, example: ['getCall'], always: true },
  ...Object.fromEntries(
    [
      'avatar',
      'link',
      'statusMessage',
      'metadata',
      'withAuthToken',
      'unset',
      'permanent',
      'force',
      'platform',
      'userAgent',
      'appInfo',
      // PUT /v3/me: the client's device (docs/client-api.md).
      'deviceId',
      'scope',
      'type',
      'password',
      'icon',
      'description',
      'settings',
      'allowAll',
      'category',
      'deleteMessagesPermanently',
      'isBanned',
      'joinedAt',
      'createdAt',
      'lastActiveAt',
      'deactivatedAt',
      'deliveredAt',
      'readAt',
    ].map((name) => [name, plain()]),
  ),
  groupOwnerDetails: { details: 'owner' },
  groupDetails: { details: 'guid' },
  userDetails: { details: 'uid' },
  senderUserDetails: { details: 'sender' },
  receiverUserDetails: { details: 'receiver', when: ['receiverType', 'user'] },
  receiverGroupDetails: { details: 'receiver', when: ['receiverType', 'group'] },
  // The owner of a receiverGroupDetails that names none, and users the text mentions: left out.
  receiverGroupOwnerDetails: plain(),
  mentionedUserDetails: plain(),
  // Moderation. A flag's reason. A rule's conditions reference one of A's keyword lists, but for a
  // create with required fields only (B's own rule with A's rule id, which must succeed).
  reasonId: kind('reason'),
  conditions: { kind: 'keywordReference', minimal: [{ operand: 'text', category: 'word', operator: 'contains', value: ['b-word'] }] },
  action: plain(['blockMessage']),
  searchTerms: plain(['b-term']),
  url: plain('https://hooks.example.com/b'),
  // Notifications: push tokens are registered and unregistered through an auth token; the device's token, provider and time zone are B's own.
  authToken: kind('authToken'),
  ...Object.fromEntries(['providerId', 'fcmToken', 'deviceToken', 'voipToken', 'timezone'].map((name) => [name, plain()])),
  // Notifications: the SMS, e-mail and custom providers' fields name nothing of an app's: B's own, valid values (B's saves succeed).
  twilioAccountSID: plain(`AC${'b'.repeat(32)}`),
  twilioAuthToken: plain('b'.repeat(32)),
  twilioSenderPhoneNumber: plain('+15005550006'),
  sendGridApiKey: plain('SG.made-in-b.0123456789abcdef'),
  sendGridTemplateID: plain(`d-${'b'.repeat(32)}`),
  sendGridUnsubscribeGroupID: plain('12345'),
  senderName: plain('Made in B'),
  senderEmail: plain('noreply@b.example.com'),
  webhookURL: plain('https://hooks.example.com/b'),
  basicAuthUsername: plain('b-user'),
  basicAuthPassword: plain('b-password'),
  ...Object.fromEntries(['isEnabled', 'allowEmailReplies', 'senderEmailForReplies', 'useBasicAuth', 'useStoredPhNo', 'useStoredEmailID'].map((name) => [name, plain()])),
  // Notifications: the FCM and APNs providers' fields name nothing of an app's (their providerId in
  // a body is plain above: add and update share a path, and B may add its own with A's id). B's
  // own valid credentials, with keys made here, so B's adds succeed.
  serviceAccountCreds: plain({ type: 'service_account', project_id: 'made-in-b', client_email: 'push@made-in-b.iam.gserviceaccount.com', private_key: B_KEYS.rsa }),
  keyId: plain('BKEY000001'),
  teamId: plain('BTEAM00001'),
  bundleId: plain('com.example.madeinb'),
  p8Key: plain(B_KEYS.p8),
  ...Object.fromEntries(['serviceAccountFilename', 'notificationInPayload', 'p8KeyFilename', 'includeContentAvailable', 'includeMutableContent', 'productionMode'].map((name) => [name, plain()])),
  // Notifications: who is notified and when. The conversations a user mutes or unmutes name A's users and group; the app's
  // settings, a user's preferences and contact details are B's own values.
  conversations: kind('mutedConversation'),
  ...Object.fromEntries(['preferences', 'sound', 'templates', 'groupPreferences', 'oneOnOnePreferences', 'mutePreferences', 'usePrivacyTemplate', 'email', 'phno'].map((name) => [name, plain()])),
  // Optional in review-blocked-message, but without it (or reviewed) the request is malformed.
  status: { plain: true, example: 'approved', always: true },
  ...Object.fromEntries(['remark', 'enabled', 'filters', 'reviewed', 'timeoutMs', 'onFailure', 'rotateSecret'].map((name) => [name, plain()])),
};

/**
 * Path and body parameters (the body's own fields, not nested ones) whose name means something
 * else on one route than the tables above say, by the route's path. A body `id` is classified
 * here only: it names what its route is about.
 */
export const ROUTE_RULES: Record<string, { path?: Record<string, Rule>; body?: Record<string, Rule> }> = {
  '/v3/moderation/rules': { body: { id: kind('moderationRule') } },
  '/v3/moderation/rules/{ruleId}': { body: { id: { kind: 'moderationRule', samePath: 'ruleId' } } },
  '/v3/moderation/keywords': { body: { id: kind('keywordList') } },
  '/v3/moderation/keywords/{keywordId}': { body: { id: { kind: 'keywordList', samePath: 'keywordId' } } },
  '/v3/moderation/reasons': { body: { id: kind('reason') } },
  // Optional, but without it (or description) the request is malformed.
  '/v3/moderation/reasons/{id}': { path: { id: kind('reason') }, body: { name: { plain: true, example: 'Made in B', always: true } } },
  '/v3/moderation/blocked-messages/{id}': { path: { id: kind('heldMessage') } },
  '/v3/notifications/push/v1/providers/fcm/{providerId}': { path: { providerId: kind('fcmProvider') } },
  '/v3/notifications/push/v1/providers/fcm/default/{providerId}': { path: { providerId: kind('fcmProvider') } },
  '/v3/notifications/push/v1/providers/apns/{providerId}': { path: { providerId: kind('apnsProvider') } },
  '/v3/notifications/push/v1/providers/apns/default/{providerId}': { path: { providerId: kind('apnsProvider') } },
  // Optional, but the platform sent (fcm_android, its enum's first) takes its token in fcmToken.
  '/v3/notifications/push/v1/tokens': { body: { fcmToken: { plain: true, example: 'b-device-token', always: true } } },
  // A time zone B may set; contact details need a field (either).
  '/v3/notifications/v1/preferences/timezone': { body: { timezone: plain('Asia/Tokyo') } },
  '/v3/notifications/v1/contact-details': { body: { email: { plain: true, example: 'b@example.com', always: true } } },
};

/**
 * Kinds that a body field names by reference inside a value B writes (a rule's condition naming
 * a keyword list): B lacking what it names refuses the field as malformed, a 400 naming it.
 */
const REFERENCES: Kind[] = ['keywordReference'];

export interface Operation {
  method: string;
  /** With `{param}` placeholders. */
  path: string;
  operationId: string;
  parameters: Array<{ name: string; in: string; schema?: any }>;
  body?: any;
  /** The route's least key scope (its config). */
  access: ApiKeyScope;
  /** The route also takes the deployment's management credential instead of an apiKey (its config). */
  managementCredential?: boolean;
}

/**
 * Routes outside the tenant API: no app, no key; and the management API, which takes a credential
 * of the deployment instead (its own tests: test/api/management-*.test.ts).
 */
const PUBLIC_ROUTES = [/^\/healthz$/, /^\/readyz$/, /^\/openapi\.json$/, /^\/docs(\/.*)?$/, /^\/(mgmt\/)?apps(\/.*)?$/];

/**
 * Streams: a request that passes never ends, so an injected one cannot be read. Their keys,
 * isolation and bad input have tests of their own (test/api/event-stream.test.ts).
 */
const STREAM_ROUTES = [/^\/v3(\.0)?\/events$/, /^\/v3\/ws$/, /^\/v3\/me\/events$/];

/** Method and path of every route, read from Fastify's route tree (HEAD routes are GET's). */
function routeTable(t: TestApp): Array<{ method: string; path: string }> {
  const routes: Array<{ method: string; path: string }> = [];
  const stack: string[] = [];
  for (const line of t.app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!match) continue;
    stack.length = match[1]!.length / 4;
    stack.push(match[2]!);
    const path = stack.join('').replace(/:(\w+)/g, '{$1}');
    for (const method of (match[3] ?? '').split(', ').filter((m) => m && m !== 'HEAD')) routes.push({ method, path });
  }
  return routes;
}

/**
 * The access config of every route (its key scope, and whether it takes the management
 * credential), by operationId: the route plugins registered again on a scratch instance, since
 * Fastify keeps a route's config out of what it exposes.
 */
async function routeAccess(t: TestApp): Promise<Map<string, { access: ApiKeyScope; managementCredential: boolean }>> {
  const scratch = Fastify();
  const access = new Map<string, { access: ApiKeyScope; managementCredential: boolean }>();
  scratch.addHook('onRoute', (route) => {
    const id = (route.schema as { operationId?: string } | undefined)?.operationId;
    const config = route.config as { access?: ApiKeyScope; managementCredential?: boolean } | undefined;
    if (id) access.set(id, { access: config?.access ?? 'fullAccess', managementCredential: config?.managementCredential === true });
  });
  scratch.setValidatorCompiler(() => () => true);
  scratch.setSerializerCompiler(() => (data) => JSON.stringify(data));
  const tenancy = { region: TEST_REGION, domain: TEST_DOMAIN };
  await scratch.register(v3Routes, { prefix: '/v3', services: t.services, tenancy });
  const importCalls = new ImportCallLimiter({ perServer: 1, perApp: 1 });
  await scratch.register(dataImportRoutes, { prefix: '/import', services: t.services, tenancy, bodyLimit: 1, hidden: false, importCalls });
  await scratch.ready();
  await scratch.close();
  return access;
}

/**
 * Every operation: those of the OpenAPI document, and every other routed path that serves one
 * of them under a second prefix (`/v3.0/data_import/...`). `problems` lists routes that are
 * neither, and operations whose access config could not be read.
 */
export async function listOperations(t: TestApp): Promise<{ operations: Operation[]; problems: string[] }> {
  const doc = body(await t.app.inject({ method: 'GET', url: '/openapi.json' }));
  const access = await routeAccess(t);
  const problems: string[] = [];
  const documented = new Map<string, Operation>();
  for (const [path, methods] of Object.entries<Record<string, any>>(doc.paths)) {
    if (PUBLIC_ROUTES.some((pattern) => pattern.test(path)) || STREAM_ROUTES.some((pattern) => pattern.test(path))) continue;
    for (const [method, op] of Object.entries<any>(methods)) {
      const config = access.get(op.operationId);
      if (!config) problems.push(`${method.toUpperCase()} ${path} (${op.operationId}): its route config was not found`);
      documented.set(`${method.toUpperCase()} ${path}`, {
        method: method.toUpperCase(),
        path,
        operationId: op.operationId,
        parameters: op.parameters ?? [],
        body: op.requestBody?.content?.['application/json']?.schema,
        access: config?.access ?? 'fullAccess',
        managementCredential: config?.managementCredential ?? false,
      });
    }
  }
  const operations: Operation[] = [];
  for (const route of routeTable(t)) {
    if (PUBLIC_ROUTES.some((pattern) => pattern.test(route.path)) || STREAM_ROUTES.some((pattern) => pattern.test(route.path))) continue;
    // The general API under /v3.0 is the /v3 plugin registered a second time (app.ts): its routes
    // are the same handlers, hooks and schemas, so the matrix calls them once, under /v3
    // (test/api/client-sdk.test.ts holds that each has its /v3.0 twin). The data import's /v3.0
    // routes are registered with options of their own, and are called.
    if (route.path.startsWith('/v3.0/') && !route.path.startsWith('/v3.0/data_import/') && documented.has(`${route.method} ${route.path.replace(/^\/v3\.0\//, '/v3/')}`)) continue;
    const same = documented.get(`${route.method} ${route.path}`);
    const alias = documented.get(`${route.method} ${route.path.replace(/^\/v3\.0\//, '/v3/')}`);
    if (same ?? alias) operations.push({ ...(same ?? alias)!, path: route.path });
    else problems.push(`${route.method} ${route.path}: routed but in no operation of the OpenAPI document`);
  }
  for (const [key, op] of documented) {
    if (!operations.some((o) => `${o.method} ${o.path}` === key)) problems.push(`${key} (${op.operationId}): documented but not routed`);
  }
  return { operations, problems };
}

/** Each kind's values from a tenant. Kinds with several values give several requests. */
export function kindValues(a: Tenant): Record<Kind, unknown[]> {
  return {
    // m1, m2 and the reply m3 (m4, deleted, is named only by its id in answers).
    user: a.users,
    group: [a.group],
    role: [a.role],
    message: a.messages.slice(0, 3),
    apiKey: a.apiKeys,
    authToken: a.authTokens,
    conversation: a.conversations,
    reaction: [a.reaction],
    tag: [a.tag],
    search: [a.prefix],
    // Not the first user handed out, who may be the sender.
    receiver: [a.users[2], a.group],
    receiverType: ['user', 'group'],
    mention: [{ text: `hello from B <@uid:${a.loner ?? a.users[1]}>` }],
    loner: a.loner ? [a.loner] : [],
    moderationRule: [a.rule],
    keywordList: [a.keywordList],
    reason: [a.reason],
    keywordReference: [listCondition(a.keywordList)],
    heldMessage: [a.messages[4]],
    fcmProvider: [a.fcmProvider],
    apnsProvider: [a.apnsProvider],
    pushToken: a.pushTokens,
    mutedConversation: [
      { id: a.users[2], type: 'oneOnOne' },
      { id: a.group, type: 'group' },
    ],
  };
}

/** Kinds whose values vary from one request to the next; users are handed out in turn instead. */
const VARYING: Kind[] = ['message', 'apiKey', 'authToken', 'conversation', 'receiver', 'receiverType', 'mutedConversation'];

export interface MatrixRequest {
  /** What the request is, for failure messages. */
  label: string;
  url: string;
  query: Record<string, string[]>;
  body: unknown;
  /** The kinds it names in its path and body. */
  names: Set<Kind>;
  /** The `separately` field it carries, which the operation may refuse outright (400 naming it). */
  separate?: string;
  /** Body fields naming A's entities by reference (REFERENCES), which B may refuse as malformed (400 naming them). */
  references?: string[];
}

interface BuildOptions {
  variant: number;
  /** The index of the first user handed out (the onBehalfOf user should be another). */
  userOffset: number;
  /** The body's required fields only. */
  minimal: boolean;
  /** The `separately` field to send, instead of the fields it replaces. */
  separate?: string;
  /** Sends the `details` fields. */
  withDetails?: boolean;
}

class Builder {
  readonly names = new Set<Kind>();
  readonly pathValues: Record<string, unknown> = {};
  /** The body fields that name an entity by reference. */
  readonly references: string[] = [];
  /** Whether the body has `details` fields. */
  sawDetails = false;
  private slot = 0;
  constructor(
    private readonly op: Operation,
    private readonly values: Record<Kind, unknown[]>,
    private readonly options: BuildOptions,
    private readonly problems: string[],
  ) {}

  pick(k: Kind): unknown {
    this.names.add(k);
    const list = this.values[k];
    return k === 'user' ? list[(this.options.userOffset + this.slot++) % list.length] : list[this.options.variant % list.length];
  }

  rule(table: Record<string, Rule>, where: 'path' | 'body' | 'query', name: string, path = name): Rule | undefined {
    const own = where !== 'query' && path === name ? ROUTE_RULES[this.op.path]?.[where]?.[name] : undefined;
    const rule = own ?? table[name];
    if (!rule) this.problems.push(`${this.op.method} ${this.op.path} (${this.op.operationId}): ${where} parameter "${path}" is not classified in test/helpers/route-matrix.ts`);
    return rule;
  }

  path(): string {
    return this.op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
      const rule = this.rule(PATH_RULES, 'path', name);
      const schema = this.op.parameters.find((p) => p.in === 'path' && p.name === name)?.schema;
      const value = !rule ? 'unclassified' : 'kind' in rule ? this.pick(rule.kind) : 'plain' in rule ? (rule.example ?? example(schema)) : 'x';
      this.pathValues[name] = value;
      return encodeURIComponent(String(value));
    });
  }

  object(schema: any, where: string): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    const required = new Set<string>(schema?.required ?? []);
    const derived: Array<[string, (s: Record<string, unknown>) => unknown]> = [];
    const details: Array<[string, any, { details: string; when?: [string, string] }]> = [];
    const replaced = this.options.separate ? (separateRule(this.options.separate)?.replaces ?? []) : [];
    for (const [name, property] of Object.entries<any>(schema?.properties ?? {})) {
      const rule = this.rule(BODY_RULES, 'body', name, `${where}${name}`);
      if (!rule || (where === '' && replaced.includes(name))) continue;
      if ('container' in rule && rule.separately && name !== this.options.separate) continue;
      if ('derived' in rule) derived.push([name, rule.derived]);
      else if ('details' in rule) details.push([name, property, rule]);
      else {
        const value = this.field(rule, property, `${where}${name}.`, required.has(name));
        if (value !== undefined) out[name] = value;
      }
    }
    for (const [name, derive] of derived) out[name] = derive(out);
    for (const [name, property, rule] of details) {
      this.sawDetails = true;
      const id = out[rule.details];
      if (!this.options.withDetails || id === undefined || (rule.when && out[rule.when[0]] !== rule.when[1])) continue;
      const entity = new Builder(this.op, this.values, { ...this.options, minimal: true }, this.problems).object(property, `${where}${name}.`);
      out[name] = { ...entity, [property.required[0]]: id };
    }
    return out;
  }

  field(rule: Rule, schema: any, where: string, required: boolean): unknown {
    if ('kind' in rule) {
      if (this.options.minimal && !required) return undefined;
      if ('samePath' in rule) {
        this.names.add(rule.kind);
        return this.pathValues[rule.samePath];
      }
      if ('minimal' in rule && this.options.minimal) return rule.minimal;
      if (REFERENCES.includes(rule.kind)) this.references.push(where.slice(0, -1));
      const value = this.pick(rule.kind);
      if (schema?.type !== 'array') return value;
      return rule.kind === 'user' && this.values.loner.length > 0 ? [value, this.pick('loner')] : [value];
    }
    if ('container' in rule) {
      if (this.options.minimal && !required) return undefined;
      const record = schema?.additionalProperties;
      if (record && typeof record === 'object' && record.properties) {
        // A map of records keyed by each record's first required field (uid, guid, memberId, muid).
        const built = this.object(record, `${where}*.`);
        return { [String(built[record.required[0]])]: built };
      }
      const built = this.object(schema, where);
      return Object.keys(built).length > 0 || required ? built : undefined;
    }
    if ('plain' in rule && (required || (rule.always && !this.options.minimal))) return rule.fresh?.() ?? rule.example ?? example(schema);
    return undefined;
  }
}

function separateRule(name: string): { replaces: string[] } | undefined {
  const rule = BODY_RULES[name];
  return rule && 'container' in rule ? rule.separately : undefined;
}

/** A value that satisfies a schema, for a required field that names nothing. */
function example(schema: any): unknown {
  if (schema?.enum) return schema.enum[0];
  if (schema?.anyOf) return example(schema.anyOf[0]);
  switch (schema?.type) {
    case 'string':
      return schema.format === 'uri' ? 'https://example.com/b' : 'b'.repeat(Math.max(1, schema.minLength ?? 1));
    case 'integer':
    case 'number':
      return Math.max(1, schema.minimum ?? 1);
    case 'boolean':
      return false;
    case 'array':
      return (schema.minItems ?? 0) > 0 ? [example(schema.items)] : [];
    default:
      return {};
  }
}

/**
 * The requests of one operation with `a`'s values: one per variant of the varying kinds it
 * names (each with every path parameter and body field that names an entity filled in), one per
 * `separately` field, and one per query parameter that names an entity (alone, so that no other
 * filter hides what it would find). With `minimal`, one request with the body's required fields.
 */
export function requestsFor(op: Operation, a: Tenant, problems: string[], options: { minimal?: boolean; userOffset?: number } = {}): MatrixRequest[] {
  const values = kindValues(a);
  const minimal = options.minimal ?? false;
  // Users in turn from u2 by default: the onBehalfOf user is u1, who then acts on others.
  const userOffset = options.userOffset ?? 1;
  const build = (buildOptions: BuildOptions): MatrixRequest => {
    const builder = new Builder(op, values, buildOptions, problems);
    const url = builder.path();
    // A required query parameter names what the operation is about (the user of a user's
    // preferences): filled in as a path parameter is.
    const query: Record<string, string[]> = {};
    for (const parameter of op.parameters) {
      if (parameter.in !== 'query' || (parameter as { required?: boolean }).required !== true) continue;
      const rule = builder.rule(QUERY_RULES, 'query', parameter.name);
      if (rule && 'kind' in rule) query[parameter.name] = [String(builder.pick(rule.kind))];
    }
    const body = op.body ? builder.object(op.body, '') : undefined;
    const note = minimal ? ' (required fields only)' : buildOptions.separate ? ` (with ${buildOptions.separate})` : buildOptions.withDetails ? ' (with *Details)' : '';
    sawDetails ||= builder.sawDetails;
    return {
      label: `${op.method} ${url}${Object.keys(query).length > 0 ? `?${new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, v[0]!])).toString()}` : ''}${note}`,
      url,
      query,
      body,
      names: builder.names,
      ...(buildOptions.separate ? { separate: buildOptions.separate } : {}),
      ...(builder.references.length > 0 ? { references: builder.references } : {}),
    };
  };
  let sawDetails = false;
  const first = build({ variant: 0, userOffset, minimal });
  if (minimal) return [first];
  const variants = Math.max(1, ...VARYING.filter((k) => first.names.has(k)).map((k) => values[k].length));
  const requests = [first];
  for (let variant = 1; variant < variants; variant++) requests.push(build({ variant, userOffset, minimal }));
  if (sawDetails) for (let variant = 0; variant < variants; variant++) requests.push(build({ variant, userOffset, minimal, withDetails: true }));
  for (const name of Object.keys(op.body?.properties ?? {})) {
    if (separateRule(name)) requests.push(build({ variant: 0, userOffset, minimal, separate: name }));
  }
  for (const parameter of op.parameters) {
    if (parameter.in === 'header') {
      if (parameter.name !== 'onBehalfOf') problems.push(`${op.method} ${op.path} (${op.operationId}): header "${parameter.name}" is not classified`);
      continue;
    }
    // A required one is in every request already (build).
    if (parameter.in !== 'query' || (parameter as { required?: boolean }).required === true) continue;
    const rule = new Builder(op, values, { variant: 0, userOffset, minimal }, problems).rule(QUERY_RULES, 'query', parameter.name);
    if (!rule || !('kind' in rule)) continue;
    // A filter's first value (both conversations: 1:1 and group).
    for (const value of rule.kind === 'conversation' ? values[rule.kind] : values[rule.kind].slice(0, 1)) {
      requests.push({ ...first, label: `${first.label}?${parameter.name}=${String(value)}`, query: { [parameter.name]: [String(value)] } });
    }
  }
  return requests;
}
