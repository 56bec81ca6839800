/**
 * A write racing the delete of what it names (a group, a role, a user, a conversation) answers
 * as if the delete came first or last: success, or the vendor's not-found error; never a 500 from
 * a foreign key the delete removed under it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createTestApp, uniqueId, type CallOptions, type TestApp } from '../helpers/app.js';
import { newGroup, newRole, newUids } from '../helpers/factories.js';

let t: TestApp;
before(async () => {
  t = await createTestApp({ rateLimits: { core: 0, standard: 0 } });
});
after(async () => {
  await t.close();
});

const ROUNDS = 12;
type Call = [string, CallOptions];

/** Runs `writes` and `remove` at once, `ROUNDS` times; every answer must be below 500. */
async function race(setup: () => Promise<{ writes: Call[]; remove: Call }>) {
  const failures: string[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const { writes, remove } = await setup();
    // The delete at every position among the writes, in turn.
    const calls = [...writes];
    calls.splice(round % (writes.length + 1), 0, remove);
    const answers = await Promise.all(calls.map(([url, options]) => t.call(t.appA, url, options)));
    answers.forEach((answer, i) => {
      if (answer.statusCode >= 500) failures.push(`${calls[i]![1].method} ${calls[i]![0]}: ${answer.statusCode} ${answer.body.slice(0, 300)}`);
    });
  }
  assert.deepEqual(failures, []);
}

describe('writes racing a delete', () => {
  it('of their group', async () => {
    const [owner, member, other] = await newUids(t, t.appA, 3);
    await race(async () => {
      const guid = (await newGroup(t, t.appA, { members: { participants: [member!] } }, owner)).guid as string;
      const first = await t.call(t.appA, '/v3/messages', {
        method: 'POST',
        onBehalfOf: owner!,
        body: { receiver: guid, receiverType: 'group', category: 'message', type: 'text', data: { text: 'first' } },
      });
      assert.equal(first.statusCode, 200, first.body);
      const writes: Call[] = [
        [`/v3/groups/${guid}/members`, { method: 'POST', body: { participants: [other] } }],
        [`/v3/groups/${guid}/members`, { method: 'POST', onBehalfOf: other! }],
        [`/v3/groups/${guid}/bannedusers/${other}`, { method: 'POST' }],
        [`/v3/groups/${guid}/members/${member}`, { method: 'PUT', body: { scope: 'moderator' } }],
        [`/v3/groups/${guid}/scopes/participant/permissions`, { method: 'PUT', body: { permissions: { listReactions: 'allow' } } }],
        [`/v3/groups/${guid}`, { method: 'PUT', body: { name: 'renamed', owner: member } }],
        ['/v3/messages', { method: 'POST', onBehalfOf: owner!, body: { receiver: guid, receiverType: 'group', category: 'message', type: 'text', data: { text: 'hi' } } }],
        [`/v3/groups/${guid}/conversation`, { method: 'PUT', onBehalfOf: member!, body: { tags: ['x'] } }],
        [`/v3/groups/${guid}/conversation/read`, { method: 'POST', onBehalfOf: member!, body: {} }],
        [`/v3/groups/${guid}/conversation/delivered`, { method: 'POST', onBehalfOf: owner!, body: {} }],
        [`/v3/groups/${guid}/conversation`, { method: 'DELETE', onBehalfOf: member! }],
      ];
      return { writes, remove: [`/v3/groups/${guid}`, { method: 'DELETE' }] };
    });
  });

  it('of their role', async () => {
    await race(async () => {
      const role = (await newRole(t, t.appA)).role as string;
      const writes: Call[] = [
        [`/v3/roles/${role}`, { method: 'PUT', body: { name: 'renamed', description: 'd' } }],
        [`/v3/roles/${role}/permissions`, { method: 'PUT', body: { permissions: { initiateCall: 'deny' } } }],
        [`/v3/roles/${role}/restrictedfeatures`, { method: 'POST', body: { featuresToRestrict: ['getCall'] } }],
        [`/v3/roles/${role}/restrictedfeatures`, { method: 'DELETE', body: { allowAll: true } }],
        ['/v3/users', { method: 'POST', body: { uid: uniqueId('user'), name: 'With role', role } }],
      ];
      return { writes, remove: [`/v3/roles/${role}`, { method: 'DELETE' }] };
    });
  });

  it('of their user', async () => {
    const [friend] = await newUids(t, t.appA, 1);
    const guid = (await newGroup(t, t.appA, {}, friend)).guid as string;
    await race(async () => {
      const [uid] = await newUids(t, t.appA, 1);
      const writes: Call[] = [
        [`/v3/users/${uid}/friends`, { method: 'POST', body: { accepted: [friend] } }],
        [`/v3/users/${uid}/blockedusers`, { method: 'POST', body: { blockedUids: [friend] } }],
        [`/v3/users/${uid}/auth_tokens`, { method: 'POST', body: {} }],
        [`/v3/groups/${guid}/members`, { method: 'POST', body: { participants: [uid] } }],
        ['/v3/messages', { method: 'POST', onBehalfOf: uid!, body: { receiver: friend, receiverType: 'user', category: 'message', type: 'text', data: { text: 'hi' } } }],
        [`/v3/users/${friend}/conversation`, { method: 'PUT', onBehalfOf: uid!, body: { tags: ['x'] } }],
      ];
      return { writes, remove: [`/v3/users/${uid}`, { method: 'DELETE', body: { permanent: true } }] };
    });
  });

  it('of their conversation', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    await race(async () => {
      const send = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: alice!, body: { receiver: bob, receiverType: 'user', category: 'message', type: 'text', data: { text: 'hi' } } });
      const id = send.json().data.id as number;
      const writes: Call[] = [
        [`/v3/users/${alice}/conversation/read`, { method: 'POST', onBehalfOf: bob!, body: { messageId: id } }],
        [`/v3/users/${alice}/conversation/delivered`, { method: 'POST', onBehalfOf: bob!, body: { messageId: id } }],
        [`/v3/users/${alice}/conversation`, { method: 'PUT', onBehalfOf: bob!, body: { tags: ['x'] } }],
        [`/v3/messages/${id}/reactions/x`, { method: 'POST', onBehalfOf: bob! }],
        ['/v3/messages', { method: 'POST', onBehalfOf: bob!, body: { receiver: alice, receiverType: 'user', category: 'message', type: 'text', data: { text: 'back' } } }],
      ];
      return { writes, remove: [`/v3/users/${alice}/conversation`, { method: 'DELETE', onBehalfOf: bob! }] };
    });
  });
});
