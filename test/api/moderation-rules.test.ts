/**
 * Moderation rules (create-rule, list-rules, get-rule, update-rule, delete-rule,
 * list-rule-revisions): the vendor's shapes, the built-in rules, revisions, the app's moderation
 * version, the management credential, and one app's rules staying invisible to another.
 */
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { silentLogger } from '../../src/domain/context.js';
import { MODERATION_LIMITS } from '../../src/domain/moderation/rules.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { body, createTestApp, errorCode, newManagementCredential, uniqueId, type ManagementCredential, type TestApp } from '../helpers/app.js';

let t: TestApp;
let cred: ManagementCredential;
before(async () => {
  t = await createTestApp();
  cred = await newManagementCredential(t);
});
after(async () => {
  await t.close();
});

const ctxOf = (app: CreatedApp) => ({ appId: app.appId, requestId: 'test', log: silentLogger });
/** A new app: built-in rules change and the limits count per app, so each test starts with one of its own. */
const freshApp = () => t.services.apps.create({ appId: '', requestId: 'test', log: silentLogger }, { name: 'Moderation app' });
let A: CreatedApp;
beforeEach(async () => {
  A = await freshApp();
});

const BUILTIN_IDS = ['text-profanity-filter', 'image-moderation', 'video-moderation', 'custom-profanity-filter', 'contact_details_filter', 'email_filter', 'link_filter'];

/** The vendor's create-rule example. */
const VIDEO_RULE = {
  id: 'moderation-test',
  name: 'Video Moderation',
  description: 'AI-powered video moderation to detect unsafe content.',
  enabled: true,
  conditions: [
    {
      id: 1,
      isKeywordsReferencePresent: false,
      isMediaPresent: true,
      entity: 'message',
      operand: 'image',
      category: 'word',
      operator: 'contains',
      value: ['violence_greaterThan_30'],
      message: ['Image contains violence with confidence greater than 30'],
    },
  ],
  action: ['blockMessage'],
};

const textRule = (id = uniqueId('rule'), extra: Record<string, unknown> = {}) => ({
  id,
  name: 'Paris filter',
  conditions: [{ operand: 'text', category: 'word', operator: 'contains', value: ['paris'] }],
  action: 'blockMessage',
  ...extra,
});

const call = (app: CreatedApp, url: string, options: Parameters<TestApp['call']>[2] = {}) => t.call(app, `/v3${url}`, options);

async function ok(response: LightMyRequestResponse): Promise<any> {
  assert.equal(response.statusCode, 200, response.body);
  return body(response);
}

const createRule = async (app: CreatedApp, rule: Record<string, unknown>) => (await ok(await call(app, '/moderation/rules', { method: 'POST', body: rule }))).data;
const getRule = (app: CreatedApp, id: string) => call(app, `/moderation/rules/${id}`);
const listRules = async (app: CreatedApp, query: Record<string, string> = {}) => ok(await call(app, '/moderation/rules', { query }));
const revisions = async (app: CreatedApp, id: string, query: Record<string, string> = {}) => ok(await call(app, `/moderation/rules/${id}/revisions`, { query }));
const version = async (app: CreatedApp) => (await t.services.moderationRules.setup(ctxOf(app))).version;

describe('create-rule', () => {
  it("creates the vendor example's rule and answers in its shape", async () => {
    const rule = await createRule(A, VIDEO_RULE);
    assert.deepEqual(Object.keys(rule).sort(), ['action', 'active', 'conditions', 'createdAt', 'description', 'enabled', 'id', 'name', 'revisionId', 'updatedAt']);
    assert.equal(rule.revisionId, `${A.appId}_moderation-test_1`);
    assert.equal(rule.active, true);
    assert.equal(rule.enabled, true);
    assert.deepEqual(rule.action, ['blockMessage']);
    assert.ok(Math.abs(rule.createdAt - Date.now() / 1000) < 60);
    assert.equal(rule.updatedAt, rule.createdAt);
    const [condition] = rule.conditions;
    assert.deepEqual({ ...condition, reason: undefined }, { ...VIDEO_RULE.conditions[0], evaluated: false, reason: undefined });
    assert.match(condition.reason, /model/);
    assert.deepEqual((await ok(await getRule(A, 'moderation-test'))).data, rule);
  });

  it('fills in the defaults: numbered conditions, entity message, isMediaPresent by operand, enabled, a value and an action given as strings', async () => {
    const rule = await createRule(A, {
      id: 'defaults',
      name: 'Defaults',
      conditions: [
        { operand: 'text', category: 'word', operator: 'contains', value: ' paris ' },
        { operand: 'custom', category: 'pattern', operator: 'equals', value: 'a+b' },
        { operand: 'video', category: 'word', operator: 'contains', value: ['AnyOf_greaterThan_30'] },
      ],
      action: 'dropMessage',
    });
    assert.equal(rule.enabled, true);
    assert.deepEqual(rule.action, ['dropMessage']);
    assert.deepEqual(
      rule.conditions.map((c: any) => [c.id, c.entity, c.isMediaPresent, c.isKeywordsReferencePresent, c.value, c.evaluated]),
      [
        [1, 'message', false, false, ['paris'], true],
        [2, 'message', false, false, ['a+b'], true],
        [3, 'message', true, false, ['AnyOf_greaterThan_30'], false],
      ],
    );
    assert.equal(rule.description, undefined);
  });

  it('keeps the ids given, numbering the others after them', async () => {
    const rule = await createRule(
      A,
      textRule('ids', {
        conditions: [
          { id: 5, operand: 'text', category: 'word', operator: 'contains', value: 'a' },
          { operand: 'text', category: 'word', operator: 'contains', value: 'b' },
        ],
      }),
    );
    assert.deepEqual(
      rule.conditions.map((c: any) => c.id),
      [5, 6],
    );
  });

  it('takes every spelling of the reference flag and answers isKeywordsReferencePresent', async () => {
    const spellings = ['isKeywordsReferencePresent', 'isKeywordReferencePresent', 'isListReferencePresent'];
    const rule = await createRule(
      A,
      textRule('refs', {
        conditions: spellings.map((flag) => ({ operand: 'text', category: 'word', operator: 'contains', value: ['profanity-list'], [flag]: true })),
      }),
    );
    for (const condition of rule.conditions) {
      assert.equal(condition.isKeywordsReferencePresent, true);
      assert.ok(!('isKeywordReferencePresent' in condition) && !('isListReferencePresent' in condition));
    }
  });

  it('shows the conditions Parley does not evaluate with a reason, and stores them', async () => {
    const rule = await createRule(
      A,
      textRule('stored', {
        conditions: [
          { operand: 'text', category: 'sentence', operator: 'contains', value: ["Let's talk on WhatsApp"] },
          { operand: 'audio', category: 'ai', operator: 'contains', value: ['toxicity_greaterThan_50'] },
          { operand: 'text', category: 'pattern', operator: 'contains', value: ['\\d{4}'] },
        ],
      }),
    );
    assert.deepEqual(
      rule.conditions.map((c: any) => c.evaluated),
      [false, false, true],
    );
    assert.ok(rule.conditions[0].reason.includes('sentence'));
    assert.ok(rule.conditions[1].reason.includes('audio'));
    assert.equal(rule.conditions[2].reason, undefined);
  });

  it('accepts a pattern that would backtrack catastrophically elsewhere: RE2 matches it in linear time', async () => {
    const rule = await createRule(A, textRule('linear', { conditions: [{ operand: 'text', category: 'pattern', operator: 'contains', value: ['(a+)+$', '(x|x)*y'] }] }));
    assert.deepEqual(rule.conditions[0].value, ['(a+)+$', '(x|x)*y']);
  });

  it('refuses an existing id with ERR_RULE_ALREADY_EXISTS, a built-in rule’s too; another app may use it', async () => {
    const rule = await createRule(A, textRule());
    for (const id of [rule.id, 'text-profanity-filter']) {
      const response = await call(A, '/moderation/rules', { method: 'POST', body: textRule(id, { name: 'Again' }) });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_RULE_ALREADY_EXISTS');
    }
    assert.equal((await ok(await getRule(A, rule.id))).data.name, 'Paris filter');
    assert.equal((await createRule(t.appB, textRule(rule.id))).id, rule.id);
  });

  it('keeps ids as written: ids differing in case are two rules', async () => {
    await createRule(A, textRule('CaseRule'));
    await createRule(A, textRule('caserule'));
    assert.equal(errorCode(await getRule(A, 'CASERULE')), 'ERR_RULE_NOT_FOUND');
  });

  it('gives one rule when the same id is created concurrently', async () => {
    const id = uniqueId('race');
    const responses = await Promise.all(Array.from({ length: 6 }, () => call(A, '/moderation/rules', { method: 'POST', body: textRule(id) })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, 1, responses.map((r) => r.body).join('\n'));
    assert.ok(responses.every((r) => r.statusCode === 200 || errorCode(r) === 'ERR_RULE_ALREADY_EXISTS'));
    assert.equal((await revisions(A, id)).data.length, 1);
  });

  it('allows 25 own rules per app, the built-in ones not counted, also when created concurrently', async () => {
    const responses = await Promise.all(Array.from({ length: 28 }, (_, i) => call(A, '/moderation/rules', { method: 'POST', body: textRule(`r${i}`) })));
    assert.equal(responses.filter((r) => r.statusCode === 200).length, MODERATION_LIMITS.rulesPerApp);
    const refused = responses.filter((r) => r.statusCode !== 200);
    assert.ok(
      refused.every((r) => r.statusCode === 403 && errorCode(r) === 'ERR_PLAN_QUOTA_RESTRICTION'),
      refused[0]?.body,
    );
    assert.equal((await listRules(A, { limit: '100' })).data.length, 25 + BUILTIN_IDS.length);
    // A built-in rule changed is still not the app's own; one deleted makes room.
    assert.equal((await call(A, '/moderation/rules/email_filter', { method: 'PUT', body: { enabled: true } })).statusCode, 200);
    const own = (await listRules(A, { limit: '100' })).data.find((r: any) => !r.default).id;
    assert.equal((await call(A, `/moderation/rules/${own}`, { method: 'DELETE' })).statusCode, 200);
    await createRule(A, textRule('one-more'));
  });

  it('needs a fullAccess key', async () => {
    const response = await call(A, '/moderation/rules', { method: 'POST', key: 'auth', body: textRule() });
    assert.equal(errorCode(response), 'AUTH_ERR_NO_ACCESS');
  });

  const condition = (fields: Record<string, unknown>) => ({ conditions: [{ operand: 'text', category: 'word', operator: 'contains', value: ['x'], ...fields }] });
  const invalid: Array<[string, Record<string, unknown>, string]> = [
    ['an id with a space', { id: 'a b' }, 'id'],
    ['an id of 101 characters', { id: 'r'.repeat(101) }, 'id'],
    ['no name', { name: undefined }, 'name'],
    ['a name of 101 characters', { name: 'n'.repeat(101) }, 'name'],
    ['a description of 256 characters', { description: 'd'.repeat(256) }, 'description'],
    ['no conditions', { conditions: [] }, 'conditions'],
    ['11 conditions', { conditions: Array.from({ length: 11 }, () => ({ operand: 'text', category: 'word', operator: 'contains', value: 'x' })) }, 'conditions'],
    ['an unknown operand', condition({ operand: 'voice' }), 'conditions[0].operand'],
    ['an unknown category', condition({ category: 'regex' }), 'conditions[0].category'],
    ['an unknown operator', condition({ operator: 'startsWith' }), 'conditions[0].operator'],
    ['an entity other than message', condition({ entity: 'user' }), 'conditions[0].entity'],
    [
      'repeated condition ids',
      {
        conditions: [
          { id: 1, operand: 'text', category: 'word', operator: 'contains', value: 'a' },
          { id: 1, operand: 'text', category: 'word', operator: 'contains', value: 'b' },
        ],
      },
      'conditions[1].id',
    ],
    ['no values', condition({ value: [] }), 'conditions[0].value'],
    ['1,001 values', condition({ value: Array.from({ length: 1001 }, (_, i) => `w${i}`) }), 'conditions'],
    ['an empty word', condition({ value: ['ok', '  '] }), 'conditions[0].value[1]'],
    ['a word of 101 characters', condition({ value: ['w'.repeat(101)] }), 'conditions[0].value[0]'],
    ['a pattern RE2 cannot parse', condition({ category: 'pattern', value: ['(unclosed'] }), 'conditions[0].value[0]'],
    ['a pattern with a backreference', condition({ category: 'pattern', value: ['(a)\\1'] }), 'conditions[0].value[0]'],
    ['a pattern with a lookbehind', condition({ category: 'pattern', value: ['(?<=a)b'] }), 'conditions[0].value[0]'],
    ['a pattern of 1,001 characters', condition({ category: 'pattern', value: ['a'.repeat(1001)] }), 'conditions'],
    ['an unknown keyword list', condition({ isKeywordsReferencePresent: true, value: ['profanity-list', 'no-such-list'] }), 'conditions[0].value'],
    ['a word list in a pattern condition', condition({ category: 'pattern', isKeywordsReferencePresent: true, value: ['profanity-list'] }), 'conditions[0].value'],
    ['a list reference in a sentence condition', condition({ category: 'sentence', isKeywordsReferencePresent: true, value: ['profanity-list'] }), 'conditions[0].value'],
    ['an unknown action', { action: ['blockMessage', 'flagMessage'] }, 'action'],
    ['no action', { action: [] }, 'action'],
    ['filters', { filters: [{ entity: 'user', operand: 'uid', operator: 'equals', value: 'x', type: 'sender' }] }, 'filters'],
  ];
  for (const [what, change, field] of invalid) {
    it(`refuses ${what} with ERR_BAD_REQUEST naming ${field}, creating nothing`, async () => {
      const id = uniqueId('bad');
      const rule: Record<string, unknown> = { ...textRule(id), ...change };
      for (const key of Object.keys(rule)) if (rule[key] === undefined) delete rule[key];
      const before = await version(A);
      const response = await call(A, '/moderation/rules', { method: 'POST', body: rule });
      assert.equal(response.statusCode, 400, response.body);
      const error = body(response).error;
      assert.equal(error.code, 'ERR_BAD_REQUEST');
      assert.ok(
        Object.keys(error.details).some((key) => key.startsWith(field)),
        JSON.stringify(error.details),
      );
      assert.equal(errorCode(await getRule(A, String(rule.id))), 'ERR_RULE_NOT_FOUND');
      assert.equal(await version(A), before);
    });
  }

  it('names the unknown keyword list, the RE2 problem and the actions Parley carries out', async () => {
    const refusal = async (change: Record<string, unknown>) => body(await call(A, '/moderation/rules', { method: 'POST', body: { ...textRule(), ...change } })).error.details;
    assert.match((await refusal(condition({ isKeywordsReferencePresent: true, value: ['no-such-list'] })))['conditions[0].value'], /no-such-list/);
    assert.match((await refusal(condition({ category: 'pattern', value: ['(a)\\1'] })))['conditions[0].value[0]'], /RE2.*backreferences/);
    assert.match((await refusal({ action: 'flagMessage' })).action, /flagMessage.*blockMessage and dropMessage/);
  });
});

describe('list-rules', () => {
  it('lists the built-in rules of a new app, disabled, newest first, as the vendor shows them', async () => {
    const result = await listRules(A);
    assert.deepEqual(
      result.data.map((r: any) => r.id),
      BUILTIN_IDS,
    );
    assert.deepEqual(result.meta, { current: { limit: 50, count: 7 } });
    for (const rule of result.data) {
      assert.equal(rule.enabled, false);
      assert.equal(rule.default, true);
      assert.equal(rule.active, true);
      assert.equal(rule.revisionId, `${A.appId}_${rule.id}_1`);
      assert.deepEqual(rule.action, ['blockMessage']);
    }
    const byId = new Map(result.data.map((r: any) => [r.id, r]));
    const profanity: any = byId.get('text-profanity-filter');
    assert.deepEqual(profanity.conditions, [
      { id: 1, isKeywordsReferencePresent: true, isMediaPresent: false, entity: 'message', operand: 'text', category: 'word', operator: 'contains', value: ['profanity-list'], evaluated: true },
    ]);
    assert.deepEqual(
      (byId.get('email_filter') as any).conditions.map((c: any) => [c.operand, c.category]),
      [
        ['text', 'pattern'],
        ['custom', 'pattern'],
      ],
    );
    const image: any = byId.get('image-moderation');
    assert.deepEqual([image.conditions[0].value, image.conditions[0].isMediaPresent, image.conditions[0].evaluated], [['AnyOf_greaterThan_30'], true, false]);
  });

  it('lists own rules newest first, before the built-in ones, and pages with limit and page', async () => {
    await createRule(A, textRule('first'));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    await createRule(A, textRule('second'));
    const all = await listRules(A);
    assert.deepEqual(
      all.data.map((r: any) => r.id),
      ['second', 'first', ...BUILTIN_IDS],
    );
    const page = await listRules(A, { limit: '3', page: '3' });
    assert.deepEqual(
      page.data.map((r: any) => r.id),
      BUILTIN_IDS.slice(4),
    );
    assert.deepEqual(page.meta, { current: { limit: 3, count: 3 } });
  });

  it('refuses a limit above 100 with ERR_BAD_REQUEST', async () => {
    const response = await call(A, '/moderation/rules', { query: { limit: '101' } });
    assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
  });
});

describe('get-rule', () => {
  it('gets a built-in rule', async () => {
    const rule = (await ok(await getRule(A, 'contact_details_filter'))).data;
    assert.equal(rule.name, 'Contact details filter');
    assert.equal(rule.conditions.length, 2);
  });

  it('answers ERR_RULE_NOT_FOUND for an unknown id', async () => {
    const response = await getRule(A, 'no-such-rule');
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_RULE_NOT_FOUND');
  });
});

describe('update-rule', () => {
  it('replaces the fields given, as revision 2', async () => {
    const created = await createRule(A, VIDEO_RULE);
    const updated = (
      await ok(
        await call(A, '/moderation/rules/moderation-test', {
          method: 'PUT',
          body: { name: 'Paris', conditions: [{ operand: 'text', category: 'word', operator: 'equals', value: ['paris'] }] },
        }),
      )
    ).data;
    assert.equal(updated.name, 'Paris');
    assert.equal(updated.description, VIDEO_RULE.description);
    assert.deepEqual(
      updated.conditions.map((c: any) => [c.id, c.operand, c.operator, c.value]),
      [[1, 'text', 'equals', ['paris']]],
    );
    assert.equal(updated.revisionId, `${A.appId}_moderation-test_2`);
    assert.equal(updated.createdAt, created.createdAt);
    assert.ok(updated.updatedAt >= created.updatedAt);
    assert.deepEqual((await ok(await getRule(A, 'moderation-test'))).data, updated);
  });

  it('enables a built-in rule: the app’s version, revision 2, still default', async () => {
    const before = await version(A);
    const rule = (await ok(await call(A, '/moderation/rules/text-profanity-filter', { method: 'PUT', body: { enabled: true } }))).data;
    assert.equal(rule.enabled, true);
    assert.equal(rule.default, true);
    assert.equal(rule.revisionId, `${A.appId}_text-profanity-filter_2`);
    assert.equal(rule.createdAt, 1718355386);
    const listed = (await listRules(A)).data.find((r: any) => r.id === 'text-profanity-filter');
    assert.deepEqual(listed, rule);
    assert.notEqual(await version(A), before);
    // Another app's built-in rule is not changed.
    assert.equal((await ok(await getRule(t.appB, 'text-profanity-filter'))).data.enabled, false);
  });

  it('changes nothing, and makes no revision, when the update says what the rule says', async () => {
    const created = await createRule(A, textRule('same'));
    const before = await version(A);
    const again = (await ok(await call(A, '/moderation/rules/same', { method: 'PUT', body: { name: created.name, action: ['blockMessage'], enabled: true } }))).data;
    assert.deepEqual(again, created);
    assert.equal((await revisions(A, 'same')).data.length, 1);
    assert.equal(await version(A), before);
    const builtin = (await ok(await call(A, '/moderation/rules/email_filter', { method: 'PUT', body: { enabled: false } }))).data;
    assert.equal(builtin.revisionId, `${A.appId}_email_filter_1`);
  });

  it('takes a rule as got back as an update that changes nothing, built-in patterns included', async () => {
    for (const id of ['contact_details_filter', 'email_filter', 'link_filter', 'text-profanity-filter', 'image-moderation']) {
      const rule = (await ok(await getRule(A, id))).data;
      const again = (await ok(await call(A, `/moderation/rules/${id}`, { method: 'PUT', body: rule }))).data;
      assert.deepEqual(again, rule, id);
    }
    assert.equal(await version(A), '0');
  });

  it('refuses an id in the body other than the rule’s, and a bad action, changing nothing', async () => {
    await createRule(A, textRule('keep'));
    for (const change of [{ id: 'other' }, { action: 'banUser' }, { conditions: [] }]) {
      const response = await call(A, '/moderation/rules/keep', { method: 'PUT', body: change });
      assert.equal(response.statusCode, 400, response.body);
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
    assert.equal((await revisions(A, 'keep')).data.length, 1);
  });

  it('answers ERR_RULE_NOT_FOUND for an unknown rule', async () => {
    const response = await call(A, '/moderation/rules/no-such-rule', { method: 'PUT', body: { enabled: true } });
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_RULE_NOT_FOUND');
  });
});

describe('delete-rule', () => {
  it('deletes a rule with its revisions, in the vendor’s words; its id may be used again', async () => {
    await createRule(A, textRule('gone'));
    await ok(await call(A, '/moderation/rules/gone', { method: 'PUT', body: { name: 'Renamed' } }));
    const result = await ok(await call(A, '/moderation/rules/gone', { method: 'DELETE' }));
    assert.deepEqual(result, { data: { success: true, message: 'Rule with id gone has been deleted successfully.' } });
    assert.equal(errorCode(await getRule(A, 'gone')), 'ERR_RULE_NOT_FOUND');
    assert.equal(errorCode(await call(A, '/moderation/rules/gone/revisions')), 'ERR_RULE_NOT_FOUND');
    const again = await createRule(A, textRule('gone'));
    assert.equal(again.revisionId, `${A.appId}_gone_1`);
    assert.equal((await revisions(A, 'gone')).data.length, 1);
  });

  it('deletes a built-in rule: no longer listed nor got, and a rule of its id may be created, as the app’s own', async () => {
    await ok(await call(A, '/moderation/rules/link_filter', { method: 'DELETE' }));
    assert.ok(!(await listRules(A)).data.some((r: any) => r.id === 'link_filter'));
    assert.equal(errorCode(await getRule(A, 'link_filter')), 'ERR_RULE_NOT_FOUND');
    assert.equal(errorCode(await call(A, '/moderation/rules/link_filter', { method: 'DELETE' })), 'ERR_RULE_NOT_FOUND');
    assert.ok(
      (await listRules(t.appB)).data.some((r: any) => r.id === 'link_filter'),
      'another app keeps it',
    );
    const own = await createRule(A, textRule('link_filter'));
    assert.equal(own.default, undefined);
    assert.equal(own.revisionId, `${A.appId}_link_filter_1`);
    assert.deepEqual(
      (await revisions(A, 'link_filter')).data.map((r: any) => r.revisionId),
      [own.revisionId],
    );
    await ok(await call(A, '/moderation/rules/link_filter', { method: 'DELETE' }));
    assert.equal(errorCode(await getRule(A, 'link_filter')), 'ERR_RULE_NOT_FOUND', 'the built-in stays deleted');
  });

  it('deletes a changed built-in rule', async () => {
    await ok(await call(A, '/moderation/rules/email_filter', { method: 'PUT', body: { enabled: true } }));
    await ok(await call(A, '/moderation/rules/email_filter', { method: 'DELETE' }));
    assert.equal(errorCode(await getRule(A, 'email_filter')), 'ERR_RULE_NOT_FOUND');
    assert.ok(!(await t.services.moderationRules.setup(ctxOf(A))).rules.some((r) => r.id === 'email_filter'));
  });

  it('answers ERR_RULE_NOT_FOUND for an unknown rule', async () => {
    const response = await call(A, '/moderation/rules/no-such-rule', { method: 'DELETE' });
    assert.equal(response.statusCode, 404);
    assert.equal(errorCode(response), 'ERR_RULE_NOT_FOUND');
  });
});

describe('list-rule-revisions', () => {
  it('lists a built-in rule never changed as its one built-in revision', async () => {
    const result = await revisions(A, 'image-moderation');
    assert.deepEqual(
      result.data.map((r: any) => [r.revisionId, r.active, r.default]),
      [[`${A.appId}_image-moderation_1`, true, true]],
    );
    assert.deepEqual(result.meta, { current: { limit: 50, count: 1 } });
  });

  it('lists the revisions newest first, one per update, only the current one active', async () => {
    const created = await createRule(A, VIDEO_RULE);
    await ok(await call(A, '/moderation/rules/moderation-test', { method: 'PUT', body: { conditions: [{ operand: 'text', category: 'word', operator: 'equals', value: 'paris' }] } }));
    await ok(await call(A, '/moderation/rules/moderation-test', { method: 'PUT', body: { enabled: false } }));
    const result = await revisions(A, 'moderation-test');
    assert.deepEqual(
      result.data.map((r: any) => [r.revisionId.split('_').pop(), r.active, r.enabled]),
      [
        ['3', true, false],
        ['2', false, true],
        ['1', false, true],
      ],
    );
    assert.deepEqual(result.data[2].conditions, created.conditions, 'a revision is the rule as it was');
    assert.equal(result.data[1].conditions[0].operand, 'text');
    const page = await revisions(A, 'moderation-test', { limit: '2', page: '2' });
    assert.deepEqual(
      page.data.map((r: any) => r.revisionId.split('_').pop()),
      ['1'],
    );
  });

  it('lists a changed built-in rule’s revisions after the built-in one', async () => {
    await ok(await call(A, '/moderation/rules/video-moderation', { method: 'PUT', body: { enabled: true } }));
    await ok(await call(A, '/moderation/rules/video-moderation', { method: 'PUT', body: { action: 'dropMessage' } }));
    const all = await revisions(A, 'video-moderation');
    assert.deepEqual(
      all.data.map((r: any) => [r.revisionId.split('_').pop(), r.active, r.enabled, r.action[0]]),
      [
        ['3', true, true, 'dropMessage'],
        ['2', false, true, 'blockMessage'],
        ['1', false, false, 'blockMessage'],
      ],
    );
    for (const [limit, pageNo, expected] of [
      ['2', '2', ['1']],
      ['1', '3', ['1']],
      ['3', '2', []],
      ['1', '4', []],
    ] as const) {
      const page = await revisions(A, 'video-moderation', { limit, page: pageNo });
      assert.deepEqual(
        page.data.map((r: any) => r.revisionId.split('_').pop()),
        expected,
        `limit ${limit} page ${pageNo}`,
      );
    }
  });

  it('answers ERR_RULE_NOT_FOUND for an unknown rule', async () => {
    assert.equal(errorCode(await call(A, '/moderation/rules/no-such-rule/revisions')), 'ERR_RULE_NOT_FOUND');
  });
});

describe('the moderation set-up and its version', () => {
  it("moves the app's version with every change of its rules, and gives its effective rules", async () => {
    const versions = [await version(A)];
    assert.equal(versions[0], '0');
    await createRule(A, textRule('v'));
    versions.push(await version(A));
    await ok(await call(A, '/moderation/rules/v', { method: 'PUT', body: { enabled: false } }));
    versions.push(await version(A));
    await ok(await call(A, '/moderation/rules/email_filter', { method: 'PUT', body: { enabled: true } }));
    versions.push(await version(A));
    await ok(await call(A, '/moderation/rules/link_filter', { method: 'DELETE' }));
    versions.push(await version(A));
    assert.deepEqual(versions, ['0', '1', '2', '3', '4']);
    const setup = await t.services.moderationRules.setup(ctxOf(A));
    assert.equal(setup.version, '4');
    const byId = new Map(setup.rules.map((rule) => [rule.id, rule]));
    assert.deepEqual([...byId.keys()].sort(), [...BUILTIN_IDS.filter((id) => id !== 'link_filter'), 'v'].sort());
    assert.equal(byId.get('v')!.enabled, false);
    assert.equal(byId.get('email_filter')!.enabled, true);
    assert.equal(byId.get('email_filter')!.default, true);
    assert.equal(byId.get('email_filter')!.revision, 2);
    assert.deepEqual(
      setup.lists.map((list) => list.id),
      ['profanity-list'],
    );
  });

  it("moves only the changed app's version", async () => {
    const other = await freshApp();
    await createRule(A, textRule());
    assert.equal(await version(A), '1');
    assert.equal(await version(other), '0');
  });
});

describe('tenant isolation', () => {
  it("shows another app none of this app's rules and changes", async () => {
    const B = await freshApp();
    const rule = await createRule(A, textRule());
    await ok(await call(A, '/moderation/rules/image-moderation', { method: 'PUT', body: { enabled: true } }));
    await ok(await call(A, '/moderation/rules/email_filter', { method: 'DELETE' }));
    assert.equal(errorCode(await getRule(B, rule.id)), 'ERR_RULE_NOT_FOUND');
    assert.equal(errorCode(await call(B, `/moderation/rules/${rule.id}/revisions`)), 'ERR_RULE_NOT_FOUND');
    assert.equal(errorCode(await call(B, `/moderation/rules/${rule.id}`, { method: 'PUT', body: { enabled: false } })), 'ERR_RULE_NOT_FOUND');
    assert.equal(errorCode(await call(B, `/moderation/rules/${rule.id}`, { method: 'DELETE' })), 'ERR_RULE_NOT_FOUND');
    const listed = (await listRules(B)).data;
    assert.deepEqual(
      listed.map((r: any) => r.id),
      BUILTIN_IDS,
    );
    assert.ok(listed.every((r: any) => r.enabled === false && r.revisionId.startsWith(`${B.appId}_`)));
    assert.equal(await version(B), '0');
    assert.ok((await ok(await getRule(A, rule.id))).data, 'A still has it');
  });
});

describe('the management credential', () => {
  const listCsv = (id: string) => ({ id, name: 'Words', searchTerms: ['alpha'] });
  /** Every moderation rules and keyword list operation, with a body that succeeds. */
  const operations = (suffix: string): Array<[string, 'GET' | 'POST' | 'PUT' | 'DELETE', string, unknown?]> => [
    ['create-rule-keyword', 'POST', '/moderation/keywords', listCsv(`l-${suffix}`)],
    ['list-rule-keywords', 'GET', '/moderation/keywords'],
    ['get-rule-keyword', 'GET', `/moderation/keywords/l-${suffix}`],
    ['update-rule-keyword', 'PUT', `/moderation/keywords/l-${suffix}`, { name: 'Renamed' }],
    ['create-rule', 'POST', '/moderation/rules', textRule(`r-${suffix}`)],
    ['list-rules', 'GET', '/moderation/rules'],
    ['get-rule', 'GET', `/moderation/rules/r-${suffix}`],
    ['update-rule', 'PUT', `/moderation/rules/r-${suffix}`, { name: 'Renamed' }],
    ['list-rule-revisions', 'GET', `/moderation/rules/r-${suffix}/revisions`],
    ['delete-rule', 'DELETE', `/moderation/rules/r-${suffix}`],
    ['delete-rule-keyword', 'DELETE', `/moderation/keywords/l-${suffix}`],
  ];
  const send = (method: string, url: string, payload: unknown, headers: Record<string, string>) =>
    t.app.inject({ method: method as 'GET', url: `/v3${url}`, headers, ...(payload === undefined ? {} : { payload: payload as object }) });

  it('is taken by every operation: key and secret, with the app from the appId header or the host', async () => {
    for (const [name, headers] of [
      ['appId header', { host: 'localhost', appid: A.appId, key: cred.key, secret: cred.secret }],
      ['host', { host: `${A.appId}.api-us.parley.test`, key: cred.key, secret: cred.secret }],
    ] as const) {
      const suffix = name === 'host' ? 'h' : 'a';
      for (const [operationId, method, url, payload] of operations(suffix)) {
        const response = await send(method, url, payload, headers);
        assert.equal(response.statusCode, 200, `${operationId} by ${name}: ${response.body}`);
      }
    }
  });

  it('is refused with a wrong secret, and no credential nor an authOnly key is taken, before anything is written', async () => {
    const wrong = crypto.randomBytes(32).toString('hex');
    const before = await version(A);
    for (const [operationId, method, url, payload] of operations('x')) {
      const refusals: Array<[string, Record<string, string>, number, string]> = [
        ['a wrong secret', { host: 'localhost', appid: A.appId, key: cred.key, secret: wrong }, 401, 'AUTH_ERR_APIKEY_NOT_FOUND'],
        ['no credential', { host: 'localhost', appid: A.appId }, 401, 'AUTH_ERR_EMPTY_APIKEY'],
        ['a key without a secret', { host: 'localhost', appid: A.appId, key: cred.key }, 401, 'AUTH_ERR_EMPTY_AUTH_HEADER'],
        ['an authOnly key', { host: 'localhost', appid: A.appId, apikey: A.authKey }, 401, 'AUTH_ERR_NO_ACCESS'],
      ];
      for (const [what, headers, , code] of refusals) {
        const response = await send(method, url, payload, headers);
        assert.ok(response.statusCode === 401 || response.statusCode === 403, `${operationId}, ${what}: ${response.statusCode} ${response.body}`);
        assert.equal(errorCode(response), code, `${operationId}, ${what}`);
      }
    }
    assert.equal(await version(A), before);
  });
});

describe('the patterns an app may hold', () => {
  it(`refuses rules and pattern lists past ${MODERATION_LIMITS.patternCharsPerApp} characters of patterns in all, with ERR_PLAN_QUOTA_RESTRICTION`, async () => {
    // Ten patterns of 1,000 characters a condition: 10,000 characters a rule.
    const patterns = (tag: string) => Array.from({ length: 10 }, (_, i) => `${tag}${i}-${'x'.repeat(1_000 - tag.length - 3)}`.slice(0, 1_000));
    const patternRule = (id: string) => ({ id, name: id, conditions: [{ operand: 'text', category: 'pattern', operator: 'contains', value: patterns(id.slice(0, 3)) }], action: 'blockMessage' });
    for (const id of ['pa1', 'pa2', 'pa3']) await createRule(A, patternRule(id));
    const refused = await call(A, '/moderation/rules', { method: 'POST', body: patternRule('pa4') });
    assert.equal(refused.statusCode, 403, refused.body);
    assert.equal(errorCode(refused), 'ERR_PLAN_QUOTA_RESTRICTION');
    const list = await call(A, '/moderation/keywords', { method: 'POST', body: { id: 'pl1', name: 'Patterns', category: 'pattern', searchTerms: patterns('pl1') } });
    assert.equal(errorCode(list), 'ERR_PLAN_QUOTA_RESTRICTION', list.body);
    // A word list of the same size is no pattern: taken.
    assert.equal((await call(A, '/moderation/keywords', { method: 'POST', body: { id: 'wl1', name: 'Words', searchTerms: ['a', 'b'] } })).statusCode, 200);
    // Another app has its own budget.
    assert.equal((await call(t.appB, '/moderation/rules', { method: 'POST', body: patternRule(uniqueId('pa')) })).statusCode, 200);
  });

  it(`refuses rules past ${MODERATION_LIMITS.inlineValuesPerApp} inline values in all: more words go in keyword lists`, async () => {
    // 9,900 here, and the built-in rules' few patterns.
    const words = (c: number, n: number) => Array.from({ length: n }, (_, i) => `w${c}x${i}`);
    const conditions = Array.from({ length: 10 }, (_, c) => ({ operand: 'text', category: 'word', operator: 'contains', value: words(c, c < 9 ? 1_000 : 900) }));
    await createRule(A, { id: 'many-words', name: 'Many words', conditions, action: 'blockMessage' });
    await createRule(A, textRule('a-few-more'));
    const more = { id: 'too-many', name: 'Too many', conditions: [{ operand: 'text', category: 'word', operator: 'contains', value: words(99, 200) }], action: 'blockMessage' };
    const refused = await call(A, '/moderation/rules', { method: 'POST', body: more });
    assert.equal(errorCode(refused), 'ERR_PLAN_QUOTA_RESTRICTION', refused.body);
    assert.match(body(refused).error.message, /keyword lists/);
  });
});
