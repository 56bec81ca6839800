import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids, newUser } from '../helpers/factories.js';
import { DEEP_PAGE_OFFSET } from '../../src/repositories/users.repository.js';

let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const uids = (n: number) => newUids(t, t.appA, n);
const scopes = async (guid: string) => Object.fromEntries(body(await t.call(t.appA, `/v3/groups/${guid}/members`, { query: { perPage: '1000' } })).data.map((m: any) => [m.uid, m.scope]));
const add = (guid: string, payload: Record<string, unknown>, onBehalfOf?: string) =>
  t.call(t.appA, `/v3/groups/${guid}/members`, { method: 'POST', body: payload, ...(onBehalfOf ? { onBehalfOf } : {}) });

/** A group with an owner, an admin, a moderator and two participants. */
async function staffedGroup(extra: Record<string, unknown> = {}) {
  const [owner, admin, moderator, p1, p2] = await uids(5);
  const group = await newGroup(t, t.appA, { ...extra, members: { admins: [admin!], moderators: [moderator!], participants: [p1!, p2!] } }, owner!);
  return { guid: group.guid as string, owner: owner!, admin: admin!, moderator: moderator!, p1: p1!, p2: p2! };
}

describe('add-group-members', () => {
  it('adds members with their scopes and answers per uid', async () => {
    const group = await newGroup(t, t.appA);
    const [a, m, p] = await uids(3);
    const missing = uniqueId();
    const response = await add(group.guid, { admins: [a], moderators: [m], participants: [p, missing] });
    assert.equal(response.statusCode, 200, response.body);
    // Each success carries its "added" action message (here reduced to its action).
    const outcomes = JSON.parse(JSON.stringify(body(response).data, (key, value) => (key === 'data' && value?.category === 'action' ? value.data.action : value)));
    assert.deepEqual(outcomes, {
      admins: { [a!]: { success: true, data: 'added' } },
      moderators: { [m!]: { success: true, data: 'added' } },
      participants: { [p!]: { success: true, data: 'added' }, [missing]: { success: false, error: { code: 'ERR_UID_NOT_FOUND', message: `The UID ${missing} does not exist.` } } },
    });
    assert.deepEqual(await scopes(group.guid), { [a!]: 'admin', [m!]: 'moderator', [p!]: 'participant' });
    assert.equal(body(await t.call(t.appA, `/v3/groups/${group.guid}`)).data.membersCount, 3);
  });

  it('answers ERR_ALREADY_JOINED and ERR_BANNED_GROUPMEMBER per uid', async () => {
    const [member, banned] = await uids(2);
    const group = await newGroup(t, t.appA, { members: { participants: [member], usersToBan: [banned] } });
    const result = body(await add(group.guid, { participants: [member, banned] })).data.participants;
    assert.equal(result[member!].error.code, 'ERR_ALREADY_JOINED');
    assert.equal(result[banned!].error.code, 'ERR_BANNED_GROUPMEMBER');
  });

  it('bans with usersToBan, removing the membership', async () => {
    const [member] = await uids(1);
    const group = await newGroup(t, t.appA, { members: { participants: [member] } });
    assert.deepEqual(body(await add(group.guid, { usersToBan: [member] })).data, { usersToBan: { [member!]: { success: true } } });
    assert.deepEqual(await scopes(group.guid), {});
    assert.equal(body(await add(group.guid, { usersToBan: [member] })).data.usersToBan[member!].error.code, 'ERR_ALREADY_BANNED');
  });

  it('gives one membership when the same user is added concurrently', async () => {
    const group = await newGroup(t, t.appA);
    const [user] = await uids(1);
    const responses = await Promise.all(Array.from({ length: 8 }, () => add(group.guid, { participants: [user] })));
    const outcomes = responses.map((r) => body(r).data.participants[user!]);
    assert.equal(outcomes.filter((o: any) => o.success).length, 1);
    assert.ok(outcomes.filter((o: any) => !o.success).every((o: any) => o.error.code === 'ERR_ALREADY_JOINED'));
    const rows = await t.database.db.selectFrom('group_members').selectAll().where('app_id', '=', t.appA.appId).where('guid', '=', group.guid).execute();
    assert.equal(rows.length, 1);
    assert.equal(body(await t.call(t.appA, `/v3/groups/${group.guid}`)).data.membersCount, 1);
  });

  it('applies the acting member’s clearance with onBehalfOf', async () => {
    const g = await staffedGroup();
    const [x, y, z] = await uids(3);
    const byParticipant = await add(g.guid, { participants: [x] }, g.p1);
    assert.equal(byParticipant.statusCode, 403);
    assert.equal(errorCode(byParticipant), 'ERR_GROUP_NO_CLEARANCE');
    const byModerator = body(await add(g.guid, { admins: [x], participants: [y] }, g.moderator)).data;
    assert.equal(byModerator.admins[x!].error.code, 'ERR_GROUP_NO_SCOPE_CLEARANCE');
    assert.equal(byModerator.participants[y!].success, true);
    assert.equal(body(await add(g.guid, { admins: [z] }, g.admin)).data.admins[z!].success, true);
    const outsider = (await uids(1))[0]!;
    assert.equal(errorCode(await add(g.guid, { participants: [x] }, outsider)), 'ERR_GROUP_NOT_JOINED');
  });

  it('lets a moderator ban participants but not admins or the owner', async () => {
    const g = await staffedGroup();
    const result = body(await add(g.guid, { usersToBan: [g.p1, g.admin, g.owner] }, g.moderator)).data.usersToBan;
    assert.equal(result[g.p1].success, true);
    assert.equal(result[g.admin].error.code, 'ERR_GROUP_NO_CLEARANCE');
    assert.equal(result[g.owner].error.code, 'ERR_GROUP_NO_CLEARANCE');
  });

  it('refuses more than 25 uids, an empty call, and malformed arrays', async () => {
    const group = await newGroup(t, t.appA);
    for (const payload of [
      { participants: Array.from({ length: 20 }, (_, i) => `p${i}`), admins: Array.from({ length: 6 }, (_, i) => `a${i}`) },
      {},
      { participants: 'alice' },
      { participants: ['a b'] },
    ]) {
      const response = await add(group.guid, payload);
      assert.equal(response.statusCode, 400, JSON.stringify(payload));
      assert.equal(errorCode(response), 'ERR_BAD_REQUEST');
    }
  });

  it("answers ERR_GUID_NOT_FOUND for an unknown group and another app's group", async () => {
    const [user] = await uids(1);
    assert.equal(errorCode(await add(uniqueId(), { participants: [user] })), 'ERR_GUID_NOT_FOUND');
    const group = await newGroup(t, t.appA);
    const other = await t.call(t.appB, `/v3/groups/${group.guid}/members`, { method: 'POST', body: { participants: [user] } });
    assert.equal(errorCode(other), 'ERR_GUID_NOT_FOUND');
  });

  it("does not add another app's user", async () => {
    const group = await newGroup(t, t.appA);
    const stranger = await newUser(t, t.appB);
    assert.equal(body(await add(group.guid, { participants: [stranger.uid] })).data.participants[stranger.uid].error.code, 'ERR_UID_NOT_FOUND');
  });
});

describe('joining', () => {
  it('joins a public group', async () => {
    const group = await newGroup(t, t.appA);
    const [user] = await uids(1);
    const response = await add(group.guid, { participants: [user] }, user);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(await scopes(group.guid), { [user!]: 'participant' });
    const again = await add(group.guid, { participants: [user] }, user);
    assert.equal(errorCode(again), 'ERR_ALREADY_JOINED');
  });

  it('joins a password group with its password only', async () => {
    const group = await newGroup(t, t.appA, { type: 'password', password: 'open sesame' });
    const [user] = await uids(1);
    const none = await add(group.guid, { participants: [user] }, user);
    assert.equal(none.statusCode, 400);
    assert.equal(errorCode(none), 'ERR_EMPTY_GROUP_PASS');
    const wrong = await add(group.guid, { participants: [user], password: 'open' }, user);
    assert.equal(wrong.statusCode, 400);
    assert.equal(errorCode(wrong), 'ERR_WRONG_GROUP_PASS');
    assert.equal((await add(group.guid, { participants: [user], password: 'open sesame' }, user)).statusCode, 200);
    // Staff add members to a password group without the password.
    const [other] = await uids(1);
    assert.equal(body(await add(group.guid, { participants: [other] })).data.participants[other!].success, true);
  });

  it('cannot join a private group', async () => {
    const group = await newGroup(t, t.appA, { type: 'private' });
    const [user] = await uids(1);
    const response = await add(group.guid, { participants: [user] }, user);
    assert.equal(response.statusCode, 403);
    assert.equal(errorCode(response), 'ERR_GROUP_JOIN_NOT_ALLOWED');
    assert.deepEqual(await scopes(group.guid), {});
  });

  it('cannot join while banned, until unbanned', async () => {
    const [user] = await uids(1);
    const group = await newGroup(t, t.appA, { members: { usersToBan: [user] } });
    const response = await add(group.guid, { participants: [user] }, user);
    assert.equal(response.statusCode, 403);
    assert.equal(errorCode(response), 'ERR_BANNED_GROUPMEMBER');
    await t.call(t.appA, `/v3/groups/${group.guid}/bannedusers/${user}`, { method: 'DELETE' });
    assert.equal((await add(group.guid, { participants: [user] }, user)).statusCode, 200);
  });

  it('cannot join as an admin', async () => {
    const group = await newGroup(t, t.appA);
    const [user] = await uids(1);
    assert.equal(errorCode(await add(group.guid, { admins: [user] }, user)), 'ERR_GROUP_NO_SCOPE_CLEARANCE');
  });
});

describe('list-group-members', () => {
  it('lists members in uid order with scope, joinedAt and pagination; filters by scopes', async () => {
    const g = await staffedGroup();
    const all = body(await t.call(t.appA, `/v3/groups/${g.guid}/members`));
    assert.equal(all.meta.pagination.total, 5);
    const listed = all.data.map((m: any) => m.uid);
    assert.deepEqual(listed, [...listed].sort());
    assert.ok(all.data.every((m: any) => typeof m.joinedAt === 'number' && m.name && m.scope));
    const page = body(await t.call(t.appA, `/v3/groups/${g.guid}/members`, { query: { perPage: '2', page: '3' } }));
    assert.deepEqual(page.meta.pagination, { total: 5, count: 1, per_page: 2, current_page: 3, total_pages: 3 });
    const staff = body(await t.call(t.appA, `/v3/groups/${g.guid}/members`, { query: { scopes: 'admin,moderator' } }));
    assert.deepEqual(new Set(staff.data.map((m: any) => m.uid)), new Set([g.owner, g.admin, g.moderator]));
    assert.equal(staff.meta.pagination.total, 3);
    assert.equal(body(await t.call(t.appA, `/v3/groups/${g.guid}/members`, { query: { status: 'available' } })).data.length, 0);
  });

  it("with onBehalfOf, names that user's conversation with each member; refuses an unknown one", async () => {
    const g = await staffedGroup();
    const members = body(await t.call(t.appA, `/v3/groups/${g.guid}/members`, { onBehalfOf: g.p1 })).data;
    assert.equal(members.length, 5);
    for (const m of members) assert.equal(m.conversationId, [m.uid, g.p1].sort().join('_user_'), m.uid);
    assert.ok(
      body(await t.call(t.appA, `/v3/groups/${g.guid}/members`)).data.every((m: any) => m.conversationId === undefined),
      'only with onBehalfOf',
    );
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${g.guid}/members`, { onBehalfOf: uniqueId() })), 'ERR_UID_NOT_FOUND');
  });

  it('refuses unknown scopes and answers ERR_GUID_NOT_FOUND across apps', async () => {
    const g = await staffedGroup();
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${g.guid}/members`, { query: { scopes: 'owner' } })), 'ERR_BAD_REQUEST');
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${g.guid}/members`)), 'ERR_GUID_NOT_FOUND');
  });
});

describe('change-group-member-scope', () => {
  const change = (guid: string, uid: string, scope: string | undefined, onBehalfOf?: string) =>
    t.call(t.appA, `/v3/groups/${guid}/members/${uid}`, { method: 'PUT', body: scope === undefined ? {} : { scope }, ...(onBehalfOf ? { onBehalfOf } : {}) });

  it('changes a scope and answers the membership', async () => {
    const g = await staffedGroup();
    const response = await change(g.guid, g.p1, 'moderator');
    assert.equal(response.statusCode, 200, response.body);
    const data = body(response).data;
    assert.deepEqual({ guid: data.guid, uid: data.uid, scope: data.scope }, { guid: g.guid, uid: g.p1, scope: 'moderator' });
    assert.equal(typeof data.joinedAt, 'number');
    assert.equal(body(await change(g.guid, g.p1, undefined)).data.scope, 'participant', 'the vendor’s default scope');
  });

  it('answers ERR_SAME_SCOPE, ERR_NOT_A_MEMBER and ERR_GUID_NOT_FOUND', async () => {
    const g = await staffedGroup();
    assert.equal(errorCode(await change(g.guid, g.p1, 'participant')), 'ERR_SAME_SCOPE');
    const [outsider] = await uids(1);
    assert.equal(errorCode(await change(g.guid, outsider!, 'admin')), 'ERR_NOT_A_MEMBER');
    assert.equal(errorCode(await change(uniqueId(), g.p1, 'admin')), 'ERR_GUID_NOT_FOUND');
    assert.equal(errorCode(await change(g.guid, g.p1, 'owner')), 'ERR_BAD_REQUEST');
  });

  it('applies clearance with onBehalfOf: a moderator cannot change an admin, nobody their own scope', async () => {
    const g = await staffedGroup();
    assert.equal(errorCode(await change(g.guid, g.admin, 'participant', g.moderator)), 'ERR_GROUP_NO_SCOPE_CLEARANCE');
    assert.equal(errorCode(await change(g.guid, g.p1, 'admin', g.moderator)), 'ERR_GROUP_NO_SCOPE_CLEARANCE');
    assert.equal(errorCode(await change(g.guid, g.p2, 'moderator', g.p1)), 'ERR_GROUP_NO_SCOPE_CLEARANCE');
    assert.equal(errorCode(await change(g.guid, g.moderator, 'admin', g.moderator)), 'ERR_GROUP_NO_SELF_ACTION');
    assert.equal(errorCode(await change(g.guid, g.owner, 'participant', g.admin)), 'ERR_GROUP_NO_CLEARANCE');
    assert.equal(body(await change(g.guid, g.p1, 'moderator', g.moderator)).data.scope, 'moderator');
    assert.equal(body(await change(g.guid, g.moderator, 'participant', g.admin)).data.scope, 'participant');
    assert.equal(body(await change(g.guid, g.admin, 'moderator', g.owner)).data.scope, 'moderator');
  });
});

describe('kick-group-member', () => {
  const kick = (guid: string, uid: string, onBehalfOf?: string) => t.call(t.appA, `/v3/groups/${guid}/members/${uid}`, { method: 'DELETE', ...(onBehalfOf ? { onBehalfOf } : {}) });

  it('kicks a member', async () => {
    const g = await staffedGroup();
    const response = await kick(g.guid, g.p1);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { success: true, message: `The member with ${g.p1} has been kicked from the Group with ${g.guid}.` });
    assert.equal((await scopes(g.guid))[g.p1], undefined);
    assert.equal(body(await t.call(t.appA, `/v3/groups/${g.guid}`)).data.membersCount, 4);
    assert.equal(errorCode(await kick(g.guid, g.p1)), 'ERR_NOT_A_MEMBER');
  });

  it('never kicks the owner', async () => {
    const g = await staffedGroup();
    for (const actor of [undefined, g.admin, g.owner]) {
      assert.equal(errorCode(await kick(g.guid, g.owner, actor)), 'ERR_GROUP_NO_CLEARANCE');
    }
  });

  it('applies clearance with onBehalfOf: a participant cannot kick, a moderator cannot kick an admin', async () => {
    const g = await staffedGroup();
    assert.equal(errorCode(await kick(g.guid, g.p2, g.p1)), 'ERR_GROUP_NO_CLEARANCE');
    assert.equal(errorCode(await kick(g.guid, g.admin, g.moderator)), 'ERR_GROUP_NO_CLEARANCE');
    assert.equal((await kick(g.guid, g.p1, g.moderator)).statusCode, 200);
    assert.equal((await kick(g.guid, g.moderator, g.admin)).statusCode, 200);
  });

  it('lets a member leave by kicking themselves', async () => {
    const g = await staffedGroup();
    const response = await kick(g.guid, g.p2, g.p2);
    assert.equal(response.statusCode, 200);
    assert.match(body(response).data.message, /has left/);
  });

  it("answers ERR_GUID_NOT_FOUND for another app's group", async () => {
    const g = await staffedGroup();
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${g.guid}/members/${g.p1}`, { method: 'DELETE' })), 'ERR_GUID_NOT_FOUND');
    assert.equal((await scopes(g.guid))[g.p1], 'participant');
  });
});

describe('banned users', () => {
  const ban = (guid: string, uid: string, onBehalfOf?: string) => t.call(t.appA, `/v3/groups/${guid}/bannedusers/${uid}`, { method: 'POST', ...(onBehalfOf ? { onBehalfOf } : {}) });
  const unban = (guid: string, uid: string, onBehalfOf?: string) => t.call(t.appA, `/v3/groups/${guid}/bannedusers/${uid}`, { method: 'DELETE', ...(onBehalfOf ? { onBehalfOf } : {}) });

  it('bans a member (removing them) and a non-member; lists and unbans them', async () => {
    const g = await staffedGroup();
    const [stranger] = await uids(1);
    const response = await ban(g.guid, g.p1);
    assert.equal(response.statusCode, 200, response.body);
    assert.deepEqual(body(response).data, { success: true, message: `The user with uid ${g.p1} has been banned from the Group with ${g.guid}.` });
    assert.equal((await ban(g.guid, stranger!)).statusCode, 200);
    assert.equal((await scopes(g.guid))[g.p1], undefined);
    const listed = body(await t.call(t.appA, `/v3/groups/${g.guid}/bannedusers`));
    assert.deepEqual(new Set(listed.data.map((u: any) => u.uid)), new Set([g.p1, stranger]));
    assert.equal(listed.meta.pagination.total, 2);
    assert.ok(listed.data.every((u: any) => typeof u.bannedAt === 'number' && u.conversationId === undefined));
    // With onBehalfOf: as that user sees each one, their blocks and their conversation.
    const blocked = await t.call(t.appA, `/v3/users/${g.owner}/blockedusers`, { method: 'POST', body: { blockedUids: [stranger] } });
    assert.equal(blocked.statusCode, 200, blocked.body);
    const seen = body(await t.call(t.appA, `/v3/groups/${g.guid}/bannedusers`, { onBehalfOf: g.owner })).data;
    assert.deepEqual(seen.map((u: any) => u.conversationId).sort(), [g.p1, stranger!].map((uid) => [uid, g.owner].sort().join('_user_')).sort());
    const byUid = Object.fromEntries(seen.map((u: any) => [u.uid, u]));
    assert.deepEqual([byUid[stranger!].blockedByMe, byUid[stranger!].hasBlockedMe, typeof byUid[stranger!].blockedAt], [true, false, 'number']);
    assert.deepEqual([byUid[g.p1].blockedByMe, byUid[g.p1].hasBlockedMe, byUid[g.p1].blockedAt], [false, false, undefined]);
    const plain = body(await t.call(t.appA, `/v3/groups/${g.guid}/bannedusers`)).data;
    assert.ok(
      plain.every((u: any) => u.blockedByMe === undefined && u.conversationId === undefined),
      'only with onBehalfOf',
    );
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${g.guid}/bannedusers`, { onBehalfOf: uniqueId() })), 'ERR_UID_NOT_FOUND');
    const lifted = await unban(g.guid, g.p1);
    assert.equal(lifted.statusCode, 200, lifted.body);
    assert.equal(body(await t.call(t.appA, `/v3/groups/${g.guid}/bannedusers`)).data.length, 1);
    assert.equal((await scopes(g.guid))[g.p1], undefined, 'unbanning does not re-add');
  });

  it('answers ERR_ALREADY_BANNED, ERR_NOT_A_BANNED_USER, ERR_UID_NOT_FOUND and ERR_GUID_NOT_FOUND', async () => {
    const g = await staffedGroup();
    await ban(g.guid, g.p1);
    assert.equal(errorCode(await ban(g.guid, g.p1)), 'ERR_ALREADY_BANNED');
    assert.equal(errorCode(await unban(g.guid, g.p2)), 'ERR_NOT_A_BANNED_USER');
    assert.equal(errorCode(await ban(g.guid, uniqueId())), 'ERR_UID_NOT_FOUND');
    assert.equal(errorCode(await ban(uniqueId(), g.p1)), 'ERR_GUID_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${uniqueId()}/bannedusers`)), 'ERR_GUID_NOT_FOUND');
  });

  it('applies clearance with onBehalfOf and never bans the owner', async () => {
    const g = await staffedGroup();
    assert.equal(errorCode(await ban(g.guid, g.p2, g.p1)), 'ERR_GROUP_NO_CLEARANCE');
    assert.equal(errorCode(await ban(g.guid, g.admin, g.moderator)), 'ERR_GROUP_NO_CLEARANCE');
    assert.equal(errorCode(await ban(g.guid, g.owner)), 'ERR_GROUP_NO_CLEARANCE');
    assert.equal(errorCode(await ban(g.guid, g.moderator, g.moderator)), 'ERR_GROUP_NO_SELF_ACTION');
    assert.equal((await ban(g.guid, g.p1, g.moderator)).statusCode, 200);
    assert.equal(errorCode(await unban(g.guid, g.p1, g.p2)), 'ERR_GROUP_NO_CLEARANCE');
    assert.equal((await unban(g.guid, g.p1, g.moderator)).statusCode, 200);
  });

  it('keeps bans invisible to another app', async () => {
    const g = await staffedGroup();
    await ban(g.guid, g.p1);
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${g.guid}/bannedusers`)), 'ERR_GUID_NOT_FOUND');
    assert.equal(errorCode(await t.call(t.appB, `/v3/groups/${g.guid}/bannedusers/${g.p1}`, { method: 'DELETE' })), 'ERR_GUID_NOT_FOUND');
    assert.equal(body(await t.call(t.appA, `/v3/groups/${g.guid}/bannedusers`)).data.length, 1);
  });

  it('refuses bad paging', async () => {
    const g = await staffedGroup();
    assert.equal(errorCode(await t.call(t.appA, `/v3/groups/${g.guid}/bannedusers`, { query: { perPage: '0' } })), 'ERR_BAD_REQUEST');
  });
});

describe('list-group-members, deep pages (found among the memberships before their users are read)', () => {
  let deep: TestApp;
  const total = DEEP_PAGE_OFFSET + 300;
  const guid = 'deep-group';
  // Uids whose order is not their insertion order; every fifth a moderator.
  const uids = Array.from({ length: total }, (_, i) => `m-${((i * 7919) % total).toString(36).padStart(4, '0')}-${i}`);
  const scopeOf = (i: number) => (i % 5 === 0 ? 'moderator' : 'participant');
  const sorted = [...uids].sort();
  const moderators = uids.filter((_, i) => scopeOf(i) === 'moderator').sort();

  const list = async (app: 'appA' | 'appB', query: Record<string, string>) => {
    const response = await deep.call(deep[app], `/v3/groups/${guid}/members`, { query });
    assert.equal(response.statusCode, 200, response.body);
    return body(response);
  };

  before(async () => {
    deep = await createTestApp();
    for (const app of ['appA', 'appB'] as const) {
      const users = Object.fromEntries(uids.map((uid) => [uid, { uid, name: `Name ${uid}` }]));
      const importedUsers = await deep.call(deep[app], '/v3.0/data_import/users', { method: 'POST', body: { users } });
      assert.equal(importedUsers.statusCode, 200, importedUsers.body);
      const created = await deep.call(deep[app], '/v3/groups', { method: 'POST', body: { guid, name: 'Deep', type: 'public' } });
      assert.equal(created.statusCode, 200, created.body);
      // appB's group holds every other user only: its members never show in appA's pages.
      const chosen = uids.map((uid, i) => ({ uid, i })).filter(({ i }) => app === 'appA' || i % 2 === 0);
      const members = Object.fromEntries(chosen.map(({ uid, i }) => [`${guid}_member_${uid}`, { memberId: `${guid}_member_${uid}`, guid, uid, scope: scopeOf(i) }]));
      const importedMembers = await deep.call(deep[app], '/v3.0/data_import/members', { method: 'POST', body: { members } });
      assert.equal(importedMembers.statusCode, 200, importedMembers.body);
    }
  });
  after(async () => {
    await deep?.close();
  });

  it('pages through every member once, in uid order, across the deep-page offset', async () => {
    const seen: string[] = [];
    for (let page = 1; ; page++) {
      const result = await list('appA', { perPage: '100', page: String(page) });
      assert.equal(result.meta.pagination.total, total);
      if (result.data.length === 0) break;
      seen.push(...result.data.map((member: any) => member.uid));
    }
    assert.deepEqual(seen, sorted);
    const deepPage = await list('appA', { perPage: '200', page: '6' });
    assert.deepEqual(
      deepPage.data.map((member: any) => member.uid),
      sorted.slice(1000, 1200),
    );
    const first = deepPage.data[0];
    assert.deepEqual([first.name, first.scope, typeof first.joinedAt], [`Name ${sorted[1000]}`, scopeOf(uids.indexOf(sorted[1000]!)), 'number']);
    const other = await list('appB', { perPage: '100', page: '11' });
    assert.deepEqual(other.data, [], "appB's group has half the members");
  });

  it('keeps the scope and status filters on a deep page', async () => {
    const staff = await list('appA', { perPage: '100', page: '11', scopes: 'moderator' });
    assert.deepEqual(staff.data, [], 'fewer than 1,001 moderators');
    assert.equal(staff.meta.pagination.total, moderators.length);
    const participants = uids.filter((_, i) => scopeOf(i) === 'participant').sort();
    const byScope = await list('appA', { perPage: '100', page: '11', scopes: 'participant' });
    assert.ok(participants.length > 1000);
    assert.deepEqual(
      byScope.data.map((member: any) => member.uid),
      participants.slice(1000, 1100),
    );
    assert.equal(byScope.meta.pagination.total, participants.length);
    assert.equal(moderators.length, total - participants.length);
    const byStatus = await list('appA', { perPage: '100', page: '11', status: 'offline' });
    assert.deepEqual(
      byStatus.data.map((member: any) => member.uid),
      sorted.slice(1000, 1100),
    );
  });
});
