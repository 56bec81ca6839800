/**
 * Browser pages on other origins (docs/client-api.md, "Browsers on another origin"): the
 * origins PARLEY_CORS_ORIGINS lists get their preflights answered without a credential and
 * the CORS headers on every answer; other origins get none; without the setting, nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.js';
import { createTestApp, hostOf, type TestApp } from '../helpers/app.js';
import { asClient, newToken } from '../helpers/client.js';
import { newUids } from '../helpers/factories.js';

const PAGE = 'https://chat.example.com';
let t: TestApp;
let plain: TestApp;
before(async () => {
  [t, plain] = await Promise.all([createTestApp({ corsOrigins: [PAGE] }), createTestApp()]);
});
after(() => Promise.all([t.close(), plain.close()]));

function preflight(app: TestApp, origin: string) {
  return app.app.inject({
    method: 'OPTIONS',
    url: '/v3/messages',
    headers: { host: hostOf(app.appA), origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authtoken, content-type' },
  });
}

describe('CORS', () => {
  it("answers a listed origin's preflight 204 with the methods and the headers a token's request sends, with no credential", async () => {
    const response = await preflight(t, PAGE);
    assert.equal(response.statusCode, 204, response.body);
    assert.equal(response.headers['access-control-allow-origin'], PAGE);
    assert.match(String(response.headers['access-control-allow-methods']), /POST/);
    for (const name of ['authToken', 'appId', 'apiKey', 'onBehalfOf', 'Content-Type']) assert.match(String(response.headers['access-control-allow-headers']), new RegExp(name));
    assert.equal(response.headers['access-control-allow-credentials'], undefined);
    assert.equal(response.headers.vary, 'Origin');
  });

  it("marks a listed origin's answers, errors included, and lets the page read the request id", async () => {
    const [uid] = await newUids(t, t.appA, 1);
    const token = await newToken(t, t.appA, uid!);
    const ok = await asClient(t, t.appA, token, `/v3/users/${uid}`, { headers: { origin: PAGE } });
    assert.equal(ok.statusCode, 200, ok.body);
    assert.equal(ok.headers['access-control-allow-origin'], PAGE);
    assert.match(String(ok.headers['access-control-expose-headers']), /X-Request-Id/);
    const refused = await asClient(t, t.appA, 'not-a-token', `/v3/users/${uid}`, { headers: { origin: PAGE } });
    assert.equal(refused.statusCode, 401);
    assert.equal(refused.headers['access-control-allow-origin'], PAGE);
  });

  it('gives another origin, and a deployment without the setting, no CORS headers (their browsers refuse the answer)', async () => {
    for (const [app, origin] of [
      [t, 'https://evil.example.com'],
      [plain, PAGE],
    ] as const) {
      const response = await preflight(app, origin);
      assert.equal(response.headers['access-control-allow-origin'], undefined, origin);
      assert.equal(response.headers['access-control-allow-headers'], undefined, origin);
      assert.notEqual(response.statusCode, 204, origin);
    }
  });

  it('reads PARLEY_CORS_ORIGINS as origins or *, and refuses a path or a bad scheme', () => {
    assert.deepEqual(loadConfig({}).corsOrigins, []);
    assert.deepEqual(loadConfig({ PARLEY_CORS_ORIGINS: 'https://a.example.com, http://localhost:5173/' }).corsOrigins, ['https://a.example.com', 'http://localhost:5173']);
    assert.deepEqual(loadConfig({ PARLEY_CORS_ORIGINS: '*' }).corsOrigins, ['*']);
    for (const bad of ['https://a.example.com/app', 'ftp://a.example.com', 'a.example.com']) assert.throws(() => loadConfig({ PARLEY_CORS_ORIGINS: bad }), ConfigError, bad);
  });
});
