/**
 * The management API's webhooks (docs/management-api.md): the vendor's eight webhook operations,
 * their errors, isolation between apps, and the refusal of URLs a webhook may not call.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { TRIGGERS } from '../../src/domain/events.js';
import { body, createTestApp, errorCode, managementCall, newManagementCredential, uniqueId, type ManagementCredential, type TestApp } from '../helpers/app.js';

let t: TestApp;
let cred: ManagementCredential;
before(async () => {
  t = await createTestApp();
  cred = await newManagementCredential(t);
});
after(async () => {
  await t?.close();
});

const call = (path: string, options: Parameters<typeof managementCall>[3] = {}) => managementCall(t, cred, path, options);
const hooks = (app: { appId: string }, rest = '') => `/apps/${app.appId}/webhooks${rest}`;

async function createWebhook(app = t.appA, extra: Record<string, unknown> = {}) {
  const id = uniqueId('wh');
  const response = await call(hooks(app), { method: 'POST', body: { id, name: `Hook ${id}`, webhookURL: 'https://hooks.example.com/parley', ...extra } });
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data as { id: string; signingSecret: string; [field: string]: unknown };
}

describe('create-webhook', () => {
  it("answers the vendor's fields, the defaults, and a signing secret of 32 random bytes shown this once", async () => {
    const before = Math.floor(Date.now() / 1000);
    const id = uniqueId('wh');
    const response = await call(hooks(t.appA), {
      method: 'POST',
      headers: { 'x-webhook-version': '2' },
      body: { id, name: 'Orders', webhookURL: 'https://hooks.example.com/orders' },
    });
    assert.equal(response.statusCode, 200, response.body);
    const data = body(response).data;
    assert.deepEqual(Object.keys(data), ['id', 'name', 'webhookURL', 'useBasicAuth', 'enabled', 'retryOnFailure', 'createdAt', 'updatedAt', 'signingSecret']);
    assert.equal(data.id, id);
    assert.equal(data.name, 'Orders');
    assert.equal(data.webhookURL, 'https://hooks.example.com/orders');
    assert.deepEqual([data.useBasicAuth, data.enabled, data.retryOnFailure], [false, true, false]);
    assert.ok(data.createdAt >= before && data.updatedAt === data.createdAt);
    assert.match(data.signingSecret, /^[0-9a-f]{64}$/);
    // Stored retrievable (deliveries sign with it), never answered again.
    const row = await t.database.db.selectFrom('webhooks').selectAll().where('app_id', '=', t.appA.appId).where('id', '=', id).executeTakeFirstOrThrow();
    assert.equal(row.signing_secret, data.signingSecret);
    const got = await call(hooks(t.appA, `/${id}`));
    assert.equal(got.statusCode, 200);
    assert.ok(!got.body.includes(data.signingSecret));
    const listed = await call(hooks(t.appA));
    assert.ok(!listed.body.includes(data.signingSecret));
  });

  it('keeps Basic auth credentials to send later, and never answers the password', async () => {
    const created = await createWebhook(t.appA, { useBasicAuth: true, username: 'parley', password: 's3cret-pass', retryOnFailure: true, enabled: false });
    assert.equal(created.useBasicAuth, true);
    assert.equal(created.username, 'parley');
    assert.deepEqual([created.enabled, created.retryOnFailure], [false, true]);
    assert.ok(!('password' in created));
    const row = await t.database.db.selectFrom('webhooks').select(['username', 'password']).where('app_id', '=', t.appA.appId).where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.deepEqual(row, { username: 'parley', password: 's3cret-pass' });
    const got = await call(hooks(t.appA, `/${created.id}`));
    assert.ok(!got.body.includes('s3cret-pass'));
  });

  it('refuses an id that is taken in the app, but not one taken in another app', async () => {
    const created = await createWebhook();
    const again = await call(hooks(t.appA), { method: 'POST', body: { id: created.id, name: 'Again', webhookURL: 'https://example.com/x' } });
    assert.equal(again.statusCode, 400);
    assert.equal(errorCode(again), 'ERR_BAD_REQUEST');
    assert.ok('id' in body(again).error.details);
    const elsewhere = await call(hooks(t.appB), { method: 'POST', body: { id: created.id, name: 'Same id in B', webhookURL: 'https://example.com/x' } });
    assert.equal(elsewhere.statusCode, 200, elsewhere.body);
  });

  for (const [what, payload, field] of [
    ['no id', { name: 'x', webhookURL: 'https://example.com/x' }, 'id'],
    ['no name', { id: 'x1', webhookURL: 'https://example.com/x' }, 'name'],
    ['no webhookURL', { id: 'x1', name: 'x' }, 'webhookURL'],
    ['an id with a space', { id: 'has space', name: 'x', webhookURL: 'https://example.com/x' }, 'id'],
    ['an id of 51 characters', { id: 'a'.repeat(51), name: 'x', webhookURL: 'https://example.com/x' }, 'id'],
    ['a name of 51 characters', { id: 'x1', name: 'n'.repeat(51), webhookURL: 'https://example.com/x' }, 'name'],
    ['a blank name', { id: 'x1', name: '   ', webhookURL: 'https://example.com/x' }, 'name'],
    ['a URL of 256 characters', { id: 'x1', name: 'x', webhookURL: `https://example.com/${'p'.repeat(236)}` }, 'webhookURL'],
    ['a URL that is not one', { id: 'x1', name: 'x', webhookURL: 'not a url' }, 'webhookURL'],
    ['an ftp URL', { id: 'x1', name: 'x', webhookURL: 'ftp://example.com/x' }, 'webhookURL'],
    ['a URL with a user and password', { id: 'x1', name: 'x', webhookURL: 'https://user:pw@example.com/x' }, 'webhookURL'],
    ['enabled as a string', { id: 'x1', name: 'x', webhookURL: 'https://example.com/x', enabled: 'yes' }, 'enabled'],
    ['Basic auth without a password', { id: 'x1', name: 'x', webhookURL: 'https://example.com/x', useBasicAuth: true, username: 'u' }, 'password'],
    ['Basic auth without a user name', { id: 'x1', name: 'x', webhookURL: 'https://example.com/x', useBasicAuth: true, password: 'p' }, 'username'],
    ['a password of 101 characters', { id: 'x1', name: 'x', webhookURL: 'https://example.com/x', password: 'p'.repeat(101) }, 'password'],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST naming ${field}`, async () => {
      const response = await call(hooks(t.appA), { method: 'POST', body: payload });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.ok(field in (body(response).error.details ?? {}), response.body);
    });
  }

  it('refuses a body that is not JSON, and an array, with a 4xx in the vendor shape', async () => {
    const xml = await call(hooks(t.appA), { method: 'POST', body: '<id>x</id>', headers: { 'content-type': 'application/xml' } });
    assert.equal(xml.statusCode, 415);
    assert.equal(errorCode(xml), 'ERR_UNSUPPORTED_MEDIA_TYPE');
    const text = await call(hooks(t.appA), { method: 'POST', body: 'id=x', headers: { 'content-type': 'text/plain' } });
    assert.equal(text.statusCode, 400);
    assert.equal(errorCode(text), 'ERR_BAD_REQUEST');
    const broken = await call(hooks(t.appA), { method: 'POST', body: '{"id":', headers: { 'content-type': 'application/json' } });
    assert.equal(broken.statusCode, 400);
    assert.equal(errorCode(broken), 'ERR_BAD_REQUEST');
    const array = await call(hooks(t.appA), { method: 'POST', body: [1, 2] });
    assert.equal(array.statusCode, 400);
    assert.equal(errorCode(array), 'ERR_BAD_REQUEST');
  });

  it('takes only the documented fields from the body: none chooses the app, secret or triggers', async () => {
    const id = uniqueId('wh');
    const response = await call(hooks(t.appA), {
      method: 'POST',
      body: { id, name: 'x', webhookURL: 'https://example.com/x', app_id: t.appB.appId, signing_secret: 'chosen', signingSecret: 'chosen', triggers: ['message_sent'] },
    });
    assert.equal(response.statusCode, 200, response.body);
    assert.notEqual(body(response).data.signingSecret, 'chosen');
    const rows = await t.database.db.selectFrom('webhooks').select(['app_id', 'triggers']).where('id', '=', id).execute();
    assert.deepEqual(rows, [{ app_id: t.appA.appId, triggers: [] }]);
  });

  it('refuses a 26th webhook in an app with ERR_PLAN_QUOTA_RESTRICTION, also when they are created at once', async () => {
    const app = await t.services.apps.create({ appId: '', requestId: 't', log: silentLogger }, { name: 'Webhook quota' });
    const responses = await Promise.all(Array.from({ length: 30 }, (_, i) => call(hooks(app), { method: 'POST', body: { id: `quota-${i}`, name: `q${i}`, webhookURL: 'https://example.com/q' } })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 25);
    const refused = responses.filter((r) => r.statusCode !== 200);
    assert.ok(
      refused.every((r) => r.statusCode === 403 && errorCode(r) === 'ERR_PLAN_QUOTA_RESTRICTION'),
      refused.map((r) => r.body).join('\n'),
    );
  });
});

describe('list-webhooks and get-webhook', () => {
  it('lists the app’s webhooks oldest first with the vendor’s meta.pagination, searches names, and pages', async () => {
    const app = await t.services.apps.create({ appId: '', requestId: 't', log: silentLogger }, { name: 'Listing' });
    const made: string[] = [];
    for (const name of ['Alpha orders', 'Beta', 'alpha refunds']) {
      const response = await call(hooks(app), { method: 'POST', body: { id: uniqueId('wh'), name, webhookURL: 'https://example.com/x' } });
      assert.equal(response.statusCode, 200, response.body);
      made.push(body(response).data.id);
    }
    const all = body(await call(hooks(app)));
    assert.deepEqual(
      all.data.map((w: { id: string }) => w.id),
      made,
    );
    assert.deepEqual(all.meta, { pagination: { total: 3, count: 3, per_page: 100, current_page: 1, total_pages: 1 } });
    const search = body(await call(hooks(app), { query: { searchKey: 'ALPHA' } }));
    assert.deepEqual(
      search.data.map((w: { name: string }) => w.name),
      ['Alpha orders', 'alpha refunds'],
    );
    const page = body(await call(hooks(app), { query: { perPage: '2', page: '2' } }));
    assert.deepEqual(
      page.data.map((w: { id: string }) => w.id),
      [made[2]],
    );
    assert.deepEqual(page.meta.pagination, { total: 3, count: 1, per_page: 2, current_page: 2, total_pages: 2 });
    const wildcard = body(await call(hooks(app), { query: { searchKey: '%' } }));
    assert.equal(wildcard.data.length, 0, 'LIKE wildcards match literally');
  });

  it('refuses a perPage out of range', async () => {
    for (const perPage of ['0', '1001', 'many']) {
      const response = await call(hooks(t.appA), { query: { perPage } });
      assert.equal(response.statusCode, 400, perPage);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
  });

  it('gets one webhook, and answers ERR_WEBHOOK_NOT_FOUND for an unknown id', async () => {
    const created = await createWebhook();
    const got = await call(hooks(t.appA, `/${created.id}`));
    assert.equal(got.statusCode, 200);
    const { signingSecret: _secret, ...shown } = created;
    assert.deepEqual(body(got).data, shown);
    for (const id of ['no-such-hook', 'bad id!', 'x'.repeat(100)]) {
      const missing = await call(hooks(t.appA, `/${encodeURIComponent(id)}`));
      assert.equal(missing.statusCode, 404, id);
      assert.equal(errorCode(missing), 'ERR_WEBHOOK_NOT_FOUND');
    }
  });
});

describe('update-webhook', () => {
  it('changes the fields given and moves updatedAt, keeping the others', async () => {
    const created = await createWebhook();
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const response = await call(hooks(t.appA, `/${created.id}`), { method: 'PUT', body: { name: 'Renamed', enabled: false, webhookURL: 'https://other.example.com/in' } });
    assert.equal(response.statusCode, 200, response.body);
    const data = body(response).data;
    assert.equal(data.name, 'Renamed');
    assert.equal(data.enabled, false);
    assert.equal(data.webhookURL, 'https://other.example.com/in');
    assert.equal(data.retryOnFailure, created.retryOnFailure);
    assert.equal(data.createdAt, created.createdAt);
    assert.ok(data.updatedAt > (created.updatedAt as number));
    assert.deepEqual(body(await call(hooks(t.appA, `/${created.id}`))).data, data);
  });

  it('turns Basic auth on only with a user name and password, given now or before', async () => {
    const created = await createWebhook();
    const without = await call(hooks(t.appA, `/${created.id}`), { method: 'PUT', body: { useBasicAuth: true } });
    assert.equal(without.statusCode, 400);
    assert.deepEqual(Object.keys(body(without).error.details).sort(), ['password', 'requestId', 'username']);
    const given = await call(hooks(t.appA, `/${created.id}`), { method: 'PUT', body: { useBasicAuth: true, username: 'u', password: 'p' } });
    assert.equal(given.statusCode, 200, given.body);
    const off = await call(hooks(t.appA, `/${created.id}`), { method: 'PUT', body: { useBasicAuth: false } });
    assert.equal(body(off).data.useBasicAuth, false);
    const onAgain = await call(hooks(t.appA, `/${created.id}`), { method: 'PUT', body: { useBasicAuth: true } });
    assert.equal(onAgain.statusCode, 200, 'the stored user name and password serve');
    assert.equal(body(onAgain).data.username, 'u');
  });

  it('refuses a bad URL and a bad name, changing nothing', async () => {
    const created = await createWebhook();
    for (const payload of [{ webhookURL: 'ftp://example.com/x', name: 'x' }, { name: '' }, { name: '   ' }, { retryOnFailure: 'always' }]) {
      const response = await call(hooks(t.appA, `/${created.id}`), { method: 'PUT', body: payload });
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
    }
    const { signingSecret: _secret, ...shown } = created;
    assert.deepEqual(body(await call(hooks(t.appA, `/${created.id}`))).data, shown);
  });

  it('answers ERR_WEBHOOK_NOT_FOUND for an unknown id', async () => {
    const response = await call(hooks(t.appA, '/nope'), { method: 'PUT', body: { name: 'x' } });
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_WEBHOOK_NOT_FOUND');
  });
});

describe('delete-webhook', () => {
  it('deletes the webhook with the vendor’s answer; then it is not found', async () => {
    const created = await createWebhook();
    const response = await call(hooks(t.appA, `/${created.id}`), { method: 'DELETE' });
    assert.equal(response.statusCode, 200);
    assert.deepEqual(body(response), { data: { success: true, message: 'Deleted Webhook successfully.' } });
    const again = await call(hooks(t.appA, `/${created.id}`), { method: 'DELETE' });
    assert.equal(again.statusCode, 404);
    assert.equal(errorCode(again), 'ERR_WEBHOOK_NOT_FOUND');
    assert.equal((await call(hooks(t.appA, `/${created.id}`))).statusCode, 404);
  });
});

describe('triggers', () => {
  it('adds triggers with an answer per trigger, lists them with descriptions, and removes them', async () => {
    const created = await createWebhook();
    const path = hooks(t.appA, `/${created.id}/triggers`);
    const added = await call(path, { method: 'POST', body: { triggerIds: ['message_read_receipt', 'message_delivery_receipt', 'message_read_receipt'] } });
    assert.equal(added.statusCode, 200, added.body);
    assert.deepEqual(body(added), {
      data: {
        message_delivery_receipt: { success: true, message: 'Triggers has been added successfully.' },
        message_read_receipt: { success: true, message: 'Triggers has been added successfully.' },
      },
    });
    // Adding one it has already is no error.
    assert.equal((await call(path, { method: 'POST', body: { triggerIds: ['message_sent', 'message_read_receipt'] } })).statusCode, 200);
    const listed = body(await call(path));
    assert.deepEqual(
      listed.data.map((trigger: { id: string }) => trigger.id),
      ['message_delivery_receipt', 'message_read_receipt', 'message_sent'],
    );
    assert.ok(listed.data.every((trigger: { description: string }) => trigger.description.length > 10));
    assert.deepEqual(listed.meta, { pagination: { total: 3, count: 3, per_page: 100, current_page: 1, total_pages: 1 } });
    const removed = await call(path, { method: 'DELETE', body: { triggerIds: ['message_sent', 'group_created'] } });
    assert.equal(removed.statusCode, 200, removed.body);
    assert.deepEqual(body(removed), { data: { success: true, message: 'Removed trigger successfully.' } });
    assert.deepEqual(
      body(await call(path)).data.map((trigger: { id: string }) => trigger.id),
      ['message_delivery_receipt', 'message_read_receipt'],
    );
  });

  it('accepts every trigger of messages, users and groups', async () => {
    const created = await createWebhook();
    const path = hooks(t.appA, `/${created.id}/triggers`);
    assert.equal((await call(path, { method: 'POST', body: { triggerIds: [...TRIGGERS] } })).statusCode, 200);
    assert.deepEqual(
      body(await call(path)).data.map((trigger: { id: string }) => trigger.id),
      [...TRIGGERS].sort(),
    );
  });

  for (const names of [['message_sent', 'no_such_trigger'], ['call_initiated'], ['before_message']]) {
    it(`refuses ${names.join(', ')} with ERR_TRIGGER_NOT_FOUND, adding nothing`, async () => {
      const created = await createWebhook();
      const path = hooks(t.appA, `/${created.id}/triggers`);
      for (const method of ['POST', 'DELETE'] as const) {
        const response = await call(path, { method, body: { triggerIds: names } });
        assert.equal(response.statusCode, 404, response.body);
        assert.equal(errorCode(response), 'ERR_TRIGGER_NOT_FOUND');
        assert.match(body(response).error.message, new RegExp(names[names.length - 1]!));
      }
      assert.deepEqual(body(await call(path)).data, []);
    });
  }

  for (const [what, payload] of [
    ['no triggerIds', {}],
    ['an empty list', { triggerIds: [] }],
    ['a string instead of a list', { triggerIds: 'message_sent' }],
    ['a number in the list', { triggerIds: [5] }],
  ] as const) {
    it(`refuses ${what} with ERR_BAD_REQUEST`, async () => {
      const created = await createWebhook();
      const response = await call(hooks(t.appA, `/${created.id}/triggers`), { method: 'POST', body: payload });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    });
  }

  it('answers ERR_WEBHOOK_NOT_FOUND for the triggers of an unknown webhook', async () => {
    for (const method of ['GET', 'POST', 'DELETE'] as const) {
      const response = await call(hooks(t.appA, '/nope/triggers'), { method, ...(method === 'GET' ? {} : { body: { triggerIds: ['message_sent'] } }) });
      assert.equal(response.statusCode, 404, method);
      assert.equal(errorCode(response), 'ERR_WEBHOOK_NOT_FOUND');
    }
  });
});

describe('isolation between apps', () => {
  it("never shows, changes or deletes app A's webhook through app B's path", async () => {
    const created = await createWebhook(t.appA);
    await call(hooks(t.appA, `/${created.id}/triggers`), { method: 'POST', body: { triggerIds: ['message_sent'] } });
    const inB = (rest: string) => hooks(t.appB, `/${created.id}${rest}`);
    const attempts = [
      call(inB('')),
      call(inB(''), { method: 'PUT', body: { name: 'taken over' } }),
      call(inB('/triggers')),
      call(inB('/triggers'), { method: 'POST', body: { triggerIds: ['group_created'] } }),
      call(inB('/triggers'), { method: 'DELETE', body: { triggerIds: ['message_sent'] } }),
      call(inB(''), { method: 'DELETE' }),
    ];
    for (const response of await Promise.all(attempts)) {
      assert.equal(response.statusCode, 404, response.body);
      assert.equal(errorCode(response), 'ERR_WEBHOOK_NOT_FOUND');
    }
    const listB = body(await call(hooks(t.appB)));
    assert.ok(!listB.data.some((w: { id: string }) => w.id === created.id));
    const stillA = body(await call(hooks(t.appA, `/${created.id}`))).data;
    assert.equal(stillA.name, created.name);
    assert.deepEqual(
      body(await call(hooks(t.appA, `/${created.id}/triggers`))).data.map((x: { id: string }) => x.id),
      ['message_sent'],
    );
  });

  it('answers ERR_APP_NOT_FOUND for the webhooks of an app that does not exist', async () => {
    for (const appId of ['no-such-app', 'Bad_App!']) {
      for (const [method, rest] of [
        ['GET', ''],
        ['POST', ''],
        ['GET', '/x'],
        ['PUT', '/x'],
        ['DELETE', '/x'],
        ['GET', '/x/triggers'],
      ] as const) {
        const response = await call(`/apps/${encodeURIComponent(appId)}/webhooks${rest}`, {
          method,
          ...(method === 'POST' ? { body: { id: 'x', name: 'x', webhookURL: 'https://example.com/x' } } : method === 'PUT' ? { body: { name: 'x' } } : {}),
        });
        assert.equal(response.statusCode, 404, `${method} ${appId}${rest}: ${response.body}`);
        assert.equal(errorCode(response), 'ERR_APP_NOT_FOUND');
      }
    }
  });
});

describe('webhook URLs: server-side request forgery', () => {
  let strict: TestApp;
  let strictCred: ManagementCredential;
  before(async () => {
    // The deployment's default: PARLEY_WEBHOOK_ALLOW_PRIVATE unset.
    strict = await createTestApp({ webhookAllowPrivate: false });
    strictCred = await newManagementCredential(strict);
  });
  after(async () => {
    await strict?.close();
  });
  const create = (target: TestApp, credential: ManagementCredential, webhookURL: string) =>
    managementCall(target, credential, `/apps/${target.appA.appId}/webhooks`, { method: 'POST', body: { id: uniqueId('ssrf'), name: 'ssrf', webhookURL } });

  const REFUSED = [
    'http://example.com/hook',
    'https://localhost/hook',
    'https://LOCALHOST:8443/hook',
    'https://api.localhost/hook',
    'https://127.0.0.1/hook',
    'https://127.1.2.3:9000/hook',
    'https://2130706433/hook',
    'https://0x7f.1/hook',
    'https://0.0.0.0/hook',
    'https://10.1.2.3/hook',
    'https://172.16.0.1/hook',
    'https://192.168.1.10/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://100.64.0.1/hook',
    'https://[::1]/hook',
    'https://[::]/hook',
    'https://[fe80::1]/hook',
    'https://[fd00::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:a9fe:a9fe]/hook',
    'https://intranet/hook',
    'https://printer.local/hook',
    'https://db.internal/hook',
    'https://224.0.0.1/hook',
  ];
  for (const url of REFUSED) {
    it(`refuses ${url} with ERR_BAD_REQUEST naming webhookURL`, async () => {
      const response = await create(strict, strictCred, url);
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
      assert.match(body(response).error.details.webhookURL, /https|public host/);
    });
  }

  it('refuses such a URL on update too', async () => {
    const created = await create(strict, strictCred, 'https://hooks.example.com/in');
    assert.equal(created.statusCode, 200, created.body);
    const response = await managementCall(strict, strictCred, `/apps/${strict.appA.appId}/webhooks/${body(created).data.id}`, {
      method: 'PUT',
      body: { webhookURL: 'https://169.254.169.254/x' },
    });
    assert.equal(response.statusCode, 400);
    assert.ok('webhookURL' in body(response).error.details);
  });

  for (const url of ['https://hooks.example.com/in', 'https://93.184.216.34:8443/in', 'https://[2606:2800:220:1:248:1893:25c8:1946]/in', 'https://example.com./in']) {
    it(`accepts the public ${url}`, async () => {
      const response = await create(strict, strictCred, url);
      assert.equal(response.statusCode, 200, response.body);
    });
  }

  it('accepts http and loopback receivers when the deployment allows them (PARLEY_WEBHOOK_ALLOW_PRIVATE=1)', async () => {
    for (const url of ['http://127.0.0.1:9999/hook', 'https://localhost/hook', 'http://[::1]:8080/x', 'http://10.0.0.5/x']) {
      const response = await create(t, cred, url);
      assert.equal(response.statusCode, 200, `${url}: ${response.body}`);
    }
    // Other schemes stay refused.
    assert.equal((await create(t, cred, 'file:///etc/passwd')).statusCode, 400);
  });
});
