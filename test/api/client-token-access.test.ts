/**
 * The client access table (src/http/plugins/client-access.ts), over every route the server
 * has: each operation is called with an auth token of u1 (a seeded tenant's user, owner of its
 * group) and no apiKey, with the tenant's own entities in its parameters (the tenant isolation
 * matrix's requests, test/helpers/route-matrix.ts). An operation the table lists must not answer
 * 401 or 403; any other answers ERR_PERMISSION_DENIED (403) before it reads its body, and
 * changes nothing. A route added later is covered without editing this file, and is denied
 * until the table lists it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CLIENT_ACCESS } from '../../src/http/plugins/client-access.js';
import { createTestApp, errorCode, type TestApp } from '../helpers/app.js';
import { asClient, newToken } from '../helpers/client.js';
import { listOperations, requestsFor, type Operation } from '../helpers/route-matrix.js';
import { newMarker, readCatalogue, seedTenant, sharedIds, snapshot, snapshotDiff, type Catalogue, type Tenant } from '../helpers/tenant-data.js';

let t: TestApp;
let a: Tenant;
let token: string;
let operations: Operation[];
let catalogue: Catalogue;
before(async () => {
  t = await createTestApp();
  catalogue = await readCatalogue(t);
  a = await seedTenant(t, t.appA, sharedIds(), newMarker());
  token = await newToken(t, t.appA, a.users[0]!);
  ({ operations } = await listOperations(t));
});
after(() => t.close());

/**
 * The order operations run in, so that none undoes what a later one needs: removals after the
 * rest, conversations cleared after the receipts, then the group handed on (update-group's
 * owner) and deleted.
 */
const LAST = ['reset-user-conversation', 'reset-group-conversation', 'delete-conversation', 'update-group', 'delete-group'];
function order(op: Operation): number {
  const last = LAST.indexOf(op.operationId);
  if (last >= 0) return 3 + last;
  return op.method === 'DELETE' ? 2 : 1;
}

/** What an operation needs done first, that an earlier one undid: the 1:1 conversation reset by reset-user-conversation. */
const FIRST: Record<string, () => Promise<unknown>> = {
  'delete-conversation': () =>
    t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: a.users[1], body: { receiver: a.users[0], receiverType: 'user', category: 'message', type: 'text', data: { text: 'again' } } }),
};

function call(op: Operation, userOffset: number) {
  const problems: string[] = [];
  const [request] = requestsFor(op, a, problems, { userOffset });
  assert.deepEqual(problems, []);
  return {
    label: request!.label,
    response: asClient(t, t.appA, token, request!.url, {
      method: op.method as 'GET',
      query: request!.query,
      ...(request!.body !== undefined ? { body: request!.body } : {}),
    }),
  };
}

describe('what an auth token may call', () => {
  it('lists only operations the server routes', () => {
    const routed = new Set(operations.map((op) => op.operationId));
    assert.deepEqual(
      Object.keys(CLIENT_ACCESS).filter((id) => !routed.has(id)),
      [],
    );
  });

  it('refuses every operation the table leaves out with ERR_PERMISSION_DENIED, changing nothing', async () => {
    const denied = operations.filter((op) => !Object.hasOwn(CLIENT_ACCESS, op.operationId));
    assert.ok(denied.length >= 80, `only ${denied.length} denied operations`);
    const before = await snapshot(t, catalogue, t.appA.appId);
    const wrong: string[] = [];
    for (const op of denied) {
      const { label, response } = call(op, 1);
      const answer = await response;
      if (answer.statusCode !== 403 || errorCode(answer) !== 'ERR_PERMISSION_DENIED') wrong.push(`${op.operationId} ${label}: ${answer.statusCode} ${answer.body.slice(0, 200)}`);
    }
    assert.deepEqual(wrong, []);
    assert.deepEqual(snapshotDiff(before, await snapshot(t, catalogue, t.appA.appId)), []);
    // The event stream too (left out of the matrix: its answer never ends when it passes).
    const stream = await asClient(t, t.appA, token, '/v3/events');
    assert.deepEqual([stream.statusCode, errorCode(stream)], [403, 'ERR_PERMISSION_DENIED']);
  });

  it('lets every listed operation through as the token’s user (no 401 or 403)', async () => {
    const allowed = operations.filter((op) => Object.hasOwn(CLIENT_ACCESS, op.operationId)).sort((x, y) => order(x) - order(y));
    assert.ok(allowed.length >= 50, `only ${allowed.length} allowed operations`);
    const wrong: string[] = [];
    for (const op of allowed) {
      // Operations about the user's own lists name u1 (the token's user) first; the others u2 onwards.
      const own = (CLIENT_ACCESS[op.operationId]!.self ?? []).length > 0;
      await FIRST[op.operationId]?.();
      const { label, response } = call(op, own ? 0 : 1);
      const answer = await response;
      if (answer.statusCode === 401 || answer.statusCode === 403 || answer.statusCode >= 500) wrong.push(`${op.operationId} ${label}: ${answer.statusCode} ${answer.body.slice(0, 200)}`);
    }
    assert.deepEqual(wrong, []);
  });
});
