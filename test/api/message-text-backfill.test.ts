import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { messagesCommand } from '../../src/cli-messages.js';
import { MessageTextsRepository } from '../../src/repositories/message-store/message-texts.repository.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, okData, uniqueId, type TestApp } from '../helpers/app.js';
import { cliIo, isUsage } from '../helpers/cli-io.js';
import { newGroup, newUids } from '../helpers/factories.js';

// Messages stored without a stored text (before migration 0017) are given, by the backfill
// (`parley messages backfill-texts`), exactly the text a send stores; messages changed since
// they were stored keep none. Pages read the same before and after.

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const ok = (app: CreatedApp, method: string, url: string, onBehalfOf: string | undefined, payload?: unknown) => okData(t, app, method, url, onBehalfOf, payload);

async function page(url: string, viewer: string | undefined): Promise<unknown> {
  const response = await t.call(t.appA, url, { ...(viewer ? { onBehalfOf: viewer } : {}), query: { limit: '50', withTags: 'true' } });
  assert.equal(response.statusCode, 200, response.body);
  return JSON.parse(response.body);
}

/** Every message's stored text, by app and id. */
async function texts(): Promise<Map<string, string | null>> {
  const { rows } = await sql<{ app_id: string; id: string; shown: string | null }>`select app_id, id::text as id, shown from messages order by app_id, id`.execute(t.database.db);
  return new Map(rows.map((row) => [`${row.app_id}/${row.id}`, row.shown]));
}

const dropTexts = () => sql`update messages set shown = null`.execute(t.database.db);

describe('stored message text backfill', () => {
  it('gives messages stored without a text the one a send stores, and none to messages changed since', async () => {
    const [alice, bob, carol] = await newUids(t, t.appA, 3);
    const group = await newGroup(t, t.appA, { members: { participants: [bob!, carol!] } } as never, alice);
    const first = await ok(t.appA, 'POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', data: { text: `hi <@uid:${carol}>`, metadata: { k: 1.5 } }, tags: ['t1'] });
    await ok(t.appA, 'POST', '/v3/messages', bob, { receiver: alice, receiverType: 'user', muid: uniqueId('muid'), data: { text: 'quotes " and é 👍' } });
    await ok(t.appA, 'POST', '/v3/messages', bob, { receiver: alice, receiverType: 'user', category: 'custom', type: 'location', data: { customData: { lat: 1 } } });
    await ok(t.appA, 'POST', `/v3/messages/${first.id}/reactions/👍`, bob);
    await ok(t.appA, 'POST', `/v3/messages/${first.id}/thread`, bob, { data: { text: 'a reply' } });
    const edited = await ok(t.appA, 'POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', data: { text: 'to edit' } });
    await ok(t.appA, 'PUT', `/v3/messages/${edited.id}`, alice, { data: { text: 'edited' } });
    const deleted = await ok(t.appA, 'POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', data: { text: 'to delete' } });
    await ok(t.appA, 'DELETE', `/v3/messages/${deleted.id}`, alice);
    await ok(t.appA, 'POST', '/v3/messages', carol, { receiver: group.guid, receiverType: 'group', data: { text: 'to the group' } });
    await ok(t.appA, 'POST', `/v3/users/${alice}/conversation/read`, bob);
    const at = Math.floor(Date.now() / 1000) - 60;
    const [plain, withReceipts] = [uniqueId('imp'), uniqueId('imp')];
    const imported = await t.call(t.appA, '/v3.0/data_import/messages', {
      method: 'POST',
      body: {
        messages: {
          [plain]: { muid: plain, sender: bob, receiverType: 'user', receiver: alice, category: 'message', type: 'text', data: { text: 'imported' }, sentAt: at },
          [withReceipts]: {
            muid: withReceipts,
            sender: alice,
            receiverType: 'user',
            receiver: bob,
            category: 'message',
            type: 'text',
            data: { text: 'read' },
            sentAt: at,
            deliveredAt: at + 1,
            readAt: at + 2,
          },
        },
      },
    });
    assert.equal(imported.statusCode, 200, imported.body);
    // Another app's messages are given theirs too.
    const [dave, erin] = await newUids(t, t.appB, 2);
    await ok(t.appB, 'POST', '/v3/messages', dave, { receiver: erin, receiverType: 'user', data: { text: 'in app B' } });

    const stored = await texts();
    const withText = [...stored.values()].filter((shown) => shown !== null).length;
    // Two 1:1 sends, the group message, app B's send, the reply and the plain import; not the
    // message a reply changed, the edited or the deleted one, action messages, or the import with
    // receipts.
    assert.equal(withText, 6, JSON.stringify([...stored]));
    const asks: Array<[string, string | undefined]> = [
      [`/v3/users/${alice}/messages`, bob!],
      [`/v3/users/${bob}/messages`, alice!],
      [`/v3/groups/${group.guid}/messages`, carol!],
    ];
    const pagesBefore = [];
    for (const [url, viewer] of asks) pagesBefore.push(await page(url, viewer));

    await dropTexts();
    const done = await t.services.messageTextBackfill.run({ batch: 3 });
    assert.deepEqual(await texts(), stored, 'each message has again the text it was stored with, or none');
    assert.deepEqual(done, { read: stored.size, stored: withText });
    for (const [n, [url, viewer]] of asks.entries()) assert.deepEqual(await page(url, viewer), pagesBefore[n], url);
    // Again: nothing left to store.
    assert.deepEqual(await t.services.messageTextBackfill.run(), { read: stored.size, stored: 0 });
  });

  it('stores no text on a message changed after it was read', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const sent = await ok(t.appA, 'POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', data: { text: 'before' } });
    await dropTexts();
    const repository = new MessageTextsRepository(t.database.db);
    const read: Array<{ rowVersion: string; id: string }> = [];
    for (let after: { appId: string; id: string } | undefined; ; ) {
      const batch = await repository.scan(after, 100);
      if (!batch.last) break;
      for (const { row, rowVersion } of batch.untexted) if (row.app_id === t.appA.appId && String(row.id) === String(sent.id)) read.push({ rowVersion, id: String(row.id) });
      after = batch.last;
    }
    assert.equal(read.length, 1);
    await ok(t.appA, 'PUT', `/v3/messages/${sent.id}`, alice, { data: { text: 'after' } });
    assert.equal(await repository.store([{ appId: t.appA.appId, id: read[0]!.id, rowVersion: read[0]!.rowVersion, shown: '"stale":' }]), 0);
    assert.equal((await texts()).get(`${t.appA.appId}/${sent.id}`), null);
    const shown = (await page(`/v3/users/${alice}/messages`, bob)) as { data: Array<{ id: string; data: { text: string } }> };
    assert.equal(shown.data.find((m) => m.id === String(sent.id))!.data.text, 'after');
  });

  it('parley messages backfill-texts prints what it did, and refuses a bad --batch', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    await ok(t.appA, 'POST', '/v3/messages', alice, { receiver: bob, receiverType: 'user', data: { text: 'one' } });
    await dropTexts();
    const lines: string[] = [];
    assert.equal(await messagesCommand(t.services, cliIo, 'backfill-texts', { batch: '2' }, (line) => lines.push(line)), 0);
    const all = (await texts()).size;
    const left = [...(await texts()).values()].filter((shown) => shown === null).length;
    assert.match(lines.at(-1)!, new RegExp(`^done: ${all} messages read, ${all - left} texts stored$`));
    await assert.rejects(messagesCommand(t.services, cliIo, 'backfill-texts', { batch: '0' }), isUsage(/--batch must be a whole number from 1 to 100000; got "0"/));
    await assert.rejects(messagesCommand(t.services, cliIo, 'backfill', {}), isUsage(/Usage: parley messages backfill-texts/));
  });
});
