import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'kysely';
import { DEFAULT_GATEWAY } from '../../src/config.js';
import type { CreatedApp } from '../../src/services/apps.service.js';
import { createTestApp, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';
import { openAuthed, listenOnLoopback, QUICK_FEED } from '../helpers/ws-client.js';
import { newToken } from '../helpers/client.js';

// A resume across membership changes (docs/realtime.md, "Resume"): a member away while their
// group was deleted is shown its group_deleted; one removed while away is shown what came before
// the removal, the removal, and nothing after. Each resume's start point is past the gap (the
// owner's socket saw its last event live), so the gap is replayed, not sent live.

let t: TestApp;
let port: number;
before(async () => {
  t = await createTestApp({ gateway: DEFAULT_GATEWAY, eventFeedPace: QUICK_FEED });
  port = await listenOnLoopback(t);
});
after(async () => {
  await t.close();
});

const tokenOf = (app: CreatedApp, uid: string) => newToken(t, app, uid);

const connect = async (uid: string, lastEventId?: string) => openAuthed(port, t.appA.appId, await tokenOf(t.appA, uid), lastEventId);

async function toGroup(owner: string, guid: string, text: string): Promise<void> {
  const response = await t.call(t.appA, '/v3/messages', { method: 'POST', onBehalfOf: owner, body: { receiver: guid, receiverType: 'group', category: 'message', type: 'text', data: { text } } });
  assert.equal(response.statusCode, 200, response.body);
}

const textOf = (text: string) => (frame: any) => frame.type === 'event' && frame.data.message?.data?.text === text;
/** What a client was shown after hello: each event as its trigger (a message as its text), and resumed. */
const shown = (frames: any[]) => frames.filter((frame) => frame.type !== 'hello').map((frame) => (frame.type === 'event' ? (frame.data.message?.data?.text ?? frame.trigger) : frame.type));

describe('a resume across membership changes', () => {
  it("shows a member away while their group was deleted its group_deleted, and a non-member nothing of it; the retention takes the group's former members", async () => {
    const [owner, member, outsider] = await newUids(t, t.appA, 3);
    const group = await newGroup(t, t.appA, { members: { participants: [member!] } }, owner);
    const o = await connect(owner!);
    const [m, x] = await Promise.all([connect(member!), connect(outsider!)]);
    await toGroup(owner!, group.guid, 'before');
    const seen = await m.next(textOf('before'));
    // The outsider's last id: an event of their own (a block), from before the gap too.
    const blocked = await t.call(t.appA, `/v3/users/${outsider}/blockedusers`, { method: 'POST', body: { blockedUids: [owner] } });
    assert.equal(blocked.statusCode, 200, blocked.body);
    const own = await x.next((frame) => frame.type === 'event' && frame.trigger === 'user_blocked');
    await Promise.all([m.close(), x.close()]);
    await toGroup(owner!, group.guid, 'in the gap');
    const deletedGroup = await t.call(t.appA, `/v3/groups/${group.guid}`, { method: 'DELETE' });
    assert.equal(deletedGroup.statusCode, 200, deletedGroup.body);
    await o.next((frame) => frame.type === 'event' && frame.trigger === 'group_deleted');

    const back = await connect(member!, seen.id);
    await back.next((frame) => frame.type === 'resumed');
    // The message in the gap went with its group (a deleted group takes its messages).
    assert.deepEqual(shown(back.frames), ['group_deleted', 'resumed']);
    assert.equal(back.events('group_deleted')[0].data.group.guid, group.guid);
    const other = await connect(outsider!, own.id);
    await other.next((frame) => frame.type === 'resumed');
    assert.deepEqual(shown(other.frames), ['resumed']);

    // Kept as long as the events: the retention takes what is older.
    const rows = () => sql<{ uid: string }>`select uid from gateway_deleted_group_members where app_id = ${t.appA.appId} and guid = ${group.guid} order by uid`.execute(t.database.db);
    assert.deepEqual((await rows()).rows.map((row) => row.uid).sort(), [member, owner].sort());
    await sql`update gateway_deleted_group_members set deleted_at = now() - interval '8 days' where app_id = ${t.appA.appId} and guid = ${group.guid}`.execute(t.database.db);
    await t.services.eventRetention.sweep();
    assert.deepEqual((await rows()).rows, []);
    for (const client of [o, back, other]) await client.close();
  });

  it('shows a member removed while away what came before the removal, the removal, and nothing after; and again after a rejoin', async () => {
    const [owner, member] = await newUids(t, t.appA, 2);
    const group = await newGroup(t, t.appA, { members: { participants: [member!] } }, owner);
    const o = await connect(owner!);
    const m = await connect(member!);
    await toGroup(owner!, group.guid, 'seen');
    const seen = await m.next(textOf('seen'));
    await m.close();
    await toGroup(owner!, group.guid, 'before the kick');
    const kicked = await t.call(t.appA, `/v3/groups/${group.guid}/members/${member}`, { method: 'DELETE' });
    assert.equal(kicked.statusCode, 200, kicked.body);
    await toGroup(owner!, group.guid, 'after the kick');
    const added = await t.call(t.appA, `/v3/groups/${group.guid}/members`, { method: 'POST', body: { participants: [member] } });
    assert.equal(added.statusCode, 200, added.body);
    await toGroup(owner!, group.guid, 'after the rejoin');
    await o.next(textOf('after the rejoin'));

    const back = await connect(member!, seen.id);
    await back.next((frame) => frame.type === 'resumed');
    assert.deepEqual(shown(back.frames), ['before the kick', 'group_member_kicked', 'group_member_added', 'after the rejoin', 'resumed']);
    for (const client of [o, back]) await client.close();
  });
});
