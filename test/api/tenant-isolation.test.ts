/**
 * Tenant isolation (OWASP API1), for every operation the server routes: app B, calling with app
 * A's ids in every place an operation names an entity, gets a refusal and never A's data, and A's
 * rows never change. Also every route's key checks.
 *
 * The operations come from the server's OpenAPI document and route table (route-matrix.ts), so a
 * new route is covered without editing this file; a parameter the matrix cannot classify fails
 * the first test with the operation's and the parameter's names.
 *
 * B is an app made for the test, of three kinds:
 *  - a stranger: an empty app. Every request naming A's entities (in its path or body, or as
 *    its onBehalfOf user) must be refused (404, or a 403 that tells nothing), but for the operations of STRANGER_2XX,
 *    whose answers report per item; lists filtered by A's ids must show none of them. Strangers
 *    with a user of their own as the onBehalfOf user get past the actor's check to the rest.
 *    A stranger serves while it refuses; one that answered otherwise is replaced, so that what
 *    one request legitimately created in B (a user with A's uid) cannot change the next answer.
 *    Creates with only their required fields must succeed, as B's own;
 *  - a twin: a copy of a tenant seeded with A's client-chosen ids (uids, guid, role, tags,
 *    reaction) but with its own messages, keys, tokens and marker. Requests naming A's messages,
 *    keys or tokens must be refused there too;
 *  - a twin acted on with its own messages, keys and tokens: any answer may come (below 500).
 * Operations that also take the deployment's management credential (the moderation rules, keyword
 * lists, held messages and hook) are sent to strangers with it too, the app named by the appId
 * header: it acts on that app only.
 * No answer may hold A's data (its marker, keys, tokens, message ids), and A's rows, read from
 * every table, must be the same after each operation as before.
 *
 * PARLEY_ISOLATION_TRACE=1 prints every call of the matrix with the start of its answer.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, newManagementCredential, type CallOptions, type ManagementCredential } from '../helpers/app.js';
import { answerItems, commonFailures, excerpt, isRefusal, ownedBy, parse, statusOf } from '../helpers/isolation-checks.js';
import { listOperations, requestsFor, type Kind, type MatrixRequest, type Operation } from '../helpers/route-matrix.js';
import { copyAppRows, newApp, newMarker, readCatalogue, seedTenant, sharedIds, snapshot, snapshotDiff } from '../helpers/tenant-data.js';

/**
 * Operations that may answer a stranger 2xx although the request names A's entities, and why.
 * Their answers may name A's ids only where B now holds an entity of its own with that id, and
 * their per-item failures must be not-found errors.
 */
const STRANGER_2XX: Record<string, string> = {
  'create-user': 'B may have a user with the uid of one of A’s',
  'create-group': 'B may have a group with the guid of one of A’s (its inline members answer per uid)',
  'create-role': 'B may have a role with the id of one of A’s',
  'import-users': 'per record; B may import a user with the uid of one of A’s',
  'import-groups': 'per record; B may import a group with the guid of one of A’s',
  'import-members': 'per record',
  'import-messages': 'per record',
  'deactivate-users': 'answers the uids it deactivated; unknown uids are left out',
  'reactivate-users': 'answers the uids it reactivated; unknown uids are left out',
  'send-message': 'with multipleReceivers, answers per receiver',
  'create-rule': 'B may have a rule with the id of one of A’s (its conditions may reference B’s keyword lists only)',
  'create-rule-keyword': 'B may have a keyword list with the id of one of A’s',
  'create-reason': 'B may have a reason with the id of one of A’s',
};

/** Operations that must succeed in a stranger with only their required fields, naming A's ids. */
const CREATES = new Set(['create-user', 'create-group', 'create-role', 'import-users', 'import-groups', 'create-rule', 'create-rule-keyword', 'create-reason']);

/** Kinds of entity that a twin does not share with A: naming them must be refused in the twin too. */
const A_ONLY: Kind[] = ['message', 'heldMessage', 'apiKey', 'authToken'];

const t = await createTestApp();
after(() => t.close());
const catalogue = await readCatalogue(t);
// A's message ids far from other small numbers (reaction ids, counts), so that an `id` field
// holding one can only be A's message.
await sql`select setval(pg_get_serial_sequence('messages', 'id'), 5000000)`.execute(t.database.db);
const ids = sharedIds();
const a = await seedTenant(t, t.appA, ids, newMarker());
const twinSource = await seedTenant(t, await newApp(t, 'Twin source'), ids, newMarker());
// A user of A's that no twin has: the matrix's messages mention it.
a.loner = twinSource.loner = `${ids.prefix}-loner`;
assert.equal((await t.call(t.appA, '/v3/users', { method: 'POST', body: { uid: a.loner, name: `${ids.prefix} loner ${a.marker}` } })).statusCode, 200);
const { operations, problems: routeProblems } = await listOperations(t);
const management = await newManagementCredential(t);

function call(app: CreatedApp, request: MatrixRequest, op: Operation, options: CallOptions = {}) {
  return t.call(app, request.url, {
    method: op.method as 'GET',
    query: request.query,
    ...(request.body !== undefined ? { body: request.body } : {}),
    ...options,
  });
}

describe('the matrix covers every route', () => {
  it('serves every routed operation from the OpenAPI document, and classifies every parameter', () => {
    assert.deepEqual(routeProblems, []);
    const problems: string[] = [];
    for (const op of operations) requestsFor(op, a, problems);
    assert.deepEqual([...new Set(problems)], []);
    // A floor, so that an empty document or route table cannot pass as "nothing to check".
    assert.ok(operations.length >= 87, `only ${operations.length} operations found`);
    assert.ok(
      operations.some((op) => op.path.startsWith('/v3.0/data_import/')),
      'the second data import prefix is covered',
    );
    assert.ok(
      operations.some((op) => op.access === 'authOnly'),
      'route configs were read',
    );
    assert.ok(
      operations.some((op) => op.managementCredential),
      'the routes taking the management credential are known',
    );
  });

  it('fails on an operation naming something it cannot classify', () => {
    const problems: string[] = [];
    const widget: Operation = {
      method: 'PUT',
      path: '/v3/widgets/{widgetId}',
      operationId: 'update-widget',
      access: 'fullAccess',
      parameters: [
        { name: 'widgetId', in: 'path' },
        { name: 'owner', in: 'query' },
        { name: 'apiVersion', in: 'header' },
      ],
      body: { type: 'object', properties: { gadgets: { type: 'object', properties: { gadgetIds: { type: 'array' } } } } },
    };
    requestsFor(widget, a, problems);
    const named = (what: string) => problems.some((p) => p.includes('update-widget') && p.includes(what));
    assert.ok(named('"widgetId"') && named('"owner"') && named('"apiVersion"') && named('"gadgets"'), problems.join('\n'));
  });
});

describe('every route checks the key before anything else', () => {
  before(async () => {
    // B's key, used on B's host first: a key cached as valid must stay B's.
    assert.equal((await t.call(t.appB, '/v3/users')).statusCode, 200);
  });
  for (const op of operations) {
    it(`${op.method} ${op.path}`, async () => {
      const [request] = requestsFor(op, a, []);
      const before = await snapshot(t, catalogue);
      const refusals: Array<[CallOptions['key'] | 'B key on A', number, string]> = [
        ['none', 401, 'AUTH_ERR_EMPTY_APIKEY'],
        [{ literal: crypto.randomBytes(20).toString('hex') }, 401, 'AUTH_ERR_APIKEY_NOT_FOUND'],
        ['B key on A', 401, 'AUTH_ERR_APIKEY_NOT_FOUND'],
      ];
      if (op.access !== 'authOnly') refusals.push(['auth', 403, 'AUTH_ERR_NO_ACCESS']);
      for (const [key, status, code] of refusals) {
        const response = await call(t.appA, request!, op, { key: key === 'B key on A' ? { literal: t.appB.apiKey } : key });
        assert.equal(response.statusCode, status, `${JSON.stringify(key)}: ${excerpt(response)}`);
        assert.equal(parse(response)?.error?.code, code, `${JSON.stringify(key)}: ${excerpt(response)}`);
      }
      assert.deepEqual(snapshotDiff(before, await snapshot(t, catalogue)), [], 'a refused request changed the database');
      if (op.access === 'authOnly') {
        // Accepted: answered as the fullAccess key is (both may write, so after the snapshot).
        const withAuthKey = await call(t.appA, request!, op, { key: 'auth' });
        const withFullKey = await call(t.appA, request!, op);
        const code = (response: typeof withAuthKey) => parse(response)?.error?.code as string | undefined;
        assert.ok(withAuthKey.statusCode < 500 && !code(withAuthKey)?.startsWith('AUTH_ERR'), `authOnly key refused: ${excerpt(withAuthKey)}`);
        assert.deepEqual([withAuthKey.statusCode, code(withAuthKey)], [withFullKey.statusCode, code(withFullKey)], excerpt(withAuthKey));
        for (const response of [withAuthKey, withFullKey]) {
          const token = parse(response)?.data?.authToken;
          if (typeof token === 'string') a.secrets.push(token);
        }
      }
    });
  }
});

const trace = (setup: string, request: MatrixRequest, onBehalfOf: string | undefined, response: { statusCode: number; body: string }) => {
  if (process.env.PARLEY_ISOLATION_TRACE)
    console.log(`TRACE ${setup} ${request.label} ${onBehalfOf ? 'obo' : '-'} ${JSON.stringify(request.query)} ${response.statusCode} ${response.body.slice(0, 160)}`);
};

/**
 * Stranger apps. One serves request after request while it answers 4xx (a refused request
 * writes nothing); after any other answer, which may have written to it, the next request gets a
 * new one. With `ownActor`, each holds a user of its own with the uid of A's onBehalfOf user.
 */
class Strangers {
  private app: CreatedApp | undefined;
  constructor(readonly ownActor: boolean) {}
  async get(): Promise<CreatedApp> {
    if (this.app) return this.app;
    const app = await newApp(t, this.ownActor ? 'Stranger with a user' : 'Stranger');
    if (this.ownActor) {
      const actor = await t.call(app, '/v3/users', { method: 'POST', body: { uid: a.users[0], name: 'B’s own user' } });
      assert.equal(actor.statusCode, 200, actor.body);
    }
    return (this.app = app);
  }
  answered(status: number): void {
    if (status < 400 || status >= 500) this.app = undefined;
  }
}
const strangers = new Strangers(false);
const strangersWithActor = new Strangers(true);

const takesOnBehalfOf = (op: Operation) => op.parameters.some((p) => p.in === 'header' && p.name === 'onBehalfOf');

/**
 * The failures of a stranger's answer to a request naming A's entities. With `ownActor`, the
 * stranger has a user of its own with the uid of A's onBehalfOf user, so that the request gets
 * past the actor's check to the other entities it names. With `credential`, the request carries
 * the deployment's management credential instead of the stranger's key, naming it by the appId header.
 */
async function strangerFailures(op: Operation, request: MatrixRequest, pool: Strangers, onBehalfOf: string | undefined, credential?: ManagementCredential) {
  const { ownActor } = pool;
  const b = await pool.get();
  const byManagement: CallOptions = credential ? { key: 'none', headers: { host: 'localhost', appid: b.appId, key: credential.key, secret: credential.secret } } : {};
  const response = await call(b, request, op, { ...byManagement, ...(onBehalfOf ? { onBehalfOf } : {}) });
  trace(ownActor ? 'actor' : credential ? 'management' : 'stranger', request, onBehalfOf, response);
  const failures = commonFailures(a, response);
  // The onBehalfOf header counts where the operation takes one (elsewhere it is ignored).
  const actor = onBehalfOf !== undefined && !ownActor && takesOnBehalfOf(op);
  const named = request.names.size > 0 || actor;
  const what = [...request.names, ...(actor ? ['onBehalfOf user'] : [])].join(', ');
  if (response.statusCode < 300) {
    if (named && !STRANGER_2XX[op.operationId]) failures.push(`answered ${excerpt(response)} to a request naming A's ${what}`);
    const items = answerItems(a, parse(response));
    const owned = await ownedBy(t, b.appId, items.ids);
    const foreign = [...items.ids].filter((id) => !owned.has(id));
    if (foreign.length > 0) failures.push(`answer names A's ${foreign.join(', ')}, which B does not hold: ${excerpt(response)}`);
    const wrong = items.failureCodes.filter((code) => statusOf(code) !== 404);
    if (wrong.length > 0) failures.push(`per-item failures that are not "not found": ${wrong.join(', ')}: ${excerpt(response)}`);
  } else if (named && !isRefusal(response, onBehalfOf, request)) {
    failures.push(`answered ${excerpt(response)} to a request naming A's ${what}, not a refusal (404, or a 403 that tells nothing)`);
  }
  pool.answered(response.statusCode);
  const setup = ownActor ? 'stranger with its own onBehalfOf user' : credential ? 'stranger by the management credential' : 'stranger';
  return failures.map((f) => `${setup}, ${request.label}${onBehalfOf && !ownActor ? ' onBehalfOf A’s user' : ''}: ${f}`);
}

/** A create naming A's id with only its required fields must succeed in a stranger, as B's own. */
async function createFailures(op: Operation, request: MatrixRequest, b: CreatedApp) {
  const response = await call(b, request, op);
  const failures = commonFailures(a, response);
  const items = answerItems(a, parse(response));
  if (response.statusCode >= 300 || items.failureCodes.length > 0) failures.push(`did not create: ${excerpt(response)}`);
  const owned = await ownedBy(t, b.appId, items.ids);
  if (owned.size === 0 || owned.size !== items.ids.size) failures.push(`B does not hold what it created: ${excerpt(response)}`);
  return failures.map((f) => `stranger, ${request.label}: ${f}`);
}

/**
 * The failures of a twin's answer. With A's values (`own` false), a request naming A's
 * messages, keys or tokens must be refused; with the twin's own values, any answer may come.
 */
async function twinFailures(op: Operation, request: MatrixRequest, b: CreatedApp, onBehalfOf: string | undefined, own: boolean) {
  const response = await call(b, request, op, onBehalfOf ? { onBehalfOf } : {});
  trace(own ? 'twin-own' : 'twin', request, onBehalfOf, response);
  const failures = commonFailures(a, response);
  const foreign = own ? [] : A_ONLY.filter((k) => request.names.has(k));
  if (foreign.length > 0 && !STRANGER_2XX[op.operationId] && !isRefusal(response, onBehalfOf, request)) {
    failures.push(`answered ${excerpt(response)} to a request naming A's ${foreign.join(', ')}`);
  }
  if (response.statusCode < 300 && a.loner) {
    // The user only A has may be named in an answer only by a per-item failure.
    if (answerItems(a, parse(response)).ids.has(a.loner)) failures.push(`answer names A's ${a.loner}, which B does not hold: ${excerpt(response)}`);
  }
  const setup = own ? 'twin with its own messages, keys and tokens' : 'twin';
  return failures.map((f) => `${setup}, ${request.label}${onBehalfOf ? ` onBehalfOf ${onBehalfOf}` : ''}: ${f}`);
}

async function newTwin(): Promise<CreatedApp> {
  const twin = await newApp(t, 'Twin');
  await copyAppRows(t, catalogue, twinSource.app.appId, twin.appId);
  return twin;
}

describe('another app reaches none of A’s data', () => {
  for (const op of operations) {
    it(`${op.method} ${op.path} (${op.operationId})`, async () => {
      const problems: string[] = [];
      const requests = requestsFor(op, a, problems);
      assert.deepEqual(problems, [], 'parameters the matrix cannot fill with A’s entities');
      const before = await snapshot(t, catalogue, a.app.appId);
      const failures: string[] = [];
      for (const request of requests) {
        for (const onBehalfOf of [undefined, a.users[0]]) failures.push(...(await strangerFailures(op, request, strangers, onBehalfOf)));
        if (takesOnBehalfOf(op)) failures.push(...(await strangerFailures(op, request, strangersWithActor, a.users[0])));
        if (op.managementCredential) failures.push(...(await strangerFailures(op, request, strangers, undefined, management)));
      }
      if (CREATES.has(op.operationId)) {
        for (const request of requestsFor(op, a, [], { minimal: true })) failures.push(...(await createFailures(op, request, await newApp(t, 'Stranger'))));
      }
      // In twins, an onBehalfOf user only where the operation takes one (it is the same user
      // as in A: strangers show that the header is ignored elsewhere).
      const actors = (uid: string | undefined) => (takesOnBehalfOf(op) ? [undefined, uid] : [undefined]);
      // A's messages, keys and tokens, named where everything else named is the twin's own.
      const foreign = requests.filter((request) => A_ONLY.some((k) => request.names.has(k)));
      const twin = foreign.length > 0 ? await newTwin() : undefined;
      for (const request of foreign) {
        for (const onBehalfOf of actors(a.users[0])) failures.push(...(await twinFailures(op, request, twin!, onBehalfOf, false)));
      }
      // The twin's own messages, keys and tokens, acted on by u2, on u1 (who has the blocks,
      // the friends, the token and the group) first.
      const ownTwin = await newTwin();
      for (const request of requestsFor(op, twinSource, [], { userOffset: 0 })) {
        for (const onBehalfOf of actors(a.users[1])) failures.push(...(await twinFailures(op, request, ownTwin, onBehalfOf, true)));
      }
      const changed = snapshotDiff(before, await snapshot(t, catalogue, a.app.appId));
      if (changed.length > 0) failures.push(`A's rows changed:\n  ${changed.join('\n  ')}`);
      assert.deepEqual(failures, []);
    });
  }
});

it('the seeded tenant is what the matrix names', async () => {
  // The matrix is only as good as A's data: every kind it names exists in A.
  const user = await t.call(t.appA, `/v3/users/${a.users[0]}`);
  assert.ok(user.body.includes(a.marker), 'A’s user carries the marker');
  const message = await t.call(t.appA, `/v3/messages/${a.messages[0]}`);
  assert.equal(body(message).data.conversationId, a.conversations[0]);
  const reactions = await t.call(t.appA, `/v3/messages/${a.messages[0]}/reactions/${a.reaction}`);
  assert.equal(reactions.statusCode, 200, reactions.body);
  assert.equal((await t.call(t.appA, `/v3/apikeys/${encodeURIComponent(a.apiKeys[1]!)}`)).statusCode, 200);
  assert.equal((await t.call(t.appA, `/v3/users/${a.users[0]}/auth_tokens/${encodeURIComponent(a.authTokens[1]!)}`)).statusCode, 200);
  // Moderation: the rule references the list, the flags and the held message are queued, the hook is A's.
  const rule = body(await t.call(t.appA, `/v3/moderation/rules/${a.rule}`)).data;
  assert.ok(rule.description === a.marker && rule.conditions.some((c: any) => c.isKeywordsReferencePresent && c.value.includes(a.keywordList)), JSON.stringify(rule));
  assert.ok((await t.call(t.appA, `/v3/moderation/keywords/${a.keywordList}`)).body.includes(a.marker));
  assert.ok((await t.call(t.appA, `/v3/moderation/reasons/${a.reason}`)).body.includes(a.marker));
  const flagged = body(await t.call(t.appA, '/v3/moderation/flagged-messages', { query: { reasonId: a.reason } })).data;
  assert.deepEqual(
    flagged.map((item: any) => item.messageId),
    [a.messages[0]],
  );
  const reviewed = body(await t.call(t.appA, '/v3/moderation/reviewed-messages')).data;
  assert.deepEqual(
    reviewed.map((item: any) => [item.source, item.messageId]).sort(),
    [
      ['blocked', a.messages[4]],
      ['flagged', a.messages[1]],
    ].sort(),
  );
  const blocked = body(await t.call(t.appA, '/v3/moderation/blocked-messages')).data;
  assert.deepEqual(
    blocked.map((item: any) => [item.message.id, item.ruleId]),
    [[a.messages[4], a.rule]],
  );
  assert.ok((await t.call(t.appA, '/v3/moderation/hook')).body.includes(a.marker));
});
