/**
 * Keyword lists (create-rule-keyword, list-rule-keywords, get-rule-keyword, update-rule-keyword,
 * delete-rule-keyword): JSON bodies and multipart forms with a CSV file, their bounds, the
 * built-in list, lists in use by rules, and one app's lists staying invisible to another.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { silentLogger } from '../../src/domain/context.js';
import { PROFANITY_WORDS } from '../../src/domain/moderation/builtins.js';
import { MODERATION_LIMITS } from '../../src/domain/moderation/rules.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, hostOf, uniqueId, type TestApp } from '../helpers/app.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const ctxOf = (app: CreatedApp) => ({ appId: app.appId, requestId: 'test', log: silentLogger });
const freshApp = () => t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Keyword lists app' });
let A: CreatedApp;
beforeEach(async () => {
  A = await freshApp();
});

interface Part {
  name: string;
  value?: string;
  filename?: string;
  content?: Buffer | string;
  contentType?: string;
}

/** A multipart/form-data body written by hand: a boundary and CRLF-separated parts. */
function form(parts: Part[]): { payload: Buffer; contentType: string } {
  const boundary = `----parley${crypto.randomBytes(8).toString('hex')}`;
  const chunks: Buffer[] = [];
  for (const part of parts) {
    const disposition = `form-data; name="${part.name}"${part.filename !== undefined ? `; filename="${part.filename}"` : ''}`;
    const headers = [`Content-Disposition: ${disposition}`];
    if (part.filename !== undefined || part.contentType) headers.push(`Content-Type: ${part.contentType ?? 'text/csv'}`);
    chunks.push(Buffer.from(`--${boundary}\r\n${headers.join('\r\n')}\r\n\r\n`));
    chunks.push(typeof part.content === 'string' || part.content === undefined ? Buffer.from(part.content ?? part.value ?? '') : part.content);
    chunks.push(Buffer.from('\r\n'));
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

const sendForm = (app: CreatedApp, method: 'POST' | 'PUT', url: string, parts: Part[]) => {
  const { payload, contentType } = form(parts);
  return t.app.inject({ method, url: `/v3${url}`, payload, headers: { 'content-type': contentType, host: hostOf(app), apikey: app.apiKey } });
};

const fields = (values: Record<string, string>): Part[] => Object.entries(values).map(([name, value]) => ({ name, value }));
const csvFile = (content: Buffer | string, filename = 'words.csv'): Part => ({ name: 'file', filename, content });

const call = (app: CreatedApp, url: string, options: Parameters<TestApp['call']>[2] = {}) => t.call(app, `/v3${url}`, options);

function ok(response: LightMyRequestResponse): any {
  assert.equal(response.statusCode, 200, response.body);
  return body(response);
}

function refused(response: LightMyRequestResponse, status: number, code: string, field?: string): Record<string, string> {
  assert.equal(response.statusCode, status, response.body);
  const error = body(response).error;
  assert.equal(error.code, code);
  if (field !== undefined)
    assert.ok(
      Object.keys(error.details ?? {}).some((key) => key.startsWith(field)),
      JSON.stringify(error.details),
    );
  return error.details ?? {};
}

const createList = (app: CreatedApp, list: Record<string, unknown>) => call(app, '/moderation/keywords', { method: 'POST', body: list });
const getList = (app: CreatedApp, id: string) => call(app, `/moderation/keywords/${id}`);
const listLists = (app: CreatedApp, query: Record<string, string> = {}) => call(app, '/moderation/keywords', { query });
const version = async (app: CreatedApp) => (await t.services.moderationRules.setup(ctxOf(app))).version;
const wordList = (id = uniqueId('list'), terms: unknown = ['alpha', 'beta']) => ({ id, name: 'Words', searchTerms: terms });

describe('create-rule-keyword', () => {
  it('creates a list from JSON, in the vendor’s shape: terms trimmed, empty and repeated ones (any case) left out', async () => {
    const list = ok(
      await createList(A, { id: 'profane-word-list-1', name: 'profane word list', description: 'Profane word list', searchTerms: [' Alpha ', 'beta', '', 'ALPHA', 'gamma', 'beta '] }),
    ).data;
    assert.deepEqual(list, {
      id: 'profane-word-list-1',
      name: 'profane word list',
      description: 'Profane word list',
      category: 'word',
      isCSV: false,
      searchTerms: ['Alpha', 'beta', 'gamma'],
      createdAt: list.createdAt,
      updatedAt: list.createdAt,
      revisionId: `${A.appId}_profane-word-list-1_1`,
      active: true,
    });
    assert.ok(Math.abs(list.createdAt - Date.now() / 1000) < 60);
    assert.deepEqual(ok(await getList(A, 'profane-word-list-1')).data, list);
  });

  it('reads searchTerms given as comma-separated text', async () => {
    const list = ok(await createList(A, wordList('csv-text', 'a, b,"c, d",\n e'))).data;
    assert.deepEqual(list.searchTerms, ['a', 'b', 'c, d', 'e']);
    assert.equal(list.isCSV, false);
  });

  it('takes a file only as a form part: a `file` in JSON, or a text field of that name, is no file', async () => {
    const fromJson = ok(await createList(A, { ...wordList('json-file', ['a']), file: 'b,c' })).data;
    assert.deepEqual([fromJson.searchTerms, fromJson.isCSV], [['a'], false]);
    const fromField = ok(await sendForm(A, 'POST', '/moderation/keywords', fields({ id: 'field-file', name: 'x', searchTerms: 'a', file: 'b,c' }))).data;
    assert.deepEqual([fromField.searchTerms, fromField.isCSV], [['a'], false]);
  });

  it('creates a pattern list, keeping patterns that differ only in case, and accepting one RE2 matches in linear time', async () => {
    const list = ok(await createList(A, { id: 'patterns', name: 'Patterns', category: 'pattern', searchTerms: ['[A-Z]{3}', '[a-z]{3}', '(a+)+$'] })).data;
    assert.equal(list.category, 'pattern');
    assert.deepEqual(list.searchTerms, ['[A-Z]{3}', '[a-z]{3}', '(a+)+$']);
  });

  it('creates a list from a multipart CSV file: quoted cells, commas and quotes inside quotes, a BOM, CRLF', async () => {
    const csv = Buffer.from('\ufeffalpha,"beta, gamma"\r\n"say ""hi""", delta \r\n"two\r\nlines",\r\n\r\nALPHA\r\n', 'utf8');
    const response = await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'from-csv', name: 'From CSV', description: 'Uploaded', category: 'word' }), csvFile(csv)]);
    const list = ok(response).data;
    assert.deepEqual(list.searchTerms, ['alpha', 'beta, gamma', 'say "hi"', 'delta', 'two\r\nlines']);
    assert.equal(list.isCSV, true);
    assert.equal(list.name, 'From CSV');
    assert.equal(list.description, 'Uploaded');
    assert.equal(list.revisionId, `${A.appId}_from-csv_1`);
  });

  it('creates a list from a form without a file: its searchTerms field read as CSV, a repeated field as its lines', async () => {
    const list = ok(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'form-terms', name: 'Form', searchTerms: 'a,b' }), { name: 'searchTerms', value: 'c' }])).data;
    assert.deepEqual(list.searchTerms, ['a', 'b', 'c']);
    assert.equal(list.isCSV, false);
    assert.equal(list.category, 'word');
  });

  it('refuses a malformed CSV file with ERR_BAD_REQUEST naming the line', async () => {
    for (const [csv, line] of [
      ['a,b\r\nc,"d\r\ne', 2],
      ['ok\nno"quote', 2],
      ['"a"b', 1],
    ] as const) {
      const details = refused(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'bad-csv', name: 'Bad' }), csvFile(csv)]), 400, 'ERR_BAD_REQUEST', 'file');
      assert.match(details.file!, new RegExp(`line ${line}:`));
    }
    assert.equal(errorCode(await getList(A, 'bad-csv')), 'ERR_KEYWORD_NOT_FOUND');
  });

  it('refuses a file that is not UTF-8, or holds NUL', async () => {
    refused(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'latin1', name: 'x' }), csvFile(Buffer.from([0x63, 0x61, 0x66, 0xe9]))]), 400, 'ERR_BAD_REQUEST', 'file');
    refused(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'nul', name: 'x' }), csvFile('a\u0000b')]), 400, 'ERR_BAD_REQUEST', 'file');
    refused(await sendForm(A, 'POST', '/moderation/keywords', fields({ id: 'nul', name: 'x\u0000', searchTerms: 'a' })), 400, 'ERR_BAD_REQUEST', 'name');
  });

  it('refuses a 10 MB upload with ERR_PAYLOAD_TOO_LARGE (413), and serves the next request', async () => {
    const big = Buffer.alloc(10 * 1024 * 1024, 'word,');
    refused(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'big', name: 'Big' }), csvFile(big)]), 413, 'ERR_PAYLOAD_TOO_LARGE');
    refused(await sendForm(A, 'POST', '/moderation/keywords', fields({ id: 'big', name: 'Big', searchTerms: 'w,'.repeat(3 * 1024 * 1024) })), 413, 'ERR_PAYLOAD_TOO_LARGE');
    refused(
      await createList(
        A,
        wordList(
          'big',
          Array.from({ length: 1_100_000 }, (_, i) => `w${i}`),
        ),
      ),
      413,
      'ERR_PAYLOAD_TOO_LARGE',
    );
    assert.equal(errorCode(await getList(A, 'big')), 'ERR_KEYWORD_NOT_FOUND');
    ok(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'after-big', name: 'After' }), csvFile('fine')]));
  });

  it('takes a file of almost 4 MiB', async () => {
    const terms = Array.from({ length: 80_000 }, (_, i) => `term-number-${i}-${'x'.repeat(30)}`);
    const csv = terms.join('\r\n');
    assert.ok(csv.length > 3.5 * 1024 * 1024 && csv.length < MODERATION_LIMITS.listBytes);
    const list = ok(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'large', name: 'Large' }), csvFile(csv)])).data;
    assert.equal(list.searchTerms.length, 80_000);
  });

  it('refuses a file in a part other than "file", naming it, and a second file', async () => {
    refused(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'part', name: 'x' }), { name: 'upload', filename: 'a.csv', content: 'a' }]), 400, 'ERR_BAD_REQUEST', 'upload');
    refused(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'part', name: 'x' }), csvFile('a'), csvFile('b', 'b.csv')]), 400, 'ERR_BAD_REQUEST', 'file');
    assert.equal(errorCode(await getList(A, 'part')), 'ERR_KEYWORD_NOT_FOUND');
  });

  it('refuses a malformed form, and too many fields', async () => {
    const { payload } = form(fields({ id: 'x', name: 'y' }));
    const noBoundary = await t.app.inject({ method: 'POST', url: '/v3/moderation/keywords', payload, headers: { 'content-type': 'multipart/form-data', host: hostOf(A), apikey: A.apiKey } });
    refused(noBoundary, 400, 'ERR_BAD_REQUEST');
    const truncated = form([...fields({ id: 'trunc', name: 'y' }), csvFile('a,b')]);
    const cut = await t.app.inject({
      method: 'POST',
      url: '/v3/moderation/keywords',
      payload: truncated.payload.subarray(0, truncated.payload.length - 30),
      headers: { 'content-type': truncated.contentType, host: hostOf(A), apikey: A.apiKey },
    });
    refused(cut, 400, 'ERR_BAD_REQUEST');
    const many = fields(Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`f${i}`, 'x'])));
    refused(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'many', name: 'x', searchTerms: 'a' }), ...many]), 400, 'ERR_BAD_REQUEST');
  });

  it('leaves every other route refusing a form with ERR_UNSUPPORTED_MEDIA_TYPE', async () => {
    const { payload, contentType } = form(fields({ id: 'r', name: 'x' }));
    for (const url of ['/v3/moderation/rules', '/v3/users']) {
      const response = await t.app.inject({ method: 'POST', url, payload, headers: { 'content-type': contentType, host: hostOf(A), apikey: A.apiKey } });
      refused(response, 415, 'ERR_UNSUPPORTED_MEDIA_TYPE');
    }
  });

  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an id with a space', { id: 'a b' }, 'id'],
    ['no id', { id: undefined }, 'id'],
    ['no name', { name: undefined }, 'name'],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, 'name'],
    ['a description of 256 characters', { description: 'd'.repeat(256) }, 'description'],
    ['an unknown category', { category: 'sentence-similarity' }, 'category'],
    ['no terms', { searchTerms: undefined }, 'searchTerms'],
    ['only empty terms', { searchTerms: [' ', ''] }, 'searchTerms'],
    ['100,001 terms', { searchTerms: Array.from({ length: 100_001 }, (_, i) => `t${i}`) }, 'searchTerms'],
    ['a term of 101 characters', { searchTerms: ['ok', 'w'.repeat(101)] }, 'searchTerms'],
    ['a pattern RE2 cannot parse', { category: 'pattern', searchTerms: ['(a'] }, 'searchTerms'],
    ['a pattern with a backreference', { category: 'pattern', searchTerms: ['(a)\\1'] }, 'searchTerms'],
  ];
  for (const [what, change, field] of invalid) {
    it(`refuses ${what} with ERR_BAD_REQUEST, creating nothing`, async () => {
      const list: Record<string, unknown> = { ...wordList('bad-list'), ...change };
      for (const key of Object.keys(list)) if (list[key] === undefined) delete list[key];
      refused(await createList(A, list), 400, 'ERR_BAD_REQUEST', field);
      assert.equal(errorCode(await getList(A, 'bad-list')), 'ERR_KEYWORD_NOT_FOUND');
      assert.equal(await version(A), '0');
    });
  }

  it('refuses both a file and searchTerms', async () => {
    refused(await sendForm(A, 'POST', '/moderation/keywords', [...fields({ id: 'both', name: 'x', searchTerms: 'a' }), csvFile('b')]), 400, 'ERR_BAD_REQUEST', 'file');
  });

  it('refuses an existing id with ERR_KEYWORD_ALREADY_EXISTS, the built-in list’s too; another app may use it', async () => {
    ok(await createList(A, wordList('taken')));
    for (const id of ['taken', 'profanity-list']) refused(await createList(A, wordList(id)), 400, 'ERR_KEYWORD_ALREADY_EXISTS');
    ok(await createList(t.appB, wordList('taken')));
  });

  it('gives one list when the same id is created concurrently', async () => {
    const responses = await Promise.all(Array.from({ length: 6 }, () => createList(A, wordList('race'))));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 1);
    assert.ok(responses.every((r) => r.statusCode === 200 || errorCode(r) === 'ERR_KEYWORD_ALREADY_EXISTS'));
  });

  it('allows 25 own lists per app, the built-in one not counted', async () => {
    const responses = await Promise.all(Array.from({ length: 27 }, (_, i) => createList(A, wordList(`l${i}`))));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, MODERATION_LIMITS.listsPerApp);
    assert.ok(responses.filter((r) => r.statusCode !== 200).every((r) => r.statusCode === 403 && errorCode(r) === 'ERR_PLAN_QUOTA_RESTRICTION'));
    assert.equal(ok(await listLists(A, { limit: '100' })).data.length, 26);
  });

  it(`allows ${MODERATION_LIMITS.termsPerApp} terms in the app's lists together`, async () => {
    const terms = (prefix: string) => Array.from({ length: MODERATION_LIMITS.termsPerList }, (_, i) => `${prefix}${i}`);
    ok(await createList(A, wordList('first-100k', terms('a'))));
    refused(await createList(A, wordList('second-100k', terms('b'))), 403, 'ERR_PLAN_QUOTA_RESTRICTION');
    ok(await createList(A, wordList('second-less', terms('b').slice(0, MODERATION_LIMITS.termsPerApp - MODERATION_LIMITS.termsPerList - PROFANITY_WORDS.length))));
  });
});

describe('list-rule-keywords', () => {
  it('lists the built-in list of a new app', async () => {
    const result = ok(await listLists(A));
    assert.deepEqual(result.meta, { current: { limit: 50, count: 1 } });
    const [list] = result.data;
    assert.deepEqual(
      [list.id, list.name, list.category, list.isCSV, list.default, list.active, list.revisionId],
      ['profanity-list', 'Profane Words', 'word', false, true, true, `${A.appId}_profanity-list_1`],
    );
    assert.deepEqual(list.searchTerms, PROFANITY_WORDS);
  });

  it('lists own lists newest first, before the built-in one, and pages', async () => {
    ok(await createList(A, wordList('older')));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    ok(await createList(A, wordList('newer')));
    assert.deepEqual(
      ok(await listLists(A)).data.map((l: any) => l.id),
      ['newer', 'older', 'profanity-list'],
    );
    const page = ok(await listLists(A, { limit: '2', page: '2' }));
    assert.deepEqual(
      page.data.map((l: any) => l.id),
      ['profanity-list'],
    );
    assert.deepEqual(page.meta, { current: { limit: 2, count: 1 } });
  });
});

describe('get-rule-keyword', () => {
  it('gets the built-in list', async () => {
    const list = ok(await getList(A, 'profanity-list')).data;
    assert.equal(list.default, true);
    assert.equal(list.name, 'Profane Words');
  });

  it('answers ERR_KEYWORD_NOT_FOUND for an unknown id', async () => {
    refused(await getList(A, 'no-such-list'), 404, 'ERR_KEYWORD_NOT_FOUND');
  });
});

describe('update-rule-keyword', () => {
  it('replaces the fields given as revision 2; terms given replace the terms', async () => {
    const created = ok(await createList(A, { id: 'upd', name: 'Words', description: 'Before', searchTerms: ['a', 'b'] })).data;
    const updated = ok(await call(A, '/moderation/keywords/upd', { method: 'PUT', body: { name: 'Renamed', searchTerms: ['c'] } })).data;
    assert.deepEqual([updated.name, updated.description, updated.searchTerms, updated.isCSV], ['Renamed', 'Before', ['c'], false]);
    assert.equal(updated.revisionId, `${A.appId}_upd_2`);
    assert.equal(updated.createdAt, created.createdAt);
    const fromFile = ok(await sendForm(A, 'PUT', '/moderation/keywords/upd', [csvFile('x,"y, z"')])).data;
    assert.deepEqual([fromFile.name, fromFile.searchTerms, fromFile.isCSV, fromFile.revisionId], ['Renamed', ['x', 'y, z'], true, `${A.appId}_upd_3`]);
    assert.deepEqual(ok(await getList(A, 'upd')).data, fromFile);
  });

  it('changes the built-in list as the app’s version, revision 2, still default', async () => {
    const list = ok(await call(A, '/moderation/keywords/profanity-list', { method: 'PUT', body: { searchTerms: ['darn'] } })).data;
    assert.deepEqual([list.searchTerms, list.default, list.revisionId, list.createdAt], [['darn'], true, `${A.appId}_profanity-list_2`, 1718354412]);
    assert.deepEqual(ok(await getList(t.appB, 'profanity-list')).data.searchTerms, PROFANITY_WORDS);
    const setup = await t.services.moderationRules.setup(ctxOf(A));
    assert.deepEqual(setup.lists.find((l) => l.id === 'profanity-list')!.searchTerms, ['darn']);
  });

  it('changes nothing, and keeps the version, when the update says what the list says', async () => {
    const created = ok(await createList(A, wordList('same', ['a', 'b']))).data;
    const before = await version(A);
    const again = ok(await call(A, '/moderation/keywords/same', { method: 'PUT', body: { name: 'Words', searchTerms: ['a', 'b', 'A'] } })).data;
    assert.deepEqual(again, created);
    assert.equal(await version(A), before);
  });

  it('refuses a new category for a list that rules reference, and a pattern list of words that are no patterns', async () => {
    ok(await createList(A, wordList('referenced', ['a'])));
    ok(
      await call(A, '/moderation/rules', {
        method: 'POST',
        body: { id: 'uses-it', name: 'x', conditions: [{ operand: 'text', category: 'word', operator: 'contains', isKeywordsReferencePresent: true, value: ['referenced'] }], action: 'blockMessage' },
      }),
    );
    refused(await call(A, '/moderation/keywords/referenced', { method: 'PUT', body: { category: 'pattern' } }), 400, 'ERR_KEYWORD_IN_USE');
    ok(await createList(A, wordList('unused', ['(a'])));
    refused(await call(A, '/moderation/keywords/unused', { method: 'PUT', body: { category: 'pattern' } }), 400, 'ERR_BAD_REQUEST', 'category');
    const pattern = ok(await call(A, '/moderation/keywords/unused', { method: 'PUT', body: { category: 'pattern', searchTerms: ['a+'] } })).data;
    assert.equal(pattern.category, 'pattern');
  });

  it('refuses an id in the body other than the list’s, and answers ERR_KEYWORD_NOT_FOUND for an unknown list', async () => {
    ok(await createList(A, wordList('mine')));
    refused(await call(A, '/moderation/keywords/mine', { method: 'PUT', body: { id: 'other' } }), 400, 'ERR_BAD_REQUEST', 'id');
    refused(await call(A, '/moderation/keywords/no-such-list', { method: 'PUT', body: { name: 'x' } }), 404, 'ERR_KEYWORD_NOT_FOUND');
    refused(await sendForm(A, 'PUT', '/moderation/keywords/no-such-list', fields({ name: 'x' })), 404, 'ERR_KEYWORD_NOT_FOUND');
  });
});

describe('delete-rule-keyword', () => {
  it('deletes a list no rule references, in the vendor’s words', async () => {
    ok(await createList(A, wordList('unused')));
    assert.deepEqual(ok(await call(A, '/moderation/keywords/unused', { method: 'DELETE' })), {
      data: { success: true, message: 'Keyword with id unused has been deleted successfully.' },
    });
    refused(await getList(A, 'unused'), 404, 'ERR_KEYWORD_NOT_FOUND');
    refused(await call(A, '/moderation/keywords/unused', { method: 'DELETE' }), 404, 'ERR_KEYWORD_NOT_FOUND');
  });

  it('refuses to delete a list a rule references with ERR_KEYWORD_IN_USE, naming the rule', async () => {
    ok(await createList(A, wordList('in-use')));
    ok(
      await call(A, '/moderation/rules', {
        method: 'POST',
        body: {
          id: 'referrer',
          name: 'x',
          enabled: false,
          conditions: [{ operand: 'custom', category: 'word', operator: 'contains', isKeywordsReferencePresent: true, value: ['in-use'] }],
          action: 'blockMessage',
        },
      }),
    );
    const response = await call(A, '/moderation/keywords/in-use', { method: 'DELETE' });
    refused(response, 400, 'ERR_KEYWORD_IN_USE');
    assert.match(body(response).error.message, /referrer/);
    ok(await getList(A, 'in-use'));
    ok(await call(A, '/moderation/rules/referrer', { method: 'DELETE' }));
    ok(await call(A, '/moderation/keywords/in-use', { method: 'DELETE' }));
  });

  it('deletes the built-in list once the built-in rules that reference it are gone; a list of its id may be created', async () => {
    const response = await call(A, '/moderation/keywords/profanity-list', { method: 'DELETE' });
    refused(response, 400, 'ERR_KEYWORD_IN_USE');
    assert.match(body(response).error.message, /custom-profanity-filter, text-profanity-filter/);
    ok(await call(A, '/moderation/rules/text-profanity-filter', { method: 'DELETE' }));
    ok(await call(A, '/moderation/rules/custom-profanity-filter', { method: 'DELETE' }));
    ok(await call(A, '/moderation/keywords/profanity-list', { method: 'DELETE' }));
    refused(await getList(A, 'profanity-list'), 404, 'ERR_KEYWORD_NOT_FOUND');
    assert.deepEqual(ok(await listLists(A)).data, []);
    const rule = {
      id: 'needs-list',
      name: 'x',
      conditions: [{ operand: 'text', category: 'word', operator: 'contains', isKeywordsReferencePresent: true, value: ['profanity-list'] }],
      action: 'blockMessage',
    };
    refused(await call(A, '/moderation/rules', { method: 'POST', body: rule }), 400, 'ERR_BAD_REQUEST', 'conditions[0].value');
    const own = ok(await createList(A, wordList('profanity-list', ['heck']))).data;
    assert.equal(own.default, undefined);
    ok(await call(A, '/moderation/rules', { method: 'POST', body: rule }));
    assert.ok(ok(await getList(t.appB, 'profanity-list')).data.default, 'another app keeps it');
  });
});

describe('tenant isolation of keyword lists', () => {
  it("shows another app none of this app's lists, and moves only this app's version", async () => {
    const B = await freshApp();
    ok(await createList(A, wordList('a-only')));
    ok(await call(A, '/moderation/keywords/profanity-list', { method: 'PUT', body: { name: 'Changed' } }));
    refused(await getList(B, 'a-only'), 404, 'ERR_KEYWORD_NOT_FOUND');
    refused(await call(B, '/moderation/keywords/a-only', { method: 'PUT', body: { name: 'x' } }), 404, 'ERR_KEYWORD_NOT_FOUND');
    refused(await call(B, '/moderation/keywords/a-only', { method: 'DELETE' }), 404, 'ERR_KEYWORD_NOT_FOUND');
    const rule = { id: 'b-rule', name: 'x', conditions: [{ operand: 'text', category: 'word', operator: 'contains', isKeywordsReferencePresent: true, value: ['a-only'] }], action: 'blockMessage' };
    refused(await call(B, '/moderation/rules', { method: 'POST', body: rule }), 400, 'ERR_BAD_REQUEST', 'conditions[0].value');
    const listed = ok(await listLists(B)).data;
    assert.deepEqual(
      listed.map((l: any) => [l.id, l.name]),
      [['profanity-list', 'Profane Words']],
    );
    assert.equal(await version(A), '2');
    assert.equal(await version(B), '0');
  });
});
