import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SEND_REFUSALS, type SendRefusal } from '../../src/repositories/send-checks.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newRole, newUser } from '../helpers/factories.js';

// Every rule of a send (SEND_REFUSALS, decided in SQL by repositories/send-checks.ts), each with
// an input that trips it: the error it answers, and that nothing is stored.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const user = async (fields: Record<string, unknown> = {}) => (await newUser(t, t.appA, fields)).uid as string;
const ok = async (url: string, options: Parameters<TestApp['call']>[2]) => {
  const response = await t.call(t.appA, url, options);
  assert.equal(response.statusCode, 200, response.body);
};
type Case = { sender: string; receiver: string; receiverType: 'user' | 'group'; type?: string };

const RULES: Record<SendRefusal, { code: string; status: number; setup: () => Promise<Case> }> = {
  sender_not_found: {
    code: 'ERR_UID_NOT_FOUND',
    status: 404,
    setup: async () => {
      const [sender, receiver] = [await user(), await user()];
      await ok('/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [sender] } });
      return { sender, receiver, receiverType: 'user' };
    },
  },
  receiver_not_found: { code: 'ERR_UID_NOT_FOUND', status: 404, setup: async () => ({ sender: await user(), receiver: uniqueId('nobody'), receiverType: 'user' }) },
  sender_blocked_receiver: {
    code: 'ERR_BLOCKED_RECEIVER',
    status: 403,
    setup: async () => {
      const [sender, receiver] = [await user(), await user()];
      await ok(`/v3/users/${sender}/blockedusers`, { method: 'POST', body: { blockedUids: [receiver] } });
      return { sender, receiver, receiverType: 'user' };
    },
  },
  receiver_blocked_sender: {
    code: 'ERR_BLOCKED_SENDER',
    status: 403,
    setup: async () => {
      const [sender, receiver] = [await user(), await user()];
      await ok(`/v3/users/${receiver}/blockedusers`, { method: 'POST', body: { blockedUids: [sender] } });
      return { sender, receiver, receiverType: 'user' };
    },
  },
  group_not_found: { code: 'ERR_GUID_NOT_FOUND', status: 404, setup: async () => ({ sender: await user(), receiver: uniqueId('nogroup'), receiverType: 'group' }) },
  banned: {
    code: 'ERR_BANNED_GROUPMEMBER',
    status: 403,
    setup: async () => {
      const [owner, sender] = [await user(), await user()];
      const group = await newGroup(t, t.appA, { members: { participants: [sender] } }, owner);
      await ok(`/v3/groups/${group.guid}/bannedusers/${sender}`, { method: 'POST' });
      return { sender, receiver: group.guid, receiverType: 'group' };
    },
  },
  not_a_member: {
    code: 'ERR_GROUP_NOT_JOINED',
    status: 403,
    setup: async () => {
      const group = await newGroup(t, t.appA, {}, await user());
      return { sender: await user(), receiver: group.guid, receiverType: 'group' };
    },
  },
  denied: {
    code: 'ERR_PERMISSION_DENIED',
    status: 403,
    setup: async () => {
      const role = (await newRole(t, t.appA)).role as string;
      await ok(`/v3/roles/${role}/permissions`, { method: 'PUT', body: { permissions: { 'sendMessage.allowedMessageTypes': ['image'] } } });
      return { sender: await user({ role }), receiver: await user(), receiverType: 'user', type: 'text' };
    },
  },
};

describe('the rules of a send', () => {
  it('the table lists every rule the statement decides', () => {
    assert.deepEqual(Object.keys(RULES).sort(), [...SEND_REFUSALS].sort());
  });

  for (const [rule, { code, status, setup }] of Object.entries(RULES)) {
    it(`${rule}: ${code}, and nothing stored`, async () => {
      const { sender, receiver, receiverType, type } = await setup();
      const muid = uniqueId('muid');
      const response = await t.call(t.appA, '/v3/messages', {
        method: 'POST',
        onBehalfOf: sender,
        body: { receiver, receiverType, category: 'message', type: type ?? 'text', data: { text: 'refused' }, muid },
      });
      assert.equal(response.statusCode, status, response.body);
      assert.equal(errorCode(response), code);
      const stored = await t.database.db.selectFrom('messages').select('id').where('app_id', '=', t.appA.appId).where('muid', '=', muid).execute();
      assert.deepEqual(stored, []);
      // The same rule refuses the same message sent to several receivers, per receiver; with a
      // receiver of the other kind beside it, the sends go in one statement for both kinds
      // (a statement for one kind leaves the other's lookups out: send-checks.ts).
      if (rule !== 'sender_not_found') {
        const group = await newGroup(t, t.appA, { members: { participants: [sender] } }, await user());
        const partner = receiverType === 'user' ? { kind: 'guids', id: group.guid as string } : { kind: 'uids', id: await user() };
        const multipleReceivers = receiverType === 'user' ? { uids: [receiver], guids: [partner.id] } : { uids: [partner.id], guids: [receiver] };
        const multi = await t.call(t.appA, '/v3/messages', {
          method: 'POST',
          onBehalfOf: sender,
          body: { category: 'message', type: type ?? 'text', data: { text: 'refused' }, multipleReceivers },
        });
        assert.equal(multi.statusCode, 200, multi.body);
        const result = body(multi).data[receiverType === 'user' ? 'uids' : 'guids'][receiver];
        assert.equal(result.success, false);
        assert.equal(result.error.code, code);
        // The receiver of the other kind breaks no rule (but the role's, which refuses it too).
        const other = body(multi).data[partner.kind][partner.id];
        if (rule === 'denied') assert.equal(other.error.code, code);
        else assert.equal(other.success, true, JSON.stringify(other));
      }
    });
  }
});
