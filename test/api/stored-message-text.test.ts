import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { body, createTestApp, okData, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids, newUser } from '../helpers/factories.js';

// A message's stored text (messages.shown, migration 0017) is what the one renderer made of the
// row when it was stored; a history page splices in what other rows and the viewer decide.
// Invariant: every page reads exactly as it does when every message is rendered from its columns
// (the stored texts dropped), whatever the messages hold and however the page is asked for.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const ok = (method: string, url: string, onBehalfOf: string | undefined, payload?: unknown) => okData(t, t.appA, method, url, onBehalfOf, payload);

async function page(url: string, viewer: string | undefined, query: Record<string, string>): Promise<unknown> {
  const response = await t.call(t.appA, url, { ...(viewer ? { onBehalfOf: viewer } : {}), query: { limit: '50', ...query } });
  assert.equal(response.statusCode, 200, response.body);
  return JSON.parse(response.body);
}

async function storedTexts(): Promise<{ shown: number; all: number }> {
  const { rows } = await sql<{ shown: string; all: string }>`
    select count(shown) as shown, count(*) as "all" from messages where app_id = ${t.appA.appId}`.execute(t.database.db);
  return { shown: Number(rows[0]!.shown), all: Number(rows[0]!.all) };
}

describe('stored message text', () => {
  it('pages read the same from stored texts as from the columns, for every kind of message and page', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3, { metadata: { note: 'x' }, tags: ['vip'] } as never);
    // Ids with the vendor's separator in them, and a conversation of two such users.
    const odd1 = (await newUser(t, t.appA, { uid: uniqueId('a_user_b') })).uid as string;
    const odd2 = (await newUser(t, t.appA, { uid: `${odd1}_user_c` })).uid as string;
    const group = await newGroup(t, t.appA, { members: { participants: [bob!, carol!] } } as never, alice);
    const first = await ok('POST', '/v3/messages', alice, {
      receiver: bob,
      receiverType: 'user',
      data: { text: `hi <@uid:${carol}> and <@uid:${bob}>`, metadata: { k: 1.5, list: [null, true, 'é'] } },
      tags: ['t1', 't"2'],
    });
    await ok('POST', '/v3/messages', bob, { receiver: alice, receiverType: 'user', muid: 'muid-1', data: { text: 'with a muid: "quotes", \\ back\nslash, 👍 \u2028 <script>' } });
    await ok('POST', '/v3/messages', bob, { receiver: alice, receiverType: 'user', category: 'custom', type: 'location', data: { customData: { lat: 1, lng: -2.25 } } });
    await ok('POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', category: 'custom', type: 'ping', data: { customData: {} } });
    await ok('POST', `/v3/messages/${first.id}/reactions/👍`, bob);
    await ok('POST', `/v3/messages/${first.id}/reactions/🎉`, alice);
    const reply = await ok('POST', `/v3/messages/${first.id}/thread`, bob, { data: { text: 'a reply' }, tags: ['r'] });
    await ok('POST', `/v3/users/${alice}/conversation/delivered`, bob);
    await ok('POST', `/v3/users/${bob}/conversation/read`, alice);
    await ok('POST', '/v3/messages', carol, { receiver: group.guid, receiverType: 'group', data: { text: `group <@uid:${alice}>` } });
    await ok('POST', '/v3/messages', alice, { receiver: group.guid, receiverType: 'group', data: { text: 'to the group' }, tags: ['g'] });
    await ok('POST', `/v3/groups/${group.guid}/conversation/read`, bob);
    await ok('POST', '/v3/messages', odd1, { receiver: odd2, receiverType: 'user', data: { text: 'underscores' } });
    // Imported: one as a send (stored with its text), one with its source's receipts (not).
    const at = Math.floor(Date.now() / 1000) - 60;
    const [plain, withReceipts] = [uniqueId('imp'), uniqueId('imp')];
    const records = {
      [plain]: { muid: plain, sender: bob, receiverType: 'user', receiver: alice, category: 'message', type: 'text', data: { text: `imported <@uid:${carol}>` }, sentAt: at, tags: ['i'] },
      [withReceipts]: {
        muid: withReceipts,
        sender: alice,
        receiverType: 'group',
        receiver: group.guid,
        category: 'message',
        type: 'text',
        data: { text: 'imported, read' },
        sentAt: at,
        deliveredAt: at + 1,
        readAt: at + 2,
      },
    };
    const imported = await t.call(t.appA, '/v3.0/data_import/messages', { method: 'POST', body: { messages: records } });
    assert.equal(imported.statusCode, 200, imported.body);
    assert.deepEqual(
      Object.values(body(imported).data).map((result: any) => result.success),
      [true, true],
      imported.body,
    );

    // Sends, replies and the plain import are stored with their text (9), less the one a reply
    // changed; action messages and the import with receipts are not.
    const before = await storedTexts();
    assert.equal(before.shown, 8, `stored texts: ${JSON.stringify(before)}`);

    const asks: Array<[string, string | undefined, Record<string, string>]> = [
      [`/v3/users/${alice}/messages`, bob!, { withTags: 'true', mentionsWithTagInfo: 'true', mentionsWithBlockedInfo: 'true' }],
      [`/v3/users/${alice}/messages`, bob!, { affix: 'append', id: '0' }],
      [`/v3/users/${bob}/messages`, alice!, {}],
      [`/v3/users/${bob}/messages`, alice!, { limit: '2' }],
      [`/v3/users/${odd2}/messages`, odd1!, { withTags: 'true' }],
      [`/v3/groups/${group.guid}/messages`, alice!, { withTags: 'true' }],
      [`/v3/groups/${group.guid}/messages`, bob!, {}],
      [`/v3/groups/${group.guid}/messages`, undefined, { withTags: 'true' }],
    ];
    const fromStored = [];
    for (const [url, viewer, query] of asks) fromStored.push(await page(url, viewer, query));
    // What the pages hold, so that the comparison below compares something.
    const read = (fromStored[0] as { data: any[] }).data;
    const firstRead = read.find((m) => m.id === String(first.id));
    assert.deepEqual(firstRead.tags, ['t1', 't"2']);
    assert.equal(firstRead.data.reactions.length, 2);
    assert.ok(firstRead.data.mentions[carol!]);
    assert.equal(typeof firstRead.deliveredAt, 'number');
    assert.equal(firstRead.replyCount, 1, "a counted reply drops its parent's stored text");
    assert.ok(read.some((m) => m.muid === 'muid-1'));
    assert.equal(reply.parentId, String(first.id));

    await sql`update messages set shown = null where app_id = ${t.appA.appId}`.execute(t.database.db);
    assert.equal((await storedTexts()).shown, 0);
    for (const [n, [url, viewer, query]] of asks.entries()) {
      assert.deepEqual(fromStored[n], await page(url, viewer, query), `${url} ${JSON.stringify(query)}`);
    }
  });

  it('is dropped by any change to its message, which pages then show', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const sent = await ok('POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', data: { text: 'before' } });
    const shownOf = async () => (await sql<{ shown: string | null }>`select shown from messages where app_id = ${t.appA.appId} and id = ${sent.id}`.execute(t.database.db)).rows[0]!.shown;
    assert.notEqual(await shownOf(), null);
    await ok('PUT', `/v3/messages/${sent.id}`, alice, { data: { text: 'after' } });
    assert.equal(await shownOf(), null);
    const read = (await page(`/v3/users/${alice}/messages`, bob, {})) as { data: any[] };
    assert.equal(read.data.find((m) => m.id === String(sent.id)).data.text, 'after');
  });
});
