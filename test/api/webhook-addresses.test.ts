/**
 * Creating a webhook (the management API) or setting the moderation hook refuses the IPv6 forms
 * of private IPv4 addresses (IPv4-compatible, IPv4-mapped in every spelling, NAT64, 6to4,
 * Teredo) and URLs holding control characters anywhere, with the existing ERR_BAD_REQUEST naming
 * the field, storing nothing (docs/webhooks.md, "URLs and server-side request forgery").
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { body, createTestApp, errorCode, managementCall, newManagementCredential, uniqueId, type ManagementCredential, type TestApp } from '../helpers/app.js';

const PRIVATE_HOSTS = [
  '[::127.0.0.1]',
  '[::a00:1]',
  '[::ffff:10.0.0.1]',
  '[::ffff:a00:1]',
  '[0:0:0:0:0:ffff:7f00:1]',
  '[0000:0000:0000:0000:0000:FFFF:127.0.0.1]',
  '[::ffff:0:7f00:1]',
  '[64:ff9b::10.0.0.1]',
  '[64:ff9b::a9fe:a9fe]',
  '[2002:7f00:1::]',
  '[2002:a00:1::1]',
  '[2002:c0a8:101::1]',
  '[2001:0:4136:e378:8000:63bf:3fff:fdd2]',
];

const WITH_CONTROLS = [
  'https://hooks.example.com/in\n',
  '\thttps://hooks.example.com/in',
  'https://hooks.example.com/i\u0001n',
  'https://us\u001ber@hooks.example.com/in',
  'https://hooks.example.com/in?x=\u007f',
  'https://hooks.example.com/in?x=\u0085',
  'https://hooks.example.com/in#\u009f',
];

describe('URLs refused at creation: private addresses in IPv6 forms, control characters', () => {
  let strict: TestApp;
  let credential: ManagementCredential;
  before(async () => {
    strict = await createTestApp({ webhookAllowPrivate: false });
    credential = await newManagementCredential(strict);
  });
  after(async () => {
    await strict?.close();
  });

  const createWebhook = (webhookURL: string) => managementCall(strict, credential, `/apps/${strict.appA.appId}/webhooks`, { method: 'POST', body: { id: uniqueId('addr'), name: 'addr', webhookURL } });
  const storedUrls = async () => (await strict.database.db.selectFrom('webhooks').select('url').execute()).map((row) => row.url);
  const freshApp = () => strict.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Hook app' });

  it('create-webhook refuses them with ERR_BAD_REQUEST naming webhookURL, storing nothing', async () => {
    for (const url of [...PRIVATE_HOSTS.map((host) => `https://${host}/hook`), ...WITH_CONTROLS]) {
      const response = await createWebhook(url);
      assert.equal(response.statusCode, 400, `${JSON.stringify(url)}: ${response.body}`);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.match(body(response).error.details.webhookURL, /public host|control characters/, JSON.stringify(url));
    }
    assert.deepEqual(await storedUrls(), []);
  });

  it('update-webhook refuses them too, leaving the URL as it was', async () => {
    const created = await createWebhook('https://hooks.example.com/in');
    assert.equal(created.statusCode, 200, created.body);
    const id = body(created).data.id as string;
    for (const url of ['https://[::ffff:a9fe:a9fe]/x', 'https://[2002:a9fe:a9fe::]/x', 'https://hooks.example.com/in\u0000x', 'https://hooks.example.com/in\r']) {
      const response = await managementCall(strict, credential, `/apps/${strict.appA.appId}/webhooks/${id}`, { method: 'PUT', body: { webhookURL: url } });
      assert.equal(response.statusCode, 400, `${JSON.stringify(url)}: ${response.body}`);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
    assert.deepEqual(await storedUrls(), ['https://hooks.example.com/in']);
    // Public hosts in these forms are accepted.
    for (const url of ['https://[::ffff:808:808]/in', 'https://[2002:808:808::1]/in', 'https://[64:ff9b::8.8.8.8]/in']) {
      const response = await createWebhook(url);
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
    }
  });

  it('set-moderation-hook refuses them with ERR_BAD_REQUEST naming url, storing nothing', async () => {
    const app = await freshApp();
    for (const url of [...PRIVATE_HOSTS.map((host) => `https://${host}/moderate`), ...WITH_CONTROLS]) {
      const response = await strict.call(app, '/v3/moderation/hook', { method: 'PUT', body: { url } });
      assert.equal(response.statusCode, 400, `${JSON.stringify(url)}: ${response.body}`);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.ok(body(response).error.details?.url, JSON.stringify(url));
    }
    assert.equal((await strict.call(app, '/v3/moderation/hook')).statusCode, 404, 'no hook stored');
    const accepted = await strict.call(app, '/v3/moderation/hook', { method: 'PUT', body: { url: 'https://[::ffff:808:808]/moderate' } });
    assert.equal(accepted.statusCode, 200, accepted.body);
  });
});
