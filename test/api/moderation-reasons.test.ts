import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { silentLogger } from '../../src/domain/context.js';
import { BUILT_IN_REASON_IDS } from '../../src/domain/moderation/reasons.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

/** A new app: each test starts with only the built-in reasons (an app holds at most 100 of its own). */
const freshApp = () => t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Fresh app' });
let A: CreatedApp;
beforeEach(async () => {
  A = await freshApp();
});

const listReasons = async (app = A) => {
  const response = await t.call(app, '/v3/moderation/reasons');
  assert.equal(response.statusCode, 200, response.body);
  return body(response);
};
const createReason = (payload: Record<string, unknown>, app = A) => t.call(app, '/v3/moderation/reasons', { method: 'POST', body: payload });
const newReason = async (fields: Record<string, unknown> = {}, app = A) => {
  const response = await createReason({ id: uniqueId('reason'), name: 'A reason', ...fields }, app);
  assert.equal(response.statusCode, 200, response.body);
  return body(response).data;
};
const expectError = (response: { statusCode: number; body: string }, status: number, code: string) => {
  assert.equal(response.statusCode, status, response.body);
  assert.equal(errorCode(response as never), code, response.body);
};

describe('create-reason', () => {
  it('creates a reason with an id, a name and a description, and answers it', async () => {
    const response = await createReason({ id: 'Unfiltered-content_1', name: 'RawContent', description: 'Content delivered without moderation.' });
    assert.equal(response.statusCode, 200, response.body);
    const reason = body(response).data;
    assert.deepEqual(Object.keys(reason).sort(), ['createdAt', 'default', 'description', 'id', 'name', 'updatedAt']);
    assert.equal(reason.id, 'Unfiltered-content_1', 'the id is kept as sent');
    assert.equal(reason.name, 'RawContent');
    assert.equal(reason.description, 'Content delivered without moderation.');
    assert.ok(Number.isInteger(reason.createdAt) && Math.abs(reason.createdAt - Date.now() / 1000) < 60);
    assert.equal(reason.updatedAt, reason.createdAt);
    assert.equal(reason.default, false);
    assert.deepEqual(body(await t.call(A, '/v3/moderation/reasons/Unfiltered-content_1')).data, reason);
  });

  it('creates a reason without a description', async () => {
    const reason = await newReason({ name: 'Plain' });
    assert.equal(reason.description, undefined);
  });

  it('refuses an existing id, a built-in one included, with ERR_REASON_ALREADY_EXISTS; ids are case-sensitive', async () => {
    const reason = await newReason();
    for (const id of [reason.id, 'spam', 'other']) expectError(await createReason({ id, name: 'Again' }), 400, 'ERR_REASON_ALREADY_EXISTS');
    assert.equal(body(await t.call(A, `/v3/moderation/reasons/${reason.id}`)).data.name, 'A reason');
    assert.equal((await newReason({ id: reason.id.toUpperCase() })).id, reason.id.toUpperCase());
  });

  it('gives one reason when the same id is created concurrently', async () => {
    const id = uniqueId('race');
    const responses = await Promise.all(Array.from({ length: 6 }, () => createReason({ id, name: 'Race' })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 1);
    assert.ok(
      responses.every((r) => r.statusCode === 200 || errorCode(r) === 'ERR_REASON_ALREADY_EXISTS'),
      responses.map((r) => r.body).join('\n'),
    );
    assert.equal((await listReasons()).data.filter((r: any) => r.id === id).length, 1);
  });

  it('allows 100 reasons of the app’s own, the built-in ones aside, also when created concurrently', async () => {
    const responses = await Promise.all(Array.from({ length: 105 }, (_, i) => createReason({ id: `r${i}`, name: `R${i}` })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 100);
    const refused = responses.filter((r) => r.statusCode !== 200);
    assert.ok(
      refused.every((r) => r.statusCode === 403 && errorCode(r) === 'ERR_PLAN_QUOTA_RESTRICTION'),
      refused[0]?.body,
    );
    const listed = await listReasons();
    assert.equal(listed.data.length, 100 + BUILT_IN_REASON_IDS.length);
    assert.deepEqual(listed.meta, { current: { limit: 100 + BUILT_IN_REASON_IDS.length, count: 100 + BUILT_IN_REASON_IDS.length } });
    // Changing a built-in reason does not count; deleting one of the app's own makes room.
    assert.equal((await t.call(A, '/v3/moderation/reasons/spam', { method: 'PUT', body: { name: 'Junk' } })).statusCode, 200);
    expectError(await createReason({ id: 'one-more', name: 'x' }), 403, 'ERR_PLAN_QUOTA_RESTRICTION');
    const kept = listed.data.find((r: any) => !r.default).id;
    assert.equal((await t.call(A, `/v3/moderation/reasons/${kept}`, { method: 'DELETE' })).statusCode, 200);
    assert.equal((await newReason({ id: 'one-more' })).id, 'one-more');
  });

  it('needs a fullAccess key', async () => {
    expectError(await t.call(A, '/v3/moderation/reasons', { method: 'POST', key: 'auth', body: { id: uniqueId(), name: 'x' } }), 403, 'AUTH_ERR_NO_ACCESS');
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['no id', { name: 'x' }, 'id'],
    ['no name', { id: 'r' }, 'name'],
    ['an empty name', { id: 'r', name: '' }, 'name'],
    ['an id with a space', { id: 'a b', name: 'x' }, 'id'],
    ['an id with a dot', { id: 'a.b', name: 'x' }, 'id'],
    ['an empty id', { id: '', name: 'x' }, 'id'],
    ['an id of 101 characters', { id: 'r'.repeat(101), name: 'x' }, 'id'],
    ['a name of 101 characters', { id: 'r', name: 'n'.repeat(101) }, 'name'],
    ['a description of 256 characters', { id: 'r', name: 'x', description: 'd'.repeat(256) }, 'description'],
  ];
  for (const [what, payload, field] of invalid) {
    it(`refuses ${what} with ERR_BAD_REQUEST, creating nothing`, async () => {
      const response = await createReason(payload);
      assert.equal(response.statusCode, 400, response.body);
      const error = body(response).error;
      assert.equal(error.code, 'ERR_BAD_REQUEST');
      assert.ok(
        Object.keys(error.details).some((key) => key.startsWith(field)),
        JSON.stringify(error.details),
      );
      assert.equal((await listReasons()).data.length, BUILT_IN_REASON_IDS.length);
    });
  }
});

describe('list-reasons', () => {
  it('lists the built-in reasons of a new app, which nobody created, with the app’s creation time', async () => {
    const result = await listReasons();
    assert.deepEqual(
      result.data.map((r: any) => r.id),
      [...BUILT_IN_REASON_IDS],
    );
    assert.deepEqual(result.data.map((r: any) => r.id).slice(0, 3), ['spam', 'harassment', 'hate-speech']);
    for (const reason of result.data) {
      assert.equal(reason.default, true);
      assert.ok(reason.name.length > 0 && reason.description.length > 0);
      assert.ok(Number.isInteger(reason.createdAt) && Math.abs(reason.createdAt - Date.now() / 1000) < 60);
      assert.equal(reason.updatedAt, reason.createdAt);
    }
    assert.deepEqual(result.meta.current.count, BUILT_IN_REASON_IDS.length);
  });

  it('lists the built-in reasons first, then the app’s own, oldest first', async () => {
    const first = await newReason({ id: 'zz-first' });
    const second = await newReason({ id: 'aa-second' });
    const ids = (await listReasons()).data.map((r: any) => r.id);
    assert.deepEqual(ids, [...BUILT_IN_REASON_IDS, first.id, second.id]);
  });
});

describe('get-reason-details', () => {
  it('gets a built-in reason', async () => {
    const reason = body(await t.call(A, '/v3/moderation/reasons/harassment')).data;
    assert.equal(reason.id, 'harassment');
    assert.equal(reason.name, 'Harassment');
    assert.equal(reason.default, true);
  });

  it('answers ERR_REASON_NOT_FOUND for an unknown id, an id no reason can have, and another case', async () => {
    for (const id of ['nope', 'a.b', 'x'.repeat(150), 'SPAM', '%20']) expectError(await t.call(A, `/v3/moderation/reasons/${id}`), 404, 'ERR_REASON_NOT_FOUND');
  });
});

describe('update-reason-details', () => {
  it('updates the name and the description of the app’s own reason', async () => {
    const reason = await newReason({ description: 'Before' });
    const response = await t.call(A, `/v3/moderation/reasons/${reason.id}`, { method: 'PUT', body: { name: 'Updated name' } });
    assert.equal(response.statusCode, 200, response.body);
    const updated = body(response).data;
    assert.equal(updated.name, 'Updated name');
    assert.equal(updated.description, 'Before');
    assert.equal(updated.createdAt, reason.createdAt);
    assert.ok(updated.updatedAt >= reason.updatedAt);
    const described = body(await t.call(A, `/v3/moderation/reasons/${reason.id}`, { method: 'PUT', body: { description: 'After' } })).data;
    assert.equal(described.name, 'Updated name');
    assert.equal(described.description, 'After');
    assert.deepEqual(body(await t.call(A, `/v3/moderation/reasons/${reason.id}`)).data, described);
  });

  it('updates a built-in reason for this app only: it stays built in', async () => {
    const before = body(await t.call(A, '/v3/moderation/reasons/spam')).data;
    const response = await t.call(A, '/v3/moderation/reasons/spam', { method: 'PUT', body: { name: 'Junk mail' } });
    assert.equal(response.statusCode, 200, response.body);
    const updated = body(response).data;
    assert.deepEqual([updated.id, updated.name, updated.description, updated.default], ['spam', 'Junk mail', before.description, true]);
    assert.equal(updated.createdAt, before.createdAt);
    const listed = (await listReasons()).data;
    assert.deepEqual(
      listed.map((r: any) => r.id),
      [...BUILT_IN_REASON_IDS],
      'still in its place',
    );
    assert.equal(listed[0].name, 'Junk mail');
    const other = await freshApp();
    assert.equal(body(await t.call(other, '/v3/moderation/reasons/spam')).data.name, 'Spam');
  });

  it('answers ERR_REASON_NOT_FOUND for an unknown or deleted reason, and ERR_BAD_REQUEST for an empty or bad body', async () => {
    expectError(await t.call(A, '/v3/moderation/reasons/nope', { method: 'PUT', body: { name: 'x' } }), 404, 'ERR_REASON_NOT_FOUND');
    assert.equal((await t.call(A, '/v3/moderation/reasons/violence', { method: 'DELETE' })).statusCode, 200);
    expectError(await t.call(A, '/v3/moderation/reasons/violence', { method: 'PUT', body: { name: 'x' } }), 404, 'ERR_REASON_NOT_FOUND');
    expectError(await t.call(A, '/v3/moderation/reasons/spam', { method: 'PUT', body: {} }), 400, 'ERR_BAD_REQUEST');
    expectError(await t.call(A, '/v3/moderation/reasons/spam', { method: 'PUT', body: { name: '' } }), 400, 'ERR_BAD_REQUEST');
    expectError(await t.call(A, '/v3/moderation/reasons/spam', { method: 'PUT', body: { description: 'd'.repeat(256) } }), 400, 'ERR_BAD_REQUEST');
  });
});

describe('delete-reason', () => {
  it('deletes the app’s own reason, answering success and message at the top level', async () => {
    const reason = await newReason();
    const response = await t.call(A, `/v3/moderation/reasons/${reason.id}`, { method: 'DELETE' });
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response), { success: true, message: `The reason with id ${reason.id} has been deleted successfully.` });
    expectError(await t.call(A, `/v3/moderation/reasons/${reason.id}`), 404, 'ERR_REASON_NOT_FOUND');
    expectError(await t.call(A, `/v3/moderation/reasons/${reason.id}`, { method: 'DELETE' }), 404, 'ERR_REASON_NOT_FOUND');
  });

  it('deletes a built-in reason, changed or not, for this app only; its id can then be created again', async () => {
    assert.deepEqual(body(await t.call(A, '/v3/moderation/reasons/spam', { method: 'DELETE' })), { success: true, message: 'The reason with id spam has been deleted successfully.' });
    assert.equal((await t.call(A, '/v3/moderation/reasons/other', { method: 'PUT', body: { name: 'Else' } })).statusCode, 200);
    assert.equal((await t.call(A, '/v3/moderation/reasons/other', { method: 'DELETE' })).statusCode, 200);
    const ids = (await listReasons()).data.map((r: any) => r.id);
    assert.ok(!ids.includes('spam') && !ids.includes('other'), ids.join());
    for (const id of ['spam', 'other']) {
      expectError(await t.call(A, `/v3/moderation/reasons/${id}`), 404, 'ERR_REASON_NOT_FOUND');
      expectError(await t.call(A, `/v3/moderation/reasons/${id}`, { method: 'DELETE' }), 404, 'ERR_REASON_NOT_FOUND');
    }
    assert.equal(body(await t.call(t.appB, '/v3/moderation/reasons/spam')).data.name, 'Spam', 'another app keeps it');
    const again = await newReason({ id: 'spam', name: 'Spam again' });
    assert.deepEqual([again.id, again.name, again.description], ['spam', 'Spam again', undefined]);
    assert.equal(body(await t.call(A, '/v3/moderation/reasons/spam')).data.name, 'Spam again');
  });

  it('answers ERR_REASON_NOT_FOUND for an unknown id', async () => {
    expectError(await t.call(A, '/v3/moderation/reasons/nope', { method: 'DELETE' }), 404, 'ERR_REASON_NOT_FOUND');
  });
});

describe('reasons and tenants', () => {
  it('shows, changes and deletes none of another app’s reasons', async () => {
    const reason = await newReason({ name: 'Only in A' });
    const B = await freshApp();
    assert.ok(!(await listReasons(B)).data.some((r: any) => r.id === reason.id));
    expectError(await t.call(B, `/v3/moderation/reasons/${reason.id}`), 404, 'ERR_REASON_NOT_FOUND');
    expectError(await t.call(B, `/v3/moderation/reasons/${reason.id}`, { method: 'PUT', body: { name: 'B' } }), 404, 'ERR_REASON_NOT_FOUND');
    expectError(await t.call(B, `/v3/moderation/reasons/${reason.id}`, { method: 'DELETE' }), 404, 'ERR_REASON_NOT_FOUND');
    assert.equal(body(await t.call(A, `/v3/moderation/reasons/${reason.id}`)).data.name, 'Only in A');
    // B may use the same id for a reason of its own.
    assert.equal((await newReason({ id: reason.id, name: 'In B' }, B)).name, 'In B');
    assert.equal(body(await t.call(A, `/v3/moderation/reasons/${reason.id}`)).data.name, 'Only in A');
  });
});
