/**
 * The moderation hook (docs/compatibility.md, "Parley extensions"): its configuration
 * (get/set/delete-moderation-hook), the client that asks it about a message (signed, timed,
 * addresses refused as webhooks'), and its answers taking effect on POST /v3/messages.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { verifySignature } from '../../src/domain/webhook-signature.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { ModerationHookClient, type HookQuestion, type HookSettings } from '../../src/services/moderation/hook-client.js';
import { body, createTestApp, errorCode, newManagementCredential, type TestApp } from '../helpers/app.js';
import { newUids } from '../helpers/factories.js';
import { json, startHook, type Answer, type Call, type HookServer } from '../helpers/hook-server.js';

// ---------------------------------------------------------------------------------------------

let t: TestApp;
/** A deployment that does not allow private addresses (PARLEY_WEBHOOK_ALLOW_PRIVATE unset). */
let strict: TestApp;
let hook: HookServer;
before(async () => {
  [t, strict, hook] = await Promise.all([createTestApp(), createTestApp({ webhookAllowPrivate: false }), startHook()]);
});
after(async () => {
  await Promise.all([t?.close(), strict?.close(), hook?.close()]);
});

const freshApp = (on = t) => on.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Hook app' });
const setHook = (app: CreatedApp, payload: Record<string, unknown>, on = t) => on.call(app, '/v3/moderation/hook', { method: 'PUT', body: payload });
const getHook = (app: CreatedApp, on = t) => on.call(app, '/v3/moderation/hook');
const deleteHook = (app: CreatedApp, on = t) => on.call(app, '/v3/moderation/hook', { method: 'DELETE' });
const storedSecret = async (app: CreatedApp, on = t) => (await on.database.db.selectFrom('moderation_hooks').select('secret').where('app_id', '=', app.appId).executeTakeFirstOrThrow()).secret;
const version = async (app: CreatedApp, on = t) => Number((await on.database.db.selectFrom('moderation_versions').select('version').where('app_id', '=', app.appId).executeTakeFirst())?.version ?? 0);
const expectError = (response: { statusCode: number; body: string }, status: number, code: string) => {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(errorCode(response as never), code, response.body);
};
const MASKED = /^[0-9a-f]{4}\*{56}[0-9a-f]{4}$/;

describe('set-moderation-hook, get-moderation-hook, delete-moderation-hook', () => {
  it('creates a hook with the defaults and a signing secret shown once; get shows it masked', async () => {
    const app = await freshApp();
    const before = Math.floor(Date.now() / 1000);
    const created = await setHook(app, { url: 'https://moderation.example.com/parley?x=1' });
    assert.equal(created.statusCode, 200, created.body);
    const data = body(created).data;
    assert.deepEqual(Object.keys(data), ['url', 'enabled', 'timeoutMs', 'onFailure', 'createdAt', 'updatedAt', 'signingSecret']);
    assert.deepEqual([data.url, data.enabled, data.timeoutMs, data.onFailure], ['https://moderation.example.com/parley?x=1', true, 1500, 'open']);
    assert.ok(data.createdAt >= before && data.updatedAt === data.createdAt);
    assert.match(data.signingSecret, /^[0-9a-f]{64}$/);
    assert.equal(await storedSecret(app), data.signingSecret);
    const got = await getHook(app);
    assert.equal(got.statusCode, 200, got.body);
    assert.ok(!got.body.includes(data.signingSecret));
    const shown = body(got).data;
    assert.match(shown.signingSecret, MASKED);
    assert.equal(shown.signingSecret.slice(0, 4) + shown.signingSecret.slice(-4), data.signingSecret.slice(0, 4) + data.signingSecret.slice(-4));
    assert.deepEqual({ ...shown, signingSecret: data.signingSecret }, data);
  });

  it('replaces the hook whole, keeping its secret (masked) and creation time; each change moves the moderation version', async () => {
    const app = await freshApp();
    const first = body(await setHook(app, { url: 'https://a.example.com/hook', timeoutMs: 900, onFailure: 'closed', enabled: false })).data;
    assert.deepEqual([first.enabled, first.timeoutMs, first.onFailure], [false, 900, 'closed']);
    const v1 = await version(app);
    assert.ok(v1 >= 1);
    const replaced = await setHook(app, { url: 'https://b.example.com/hook' });
    assert.equal(replaced.statusCode, 200, replaced.body);
    const data = body(replaced).data;
    assert.deepEqual([data.url, data.enabled, data.timeoutMs, data.onFailure], ['https://b.example.com/hook', true, 1500, 'open'], 'fields not given take their defaults');
    assert.match(data.signingSecret, MASKED);
    assert.equal(await storedSecret(app), first.signingSecret, 'the secret is kept');
    assert.equal(data.createdAt, first.createdAt);
    assert.ok(data.updatedAt >= first.updatedAt);
    assert.equal(await version(app), v1 + 1);
  });

  it('rotates the secret on request, showing the new one once', async () => {
    const app = await freshApp();
    const first = body(await setHook(app, { url: 'https://a.example.com/hook' })).data;
    const rotated = await setHook(app, { url: 'https://a.example.com/hook', rotateSecret: true });
    assert.equal(rotated.statusCode, 200, rotated.body);
    const secret = body(rotated).data.signingSecret;
    assert.match(secret, /^[0-9a-f]{64}$/);
    assert.notEqual(secret, first.signingSecret);
    assert.equal(await storedSecret(app), secret);
    assert.match(body(await getHook(app)).data.signingSecret, MASKED);
  });

  it('deletes the hook; an app without one answers ERR_MODERATION_HOOK_NOT_FOUND', async () => {
    const app = await freshApp();
    expectError(await getHook(app), 404, 'ERR_MODERATION_HOOK_NOT_FOUND');
    expectError(await deleteHook(app), 404, 'ERR_MODERATION_HOOK_NOT_FOUND');
    assert.equal(await version(app), 0, 'a refused delete moves nothing');
    await setHook(app, { url: 'https://a.example.com/hook' });
    const deleted = await deleteHook(app);
    assert.equal(deleted.statusCode, 200, deleted.body);
    assert.deepEqual(body(deleted), { data: { success: true, message: 'The moderation hook has been deleted.' } });
    expectError(await getHook(app), 404, 'ERR_MODERATION_HOOK_NOT_FOUND');
    expectError(await deleteHook(app), 404, 'ERR_MODERATION_HOOK_NOT_FOUND');
    const again = body(await setHook(app, { url: 'https://a.example.com/hook' })).data;
    assert.match(again.signingSecret, /^[0-9a-f]{64}$/, 'a hook made after a delete is new, with a new secret');
  });

  it("keeps each app's hook to itself", async () => {
    const [a, b] = await Promise.all([freshApp(), freshApp()]);
    await setHook(a, { url: 'https://a.example.com/hook' });
    expectError(await getHook(b), 404, 'ERR_MODERATION_HOOK_NOT_FOUND');
    expectError(await deleteHook(b), 404, 'ERR_MODERATION_HOOK_NOT_FOUND');
    assert.equal((await getHook(a)).statusCode, 200);
  });

  it("takes the deployment's management credential, and refuses an authOnly key", async () => {
    const app = await freshApp();
    const cred = await newManagementCredential(t);
    const byManagement = (method: 'GET' | 'PUT' | 'DELETE', payload?: unknown) =>
      t.call(app, '/v3/moderation/hook', { method, key: 'none', headers: { key: cred.key, secret: cred.secret }, ...(payload ? { body: payload } : {}) });
    const created = await byManagement('PUT', { url: 'https://m.example.com/hook' });
    assert.equal(created.statusCode, 200, created.body);
    assert.equal(body(await byManagement('GET')).data.url, 'https://m.example.com/hook');
    const refused = await t.call(app, '/v3/moderation/hook', { key: 'auth' });
    assert.equal(errorCode(refused), 'AUTH_ERR_NO_ACCESS', refused.body);
    assert.equal((await byManagement('DELETE')).statusCode, 200);
    const wrong = await t.call(app, '/v3/moderation/hook', { key: 'none', headers: { key: cred.key, secret: 'not-the-secret' } });
    assert.ok(wrong.statusCode === 401 || wrong.statusCode === 403, wrong.body);
  });
});

describe('set-moderation-hook: URLs and fields refused', () => {
  const refusedUrl = async (url: string, on: TestApp) => {
    const app = await freshApp(on);
    const response = await setHook(app, { url }, on);
    assert.equal(response.statusCode, 400, `${JSON.stringify(url)}: ${response.body}`);
    assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    assert.ok(body(response).error.details?.url, `${JSON.stringify(url)} names url: ${response.body}`);
    expectError(await getHook(app, on), 404, 'ERR_MODERATION_HOOK_NOT_FOUND');
  };

  it('refuses http, and private, loopback and reserved hosts in any spelling, unless the deployment allows them', async () => {
    for (const url of [
      'http://moderation.example.com/hook',
      'https://127.0.0.1/hook',
      'https://[::1]/hook',
      'https://[::ffff:127.0.0.1]/hook',
      'https://0.0.0.0/hook',
      'https://2130706433/hook',
      'https://10.1.2.3/hook',
      'https://192.168.0.1:8443/hook',
      'https://169.254.169.254/latest/meta-data',
      'https://localhost/hook',
      'https://hooks.internal/hook',
      'https://intranet/hook',
    ]) {
      await refusedUrl(url, strict);
    }
    const app = await freshApp(strict);
    assert.equal((await setHook(app, { url: 'https://moderation.example.com/hook' }, strict)).statusCode, 200);
    // Allowed where the deployment allows private addresses (the tests' default).
    const open = await freshApp();
    assert.equal((await setHook(open, { url: 'http://127.0.0.1:9/hook' })).statusCode, 200);
  });

  it('refuses control characters, invisible characters and whitespace anywhere, rather than trimming them', async () => {
    for (const url of [
      ' https://moderation.example.com/hook',
      'https://moderation.example.com/hook ',
      'https://moderation.example.com/ho ok',
      'https://moderation.example.com/hook\n',
      'https://moderation.example.com/a\tb',
      'https://moderation.example.com/a\u0000b',
      'https://moderation.example.com/a\u007fb',
      'https://moderation.example.com/a\u0085b',
      'https://moderation.example.com/a\u00a0b',
      'https://moderation.example.com/a\u200bb',
      'https://moderation.example.com/a\u202eb',
      'https://moderation.example.com/a\u2028b',
    ]) {
      await refusedUrl(url, t);
    }
  });

  it('refuses credentials, other schemes, relative and over-long URLs', async () => {
    for (const url of [
      'https://user:pass@moderation.example.com/hook',
      'https://user@moderation.example.com/hook',
      'ftp://moderation.example.com/hook',
      'file:///etc/passwd',
      '/hook',
      '',
      `https://moderation.example.com/${'a'.repeat(2_000)}`,
    ]) {
      await refusedUrl(url, t);
    }
    const longest = `https://moderation.example.com/${'a'.repeat(2_000 - 'https://moderation.example.com/'.length)}`;
    assert.equal(longest.length, 2_000);
    const app = await freshApp();
    const response = await setHook(app, { url: longest });
    assert.equal(response.statusCode, 200, response.body);
    assert.equal(body(response).data.url, longest);
  });

  it('refuses a timeout outside 100..5000 ms, an unknown onFailure and a body without url', async () => {
    const app = await freshApp();
    for (const [payload, field] of [
      [{ url: 'https://a.example.com/hook', timeoutMs: 99 }, 'timeoutMs'],
      [{ url: 'https://a.example.com/hook', timeoutMs: 5_001 }, 'timeoutMs'],
      [{ url: 'https://a.example.com/hook', timeoutMs: 1.5 }, 'timeoutMs'],
      [{ url: 'https://a.example.com/hook', timeoutMs: '1000' }, 'timeoutMs'],
      [{ url: 'https://a.example.com/hook', onFailure: 'maybe' }, 'onFailure'],
      [{ enabled: true }, 'url'],
    ] as const) {
      const response = await setHook(app, payload as Record<string, unknown>);
      assert.equal(response.statusCode, 400, `${JSON.stringify(payload)}: ${response.body}`);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.ok(JSON.stringify(body(response).error).includes(field), `${field}: ${response.body}`);
    }
    expectError(await getHook(app), 404, 'ERR_MODERATION_HOOK_NOT_FOUND');
    for (const timeoutMs of [100, 5_000]) assert.equal((await setHook(app, { url: 'https://a.example.com/hook', timeoutMs })).statusCode, 200);
  });
});

// ---------------------------------------------------------------------------------------------

const QUESTION: HookQuestion = {
  appId: 'app-1',
  kind: 'send',
  message: { sender: 'alice', receiver: 'bob', receiverType: 'user', conversationId: 'alice_user_bob', category: 'message', type: 'text', data: { text: 'hello ✓' } },
};
const SECRET = 'a'.repeat(64);
const settings = (url: string, extra: Partial<HookSettings> = {}): HookSettings => ({ url, enabled: true, timeoutMs: 1_000, onFailure: 'open', secret: SECRET, ...extra });

describe('ModerationHookClient', () => {
  const client = new ModerationHookClient({ allowPrivate: true });
  const refusing = new ModerationHookClient({ allowPrivate: false });
  after(() => {
    client.close();
    refusing.close();
  });
  const asked = async (answer: Answer | ((call: Call) => Answer), extra: Partial<HookSettings> = {}) => {
    hook.respond = typeof answer === 'function' ? answer : () => answer;
    const from = hook.calls.length;
    const result = await client.ask(settings(hook.url, extra), QUESTION);
    return { result, calls: hook.calls.slice(from) };
  };

  it('posts the question once, signed as webhook deliveries are, with its headers', async () => {
    const now = Math.floor(Date.now() / 1000);
    const { result, calls } = await asked(json({ action: 'allow' }));
    assert.deepEqual(result, { decision: 'allow' });
    assert.equal(calls.length, 1);
    const [call] = calls;
    assert.equal(call!.raw, JSON.stringify(QUESTION));
    assert.deepEqual(JSON.parse(call!.raw), QUESTION);
    assert.equal(call!.headers['content-type'], 'application/json');
    assert.match(String(call!.headers['user-agent']), /^Parley-Moderation\/\d+\.\d+\.\d+/);
    const signature = String(call!.headers['x-parley-signature']);
    assert.ok(verifySignature(signature, SECRET, call!.raw, now));
    assert.ok(!verifySignature(signature, 'b'.repeat(64), call!.raw, now), 'another secret fails');
    assert.ok(!verifySignature(signature, SECRET, call!.raw.replace('hello', 'jello'), now), 'a changed body fails');
    const second = await asked(json({ action: 'allow' }));
    const ids = [call!.headers['x-parley-hook-id'], second.calls[0]!.headers['x-parley-hook-id']];
    assert.ok(typeof ids[0] === 'string' && ids[0].length >= 16);
    assert.notEqual(ids[0], ids[1], 'a new id per call');
  });

  it('reads allow, block and drop, with their reasons or the default one; extra fields are ignored', async () => {
    assert.deepEqual((await asked(json({ action: 'allow', reason: 'fine', score: 0.1 }))).result, { decision: 'allow' });
    assert.deepEqual((await asked(json({ action: 'block', reason: 'looks like spam' }))).result, { decision: 'block', reason: 'looks like spam' });
    assert.deepEqual((await asked(json({ action: 'block' }))).result, { decision: 'block', reason: 'the moderation hook' });
    assert.deepEqual((await asked(json({ action: 'drop', reason: 'r'.repeat(500) }))).result, { decision: 'drop', reason: 'r'.repeat(500) });
    assert.deepEqual((await asked(json({ action: 'drop', reason: '' }))).result, { decision: 'drop', reason: 'the moderation hook' });
  });

  it('fails on any status but 200, and follows no redirect', async () => {
    for (const status of [201, 204, 400, 500, 503]) {
      const { result } = await asked({ status, body: '{"action":"allow"}' });
      assert.deepEqual(result, { failed: `answered HTTP ${status}` });
    }
    const { result, calls } = await asked({ status: 302, headers: { location: `${hook.url}?again` }, body: '' });
    assert.deepEqual(result, { failed: 'answered HTTP 302' });
    assert.equal(calls.length, 1, 'the redirect is not followed');
  });

  it('fails on an answer that is not the protocol’s: not JSON, not an object, an unknown action, a bad reason', async () => {
    for (const raw of [
      '',
      'allow',
      '{"action":',
      '[]',
      '"allow"',
      'null',
      '{}',
      '{"action":"ALLOW"}',
      '{"action":"approve"}',
      '{"action":1}',
      '{"action":"block","reason":7}',
      JSON.stringify({ action: 'drop', reason: 'r'.repeat(501) }),
    ]) {
      const { result } = await asked({ body: raw });
      assert.ok('failed' in result, `${raw}: ${JSON.stringify(result)}`);
    }
  });

  it('fails on an answer larger than 16 KiB', async () => {
    const padded = JSON.stringify({ action: 'allow', padding: 'x'.repeat(17 * 1024) });
    const { result } = await asked({ body: padded });
    assert.ok('failed' in result && /larger than 16384 bytes/.test(result.failed), JSON.stringify(result));
    const fits = JSON.stringify({ action: 'allow', padding: 'x'.repeat(15 * 1024) });
    assert.deepEqual((await asked({ body: fits })).result, { decision: 'allow' });
  });

  it('fails when the answer comes later than the timeout, returning within about the timeout', async () => {
    const started = Date.now();
    const { result } = await asked({ body: '{"action":"allow"}', delayMs: 1_500 }, { timeoutMs: 200 });
    const took = Date.now() - started;
    assert.deepEqual(result, { failed: 'no answer within 200 ms' });
    assert.ok(took >= 190 && took < 700, `took ${took} ms`);
  });

  it('counts the answer’s body in the timeout', async () => {
    const started = Date.now();
    const { result } = await asked({ body: '{"action":"allow"}', stallBodyMs: 1_500 }, { timeoutMs: 200 });
    const took = Date.now() - started;
    assert.deepEqual(result, { failed: 'no answer within 200 ms' });
    assert.ok(took < 700, `took ${took} ms`);
    assert.deepEqual((await asked({ body: '{"action":"allow"}', stallBodyMs: 50 }, { timeoutMs: 1_000 })).result, { decision: 'allow' });
  });

  it('fails on a connection refused', async () => {
    const closed = await startHook();
    const url = closed.url;
    await closed.close();
    const result = await client.ask(settings(url), QUESTION);
    assert.ok('failed' in result && /ECONNREFUSED/.test(result.failed), JSON.stringify(result));
  });

  it('refuses private addresses unless the deployment allows them: http, literal addresses, names resolving to them', async () => {
    const port = new URL(hook.url).port;
    const from = hook.calls.length;
    const cases: Array<[string, RegExp]> = [
      [hook.url, /http URLs are refused/],
      [`https://127.0.0.1:${port}/moderate`, /refused: 127\.0\.0\.1 is not a public address/],
      [`https://[::ffff:127.0.0.1]:${port}/moderate`, /is not a public address/],
      [`https://localhost:${port}/moderate`, /refused: localhost resolves to/],
    ];
    for (const [url, why] of cases) {
      const result = await refusing.ask(settings(url), QUESTION);
      assert.ok('failed' in result && why.test(result.failed), `${url}: ${JSON.stringify(result)}`);
    }
    assert.equal(hook.calls.length, from, 'nothing reached the hook');
  });
});

// ---------------------------------------------------------------------------------------------

describe('the hook on POST /v3/messages', () => {
  /** A fresh app with two users and its hook answering `answer`, on a hook server of its own. */
  const setUp = async (answer: Answer, hookFields: Record<string, unknown> = {}) => {
    const app = await freshApp();
    const server = await startHook(() => answer);
    const [alice, bob] = await newUids(t, app, 2);
    const response = await setHook(app, { url: server.url, ...hookFields });
    assert.equal(response.statusCode, 200, response.body);
    return { app, server, alice: alice!, bob: bob! };
  };
  const send = (app: CreatedApp, sender: string, receiver: string, text: string) =>
    t.call(app, '/v3/messages', { method: 'POST', onBehalfOf: sender, body: { receiver, receiverType: 'user', category: 'message', type: 'text', data: { text } } });
  const seenBy = async (app: CreatedApp, viewer: string, other: string) => {
    const response = await t.call(app, `/v3/users/${other}/messages`, { onBehalfOf: viewer });
    assert.equal(response.statusCode, 200, response.body);
    return (body(response).data as Array<{ id: string; data: { text?: string } }>).map((message) => message.id);
  };
  const failures = async (app: CreatedApp) =>
    (await t.database.db.selectFrom('events').select(['trigger', 'data']).where('app_id', '=', app.appId).where('trigger', '=', 'moderation_engine_failed').execute()).map(
      (row) => (typeof row.data === 'string' ? JSON.parse(row.data) : row.data) as Record<string, any>,
    );

  it('sends a message the hook allows, approved, after asking it about the message', async () => {
    const { app, server, alice, bob } = await setUp(json({ action: 'allow' }));
    try {
      const response = await send(app, alice, bob, 'hello there');
      assert.equal(response.statusCode, 200, response.body);
      const message = body(response).data;
      assert.equal(message.data.moderation?.status, 'approved', response.body);
      assert.equal(server.calls.length, 1);
      const question = JSON.parse(server.calls[0]!.raw);
      assert.equal(question.appId, app.appId);
      assert.equal(question.kind, 'send');
      assert.deepEqual([question.message.sender, question.message.receiver, question.message.receiverType, question.message.type], [alice, bob, 'user', 'text']);
      assert.equal(question.message.data.text, 'hello there');
      assert.deepEqual(await seenBy(app, bob, alice), [message.id]);
    } finally {
      await server.close();
    }
  });

  it('holds a message the hook blocks: pending for its sender, unseen by its receiver', async () => {
    const { app, server, alice, bob } = await setUp(json({ action: 'block', reason: 'needs a look' }));
    try {
      const response = await send(app, alice, bob, 'suspicious');
      assert.equal(response.statusCode, 200, response.body);
      const message = body(response).data;
      assert.equal(message.data.moderation?.status, 'pending', response.body);
      assert.deepEqual(await seenBy(app, bob, alice), []);
    } finally {
      await server.close();
    }
  });

  it('refuses a message the hook drops with ERR_BLOCKED_BY_WEBHOOK, storing nothing', async () => {
    const { app, server, alice, bob } = await setUp(json({ action: 'drop', reason: 'not here' }));
    try {
      const response = await send(app, alice, bob, 'dropped');
      expectError(response, 403, 'ERR_BLOCKED_BY_WEBHOOK');
      assert.match(body(response).error.message, /not here/);
      assert.deepEqual(await seenBy(app, bob, alice), []);
      assert.deepEqual(await seenBy(app, alice, bob), []);
    } finally {
      await server.close();
    }
  });

  it('lets a message through when the hook times out and fails open, recording moderation_engine_failed', async () => {
    const { app, server, alice, bob } = await setUp({ body: '{"action":"drop"}', delayMs: 2_000 }, { timeoutMs: 200 });
    try {
      const started = Date.now();
      const response = await send(app, alice, bob, 'late hook');
      assert.ok(Date.now() - started < 1_500, 'the send waits about the timeout');
      assert.equal(response.statusCode, 200, response.body);
      const message = body(response).data;
      assert.equal(message.data.moderation?.status, 'approved', response.body);
      assert.deepEqual(await seenBy(app, bob, alice), [message.id]);
      const [failure, ...more] = await failures(app);
      assert.equal(more.length, 0);
      assert.equal(failure?.onFailure, 'open', JSON.stringify(failure));
      assert.match(String(failure?.reason), /no answer within 200 ms/);
    } finally {
      await server.close();
    }
  });

  it('holds a message when the hook times out and fails closed', async () => {
    const { app, server, alice, bob } = await setUp({ body: '{"action":"allow"}', delayMs: 2_000 }, { timeoutMs: 200, onFailure: 'closed' });
    try {
      const response = await send(app, alice, bob, 'late hook, closed');
      assert.equal(response.statusCode, 200, response.body);
      assert.equal(body(response).data.data.moderation?.status, 'pending', response.body);
      assert.deepEqual(await seenBy(app, bob, alice), []);
      const [failure] = await failures(app);
      assert.equal(failure?.onFailure, 'closed', JSON.stringify(failure));
    } finally {
      await server.close();
    }
  });

  it('asks no longer once the hook is disabled or deleted', async () => {
    const { app, server, alice, bob } = await setUp(json({ action: 'drop' }));
    try {
      expectError(await send(app, alice, bob, 'one'), 403, 'ERR_BLOCKED_BY_WEBHOOK');
      assert.equal((await setHook(app, { url: server.url, enabled: false })).statusCode, 200);
      const sent = async (text: string) => {
        const response = await send(app, alice, bob, text);
        assert.equal(response.statusCode, 200, `${text}: ${response.body}`);
      };
      await sent('two');
      assert.equal((await setHook(app, { url: server.url })).statusCode, 200);
      expectError(await send(app, alice, bob, 'three'), 403, 'ERR_BLOCKED_BY_WEBHOOK');
      assert.equal((await deleteHook(app)).statusCode, 200);
      await sent('four');
      assert.equal(server.calls.length, 2);
    } finally {
      await server.close();
    }
  });
});
