/**
 * The parts of webhook delivery that need no database (docs/webhooks.md): the retry schedule,
 * the signature, and the sender: its refusal of non-public addresses at connect time, its
 * timeout, URL credentials, redirects.
 */
import assert from 'node:assert/strict';
import http from 'node:http';
import { describe, it } from 'node:test';
import { signatureHeader, verifySignature } from '../../src/domain/webhook-signature.js';
import { DEFAULT_RETRY_SCHEDULE, nextRetryAt } from '../../src/domain/webhooks.js';
import { WebhookSender } from '../../src/services/webhook-sender.js';

describe('the retry schedule', () => {
  const first = new Date('2026-01-01T00:00:00Z');
  const after = (ms: number) => new Date(first.getTime() + ms);
  it("waits the vendor's 10 s and 30 s, then doubles up to an hour a wait", () => {
    const waits = [1, 2, 3, 4, 5, 10, 20].map((attempts) => nextRetryAt(DEFAULT_RETRY_SCHEDULE, attempts, first, first)!.getTime() - first.getTime());
    assert.deepEqual(waits, [10_000, 30_000, 60_000, 120_000, 240_000, 3_600_000, 3_600_000]);
  });
  it('schedules nothing past the horizon (24 h after the first attempt): the delivery fails', () => {
    assert.ok(nextRetryAt(DEFAULT_RETRY_SCHEDULE, 30, first, after(23 * 3_600_000)));
    assert.equal(nextRetryAt(DEFAULT_RETRY_SCHEDULE, 30, first, after(23.5 * 3_600_000)), undefined);
  });
});

describe('the signature', () => {
  const body = '{"trigger":"message_sent"}';
  it('is t=<unix>,v1=<HMAC-SHA256 of "t.body"> per secret, and verifies with either secret while both sign', () => {
    const header = signatureHeader(['new-secret', 'old-secret'], 1_700_000_000, body);
    assert.match(header, /^t=1700000000,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    assert.ok(verifySignature(header, 'new-secret', body, 1_700_000_010));
    assert.ok(verifySignature(header, 'old-secret', body, 1_700_000_010));
    assert.ok(!verifySignature(header, 'other', body, 1_700_000_010));
    assert.ok(!verifySignature(header, 'new-secret', `${body} `, 1_700_000_010));
    assert.ok(!verifySignature(header, 'new-secret', body, 1_700_000_000 + 301), 'outside the tolerance');
    assert.ok(!verifySignature('v1=abc', 'new-secret', body, 1_700_000_000), 'no timestamp');
  });
});

describe('the sender', () => {
  it('refuses a name that resolves to a loopback address, and a literal one, before any byte is sent, unless private addresses are allowed', async () => {
    let requests = 0;
    const server = http.createServer((_req, res) => {
      requests++;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const strict = new WebhookSender({ timeoutMs: 2_000, allowPrivate: false, userAgent: 'test', connectionsPerHost: 64 });
    const open = new WebhookSender({ timeoutMs: 2_000, allowPrivate: true, userAgent: 'test', connectionsPerHost: 64 });
    try {
      const byName = await strict.post(`https://localhost:${port}/hook`, '{}', {});
      assert.equal(byName.ok, false);
      assert.match(byName.error!, /refused: localhost resolves to (127\.0\.0\.1|::1), not a public address/);
      for (const literal of ['127.0.0.1', '[::ffff:127.0.0.1]', '[::1]']) {
        const refused = await strict.post(`https://${literal}:${port}/hook`, '{}', {});
        assert.match(refused.error!, /refused: .* is not a public address/, literal);
      }
      assert.match((await strict.post(`http://example.com/hook`, '{}', {})).error!, /http URLs are refused/);
      assert.equal(requests, 0);
      const allowed = await open.post(`http://127.0.0.1:${port}/hook`, '{}', {});
      assert.deepEqual(allowed, { ok: true, status: 200, error: null });
      assert.equal(requests, 1);
    } finally {
      strict.close();
      open.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const server = http.createServer(() => undefined);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const sender = new WebhookSender({ timeoutMs: 200, allowPrivate: true, userAgent: 'test', connectionsPerHost: 64 });
    try {
      const result = await sender.post(`http://127.0.0.1:${(server.address() as { port: number }).port}/`, '{}', {});
      assert.deepEqual(result, { ok: false, status: null, error: 'no answer within 200 ms' });
    } finally {
      sender.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  it('sends credentials in the URL as Basic auth unless given its own, follows no redirect, and reads the status of an answer with a body', async () => {
    const seen: Array<{ url: string; authorization: string | undefined }> = [];
    const server = http.createServer((req, res) => {
      seen.push({ url: req.url!, authorization: req.headers.authorization });
      if (req.url === '/moved') return res.writeHead(302, { location: '/hook' }).end();
      res.writeHead(503).end('x'.repeat(100_000));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const port = (server.address() as { port: number }).port;
    const sender = new WebhookSender({ timeoutMs: 2_000, allowPrivate: true, userAgent: 'test', connectionsPerHost: 2 });
    try {
      assert.deepEqual(await sender.post(`http://ann:p%40ss@127.0.0.1:${port}/hook?x=1`, '{}', {}), { ok: false, status: 503, error: 'answered HTTP 503' });
      await sender.post(`http://ann:p%40ss@127.0.0.1:${port}/hook`, '{}', { authorization: 'Basic b3duOm93bg==' });
      assert.deepEqual(await sender.post(`http://127.0.0.1:${port}/moved`, '{}', {}), { ok: false, status: 302, error: 'answered HTTP 302' });
      assert.deepEqual(seen, [
        { url: '/hook?x=1', authorization: `Basic ${Buffer.from('ann:p@ss').toString('base64')}` },
        { url: '/hook', authorization: 'Basic b3duOm93bg==' },
        { url: '/moved', authorization: undefined },
      ]);
    } finally {
      sender.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
