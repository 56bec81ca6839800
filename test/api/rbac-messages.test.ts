import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, type TestApp } from '../helpers/app.js';
import { newGroup, newRole, newUser } from '../helpers/factories.js';

// Role (RBAC) and scope (SBAC) permissions on sending: see docs/compatibility.md.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

/** A new app per test, so that the default role's permissions start unset. */
let A: CreatedApp;
beforeEach(async () => {
  A = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'RBAC messages app' });
});

const setRole = async (role: string, permissions: unknown, app = A) => {
  const response = await t.call(app, `/v3/roles/${role}/permissions`, { method: 'PUT', body: { permissions } });
  assert.equal(response.statusCode, 200, response.body);
};
const setScope = async (guid: string, scope: string, permissions: unknown) => {
  const response = await t.call(A, `/v3/groups/${guid}/scopes/${scope}/permissions`, { method: 'PUT', body: { permissions } });
  assert.equal(response.statusCode, 200, response.body);
};
const send = (sender: string, payload: Record<string, unknown>, app = A) => t.call(app, '/v3/messages', { method: 'POST', body: payload, onBehalfOf: sender });
const toUser = (receiver: string, extra: Record<string, unknown> = {}) => ({ receiver, receiverType: 'user', data: { text: 'hi' }, ...extra });
const toGroup = (receiver: string, extra: Record<string, unknown> = {}) => ({ receiver, receiverType: 'group', data: { text: 'hi' }, ...extra });
const image = (mimeTypes: Array<string | undefined>) => ({
  type: 'image',
  data: { attachments: mimeTypes.map((mimeType, n) => ({ url: `https://files.example/${n}.img`, ...(mimeType ? { mimeType } : {}) })) },
});

/** A 403 ERR_PERMISSION_DENIED whose message names the permission. */
function assertDenied(response: Awaited<ReturnType<typeof send>>, permission: string): void {
  assert.equal(response.statusCode, 403, response.body);
  assert.equal(errorCode(response), 'ERR_PERMISSION_DENIED');
  assert.match(body(response).error.message, new RegExp(permission.replace('.', '\\.')));
}

/** A user of a new role, and two default-role users. */
async function cast(): Promise<{ role: string; held: string; bob: string; carol: string }> {
  const role = (await newRole(t, A)).role as string;
  const held = (await newUser(t, A, { role })).uid as string;
  const [bob, carol] = [(await newUser(t, A)).uid as string, (await newUser(t, A)).uid as string];
  return { role, held, bob, carol };
}

const historyWith = async (viewer: string, other: string) => body(await t.call(A, `/v3/users/${other}/messages`, { onBehalfOf: viewer })).data as unknown[];

describe('send-message under role permissions', () => {
  it('sendMessage deny refuses the role’s users, storing nothing, and only them; unsetting lifts it', async () => {
    const { role, held, bob } = await cast();
    const group = await newGroup(t, A, {}, held);
    await setRole(role, { sendMessage: 'deny' });
    assertDenied(await send(held, toUser(bob)), 'sendMessage');
    assertDenied(await send(held, toGroup(group.guid)), 'sendMessage');
    assert.match(body(await send(held, toUser(bob))).error.message, new RegExp(`role ${role}`));
    assert.deepEqual(await historyWith(bob, held), []);
    assert.equal(errorCode(await t.call(A, `/v3/users/${held}/conversation`, { onBehalfOf: bob })), 'ERR_CONVERSATION_NOT_ACCESSIBLE');
    assert.equal((await send(bob, toUser(held))).statusCode, 200, 'another role sends');
    await t.call(A, `/v3/roles/${role}/permissions/sendMessage`, { method: 'DELETE' });
    assert.equal((await send(held, toUser(bob))).statusCode, 200);
  });

  it('checks the other rules first: an unknown receiver is still ERR_UID_NOT_FOUND', async () => {
    const { role, held } = await cast();
    await setRole(role, { sendMessage: 'deny' });
    assert.equal(errorCode(await send(held, toUser('nobody-here'))), 'ERR_UID_NOT_FOUND');
  });

  it('sendMessage.mode friends allows only friends as 1:1 receivers', async () => {
    const { role, held, bob, carol } = await cast();
    const group = await newGroup(t, A, {}, held);
    await t.call(A, `/v3/users/${held}/friends`, { method: 'POST', body: { accepted: [bob] } });
    await setRole(role, { 'sendMessage.mode': 'friends' });
    assert.equal((await send(held, toUser(bob))).statusCode, 200);
    assertDenied(await send(held, toUser(carol)), 'sendMessage.mode');
    assert.equal((await send(held, toGroup(group.guid))).statusCode, 200, 'groups are not governed by the mode');
  });

  it('role settings.sendMessagesTo friendsOnly does the same, unless sendMessage.mode is set', async () => {
    const role = (await newRole(t, A, { settings: { sendMessagesTo: 'friendsOnly' } })).role as string;
    const held = (await newUser(t, A, { role })).uid as string;
    const [bob, carol] = [(await newUser(t, A)).uid as string, (await newUser(t, A)).uid as string];
    await t.call(A, `/v3/users/${held}/friends`, { method: 'POST', body: { accepted: [bob] } });
    assert.equal((await send(held, toUser(bob))).statusCode, 200);
    assertDenied(await send(held, toUser(carol)), 'settings.sendMessagesTo');
    await setRole(role, { 'sendMessage.mode': 'all' });
    assert.equal((await send(held, toUser(carol))).statusCode, 200, 'the RBAC permission overrides the older setting');
  });

  it('sendMessage.allowedReceiverTypes and allowedReceiverRoles limit the receivers', async () => {
    const { role, held, bob } = await cast();
    const group = await newGroup(t, A, {}, held);
    await setRole(role, { 'sendMessage.allowedReceiverTypes': ['group'] });
    assertDenied(await send(held, toUser(bob)), 'sendMessage.allowedReceiverTypes');
    assert.equal((await send(held, toGroup(group.guid))).statusCode, 200);

    await setRole(role, { 'sendMessage.allowedReceiverTypes': [], 'sendMessage.allowedReceiverRoles': [role] });
    const peer = (await newUser(t, A, { role })).uid as string;
    assert.equal((await send(held, toUser(peer))).statusCode, 200);
    assertDenied(await send(held, toUser(bob)), 'sendMessage.allowedReceiverRoles');
    assert.equal((await send(held, toGroup(group.guid))).statusCode, 200, 'receiver roles govern users only');
  });

  it('sendMessage.allowedMessageCategories, allowedMessageTypes and allowedCustomTypes limit what is sent', async () => {
    const { role, held, bob } = await cast();
    const custom = (type: string) => toUser(bob, { category: 'custom', type, data: { customData: { x: 1 } } });
    await setRole(role, { 'sendMessage.allowedMessageCategories': ['message'] });
    assertDenied(await send(held, custom('poll')), 'sendMessage.allowedMessageCategories');
    assert.equal((await send(held, toUser(bob))).statusCode, 200);

    await setRole(role, { 'sendMessage.allowedMessageCategories': [], 'sendMessage.allowedMessageTypes': ['text'] });
    assertDenied(await send(held, toUser(bob, image(['image/png']))), 'sendMessage.allowedMessageTypes');
    assert.equal((await send(held, toUser(bob))).statusCode, 200);
    assert.equal((await send(held, custom('poll'))).statusCode, 200, 'custom messages have custom types');

    await setRole(role, { 'sendMessage.allowedCustomTypes': 'poll' });
    assert.equal((await send(held, custom('poll'))).statusCode, 200);
    assertDenied(await send(held, custom('quiz')), 'sendMessage.allowedCustomTypes');
  });

  it('sendMessage.allowedMimeTypes needs every attachment of a media message to have an allowed type', async () => {
    const { role, held, bob } = await cast();
    await setRole(role, { 'sendMessage.allowedMimeTypes': ['image/png', 'image/gif'] });
    assert.equal((await send(held, toUser(bob, image(['image/png', 'image/gif'])))).statusCode, 200);
    assertDenied(await send(held, toUser(bob, image(['image/png', 'image/jpeg']))), 'sendMessage.allowedMimeTypes');
    assertDenied(await send(held, toUser(bob, image([undefined]))), 'sendMessage.allowedMimeTypes');
    assertDenied(await send(held, toUser(bob, { type: 'file', data: { url: 'https://files.example/a.pdf' } })), 'sendMessage.allowedMimeTypes');
    assert.equal((await send(held, toUser(bob))).statusCode, 200, 'text has no attachments');
  });

  it('applies to each receiver of multipleReceivers on its own', async () => {
    const { role, held, bob, carol } = await cast();
    const group = await newGroup(t, A, {}, held);
    await setRole(role, { 'sendMessage.allowedReceiverTypes': ['group'] });
    const response = await send(held, { receiver: bob, receiverType: 'user', data: { text: 'all' }, multipleReceivers: { uids: [carol], guids: [group.guid] } });
    assert.equal(response.statusCode, 200, response.body);
    const data = body(response).data;
    assert.equal(data.uids[bob].error.code, 'ERR_PERMISSION_DENIED');
    assert.equal(data.uids[carol].error.code, 'ERR_PERMISSION_DENIED');
    assert.equal(data.guids[group.guid].success, true);
  });

  it('applies to bots sending through /bots/{uid}/messages', async () => {
    const { role, bob } = await cast();
    const bot = (await newUser(t, A, { role })).uid as string;
    await setRole(role, { sendMessage: 'deny' });
    const response = await t.call(A, `/v3/bots/${bot}/messages`, { method: 'POST', body: toUser(bob) });
    assertDenied(response, 'sendMessage');
  });

  it('applies to thread replies', async () => {
    const { role, held, bob } = await cast();
    const parent = body(await send(bob, toUser(held))).data;
    await setRole(role, { 'sendMessage.allowedMessageTypes': ['image'] });
    const reply = await t.call(A, `/v3/messages/${parent.id}/thread`, { method: 'POST', body: toUser(bob), onBehalfOf: held });
    assertDenied(reply, 'sendMessage.allowedMessageTypes');
    const thread = body(await t.call(A, `/v3/messages/${parent.id}/thread`, { onBehalfOf: bob })).data;
    assert.deepEqual(thread, []);
  });

  it('a role’s permissions in another app do not apply', async () => {
    const { role } = await cast();
    await setRole('default', { sendMessage: 'deny' });
    await newRole(t, t.appB, { role });
    const [x, y] = [(await newUser(t, t.appB, { role })).uid as string, (await newUser(t, t.appB)).uid as string];
    await setRole(role, { sendMessage: 'deny' });
    assert.equal((await send(x, toUser(y), t.appB)).statusCode, 200);
    assert.equal((await send(y, toUser(x), t.appB)).statusCode, 200);
  });
});

describe('send-message under scope permissions', () => {
  it('a scope’s sendMessage deny refuses that scope’s members in that group only', async () => {
    const { held, bob } = await cast();
    const group = await newGroup(t, A, {}, held);
    const other = await newGroup(t, A, {}, held);
    for (const guid of [group.guid, other.guid]) {
      await t.call(A, `/v3/groups/${guid}/members`, { method: 'POST', body: { participants: [bob] } });
    }
    await setScope(group.guid, 'participant', { sendMessage: 'deny' });
    const denied = await send(bob, toGroup(group.guid));
    assertDenied(denied, 'sendMessage');
    assert.match(body(denied).error.message, new RegExp(`scope participant in the group ${group.guid}`));
    assert.equal((await send(held, toGroup(group.guid))).statusCode, 200, 'the owner is an admin');
    assert.equal((await send(bob, toGroup(other.guid))).statusCode, 200);
    assert.equal((await send(bob, toUser(held))).statusCode, 200);
    const history = body(await t.call(A, `/v3/groups/${group.guid}/messages`, { onBehalfOf: held })).data as Array<{ sender: string; category: string }>;
    assert.deepEqual(
      history.filter((m) => m.category === 'message').map((m) => m.sender),
      [held],
    );
  });

  it('sendThreadedMessage deny refuses replies in the group, not messages', async () => {
    const { held, bob } = await cast();
    const group = await newGroup(t, A, {}, held);
    await t.call(A, `/v3/groups/${group.guid}/members`, { method: 'POST', body: { participants: [bob] } });
    await setScope(group.guid, 'participant', { sendThreadedMessage: 'deny' });
    const parent = body(await send(bob, toGroup(group.guid))).data;
    assert.equal(parent.receiver, group.guid);
    const reply = (sender: string) => t.call(A, `/v3/messages/${parent.id}/thread`, { method: 'POST', body: toGroup(group.guid), onBehalfOf: sender });
    assertDenied(await reply(bob), 'sendThreadedMessage');
    assert.equal((await reply(held)).statusCode, 200);
  });
});

describe('edits and deletes under permissions', () => {
  const edit = (id: string, onBehalfOf: string) => t.call(A, `/v3/messages/${id}`, { method: 'PUT', body: { data: { text: 'edited' } }, onBehalfOf });
  const remove = (id: string, onBehalfOf?: string) => t.call(A, `/v3/messages/${id}`, { method: 'DELETE', ...(onBehalfOf ? { onBehalfOf } : {}) });
  const textOf = async (id: string) => body(await t.call(A, `/v3/messages/${id}`)).data;

  it('editMessage and deleteMessage deny refuse the role’s users, even on their own messages; the app still may', async () => {
    const { role, held, bob } = await cast();
    const mine = body(await send(held, toUser(bob))).data;
    await setRole(role, { editMessage: 'deny', deleteMessage: 'deny' });
    assertDenied(await edit(mine.id, held), 'editMessage');
    assertDenied(await remove(mine.id, held), 'deleteMessage');
    const stored = await textOf(mine.id);
    assert.equal(stored.data.text, 'hi');
    assert.equal(stored.deletedAt, undefined);
    assert.equal((await remove(mine.id)).statusCode, 200, 'the app is never restricted');
    const theirs = body(await send(bob, toUser(held))).data;
    assert.equal((await edit(theirs.id, bob)).statusCode, 200, 'another role edits');
  });

  it('a user who cannot see the message still gets ERR_MESSAGE_ID_NOT_FOUND', async () => {
    const { role, held, bob, carol } = await cast();
    const message = body(await send(bob, toUser(carol))).data;
    await setRole(role, { editMessage: 'deny' });
    assert.equal(errorCode(await edit(message.id, held)), 'ERR_MESSAGE_ID_NOT_FOUND');
  });

  it('deleteMessage.denyForScopes stops those scopes deleting others’ messages, not their own', async () => {
    const { role, held, bob } = await cast();
    const group = await newGroup(t, A, { members: { moderators: [held], participants: [bob] } });
    const [theirs, mine] = [body(await send(bob, toGroup(group.guid))).data, body(await send(held, toGroup(group.guid))).data];
    await setRole(role, { 'deleteMessage.denyForScopes': ['moderator'] });
    assertDenied(await remove(theirs.id, held), 'deleteMessage.denyForScopes');
    assert.equal((await textOf(theirs.id)).deletedAt, undefined);
    assert.equal((await remove(mine.id, held)).statusCode, 200);
    await setRole(role, { 'deleteMessage.denyForScopes': ['admin'] });
    assert.equal((await remove(theirs.id, held)).statusCode, 200);
  });

  it('a scope’s editMessage deny refuses edits in that group', async () => {
    const { held, bob } = await cast();
    const group = await newGroup(t, A, { members: { participants: [bob] } }, held);
    const [theirs, mine] = [body(await send(bob, toGroup(group.guid))).data, body(await send(held, toGroup(group.guid))).data];
    await setScope(group.guid, 'participant', { editMessage: 'deny' });
    const denied = await edit(theirs.id, bob);
    assertDenied(denied, 'editMessage');
    assert.match(body(denied).error.message, /scope participant/);
    assert.equal((await edit(mine.id, held)).statusCode, 200, 'the owner is an admin');
    const direct = body(await send(bob, toUser(held))).data;
    assert.equal((await edit(direct.id, bob)).statusCode, 200, '1:1 messages have no scope');
  });
});

describe('reactions under scope permissions', () => {
  const react = (id: string, uid: string) => t.call(A, `/v3/messages/${id}/reactions/${encodeURIComponent('👍')}`, { method: 'POST', onBehalfOf: uid });
  const list = (id: string, uid?: string) => t.call(A, `/v3/messages/${id}/reactions`, { ...(uid ? { onBehalfOf: uid } : {}) });

  it('a scope’s addReaction deny refuses that scope’s members in that group', async () => {
    const { held, bob } = await cast();
    const group = await newGroup(t, A, { members: { participants: [bob] } }, held);
    const message = body(await send(held, toGroup(group.guid))).data;
    await setScope(group.guid, 'participant', { addReaction: 'deny' });
    assertDenied(await react(message.id, bob), 'addReaction');
    assert.equal((await react(message.id, held)).statusCode, 200);
    assert.deepEqual(
      body(await list(message.id)).data.map((r: { uid: string }) => r.uid),
      [held],
    );
    const direct = body(await send(held, toUser(bob))).data;
    assert.equal((await react(direct.id, bob)).statusCode, 200, '1:1 messages have no scope');
  });

  it('listReactions deny refuses the list; listReactions.allowedScopes keeps reactions of those scopes only', async () => {
    const { held, bob, carol } = await cast();
    const group = await newGroup(t, A, { members: { moderators: [carol], participants: [bob] } }, held);
    const message = body(await send(held, toGroup(group.guid))).data;
    for (const uid of [held, bob, carol]) assert.equal((await react(message.id, uid)).statusCode, 200);
    await setScope(group.guid, 'participant', { 'listReactions.allowedScopes': ['admin', 'moderator'] });
    const seen = (response: Awaited<ReturnType<typeof list>>) =>
      body(response)
        .data.map((r: { uid: string }) => r.uid)
        .sort();
    assert.deepEqual(seen(await list(message.id, bob)), [held, carol].sort());
    assert.deepEqual(seen(await list(message.id, carol)), [held, bob, carol].sort(), 'moderators are not limited');
    assert.deepEqual(seen(await list(message.id)), [held, bob, carol].sort(), 'nor is the app');
    await setScope(group.guid, 'participant', { listReactions: 'deny' });
    assertDenied(await list(message.id, bob), 'listReactions');
  });
});
