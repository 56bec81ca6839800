/**
 * Moderation's events (docs/moderation.md) delivered to a webhook on loopback, once each, in the
 * vendor's envelope: moderation_engine_approved, moderation_engine_blocked (and no message_sent
 * until approval), moderation_manual_approved, moderation_engine_failed.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { MODERATION_TRIGGERS } from '../../src/domain/events.js';
import { body, createTestApp, managementCall, newManagementCredential, okData, uniqueId, type TestApp } from '../helpers/app.js';
import { newUids } from '../helpers/factories.js';
import { json, startHook, type HookServer } from '../helpers/hook-server.js';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.js';

let t: TestApp;
let hook: HookServer;
let receiver: Receiver;
before(async () => {
  [t, hook, receiver] = await Promise.all([createTestApp({ webhookTimeoutMs: 1_000 }), startHook(), startReceiver()]);
  t.services.webhookDispatcher.start(silentLogger);
});
after(async () => {
  await Promise.all([t?.close(), hook?.close(), receiver?.close()]);
});

describe('moderation events', () => {
  it('are delivered to webhooks once each, with the message and what held it; message_sent of a held message waits for its approval', async () => {
    const app = await t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Events' });
    const cred = await newManagementCredential(t);
    const id = uniqueId('wh');
    const created = await managementCall(t, cred, `/apps/${app.appId}/webhooks`, { method: 'POST', body: { id, name: id, webhookURL: receiver.url } });
    assert.equal(created.statusCode, 200, created.body);
    const triggers = [...MODERATION_TRIGGERS, 'message_sent'];
    assert.equal((await managementCall(t, cred, `/apps/${app.appId}/webhooks/${id}/triggers`, { method: 'POST', body: { triggerIds: triggers } })).statusCode, 200);
    await okData(t, app, 'POST', '/v3/moderation/rules', undefined, {
      id: 'hold',
      name: 'Hold',
      enabled: true,
      conditions: [{ operand: 'text', category: 'word', operator: 'contains', value: ['forbidden'] }],
      action: ['blockMessage'],
    });
    hook.respond = () => json({ action: 'allow' });
    await okData(t, app, 'PUT', '/v3/moderation/hook', undefined, { url: hook.url, timeoutMs: 500, onFailure: 'open' });
    const [alice, bob] = await newUids(t, app, 2);
    const send = (text: string) => okData(t, app, 'POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', data: { text } });
    const approved = await send('hello');
    const held = await send('forbidden words');
    hook.respond = () => ({ status: 500 });
    const failed = await send('while the hook is down');
    assert.equal(failed.data.moderation.status, 'approved', 'the hook fails open');
    await okData(t, app, 'PATCH', `/v3/moderation/blocked-messages/${held.id}`, undefined, { status: 'approved' });

    const expected = 7; // approved: engine_approved + sent; held: blocked, then manual_approved + sent; failed: engine_failed, engine_approved + sent
    const got = await receiver.waitFor((r) => r.filter((d) => d.body.appId === app.appId).length >= expected + 1).catch(() => receiver.received);
    const mine = got.filter((d) => d.body.appId === app.appId).map((d) => d.body);
    const of = (messageId: string) =>
      mine
        .filter((p) => p.data.message?.id === messageId)
        .map((p) => p.trigger)
        .sort();
    assert.deepEqual(of(approved.id), ['message_sent', 'moderation_engine_approved']);
    assert.deepEqual(of(held.id), ['message_sent', 'moderation_engine_blocked', 'moderation_manual_approved']);
    assert.deepEqual(of(failed.id), ['message_sent', 'moderation_engine_approved']);
    const failures = mine.filter((p) => p.trigger === 'moderation_engine_failed');
    assert.equal(failures.length, 1);
    assert.equal(failures[0].data.onFailure, 'open');
    assert.match(failures[0].data.reason, /500/);
    assert.equal(failures[0].data.message.data.text, 'while the hook is down');
    for (const payload of mine) assert.deepEqual(Object.keys(payload), ['trigger', 'data', 'appId', 'region', 'webhook']);
    const blocked = mine.find((p) => p.trigger === 'moderation_engine_blocked');
    assert.ok(['pending', 'approved'].includes(blocked.data.message.data.moderation.status), 'rendered when delivered: still held, or approved by then');
    assert.equal(blocked.data.moderation[0].ruleId, 'hold');
    const manual = mine.find((p) => p.trigger === 'moderation_manual_approved');
    assert.equal(manual.data.message.data.moderation.status, 'approved');
    assert.equal(manual.data.moderation[0].revisionId, `${app.appId}_hold_1`);
    assert.equal(body(await t.call(app, '/v3/moderation/hook')).data.url, hook.url);
  });
});
