import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ForeignKeyViolation } from '../../src/db/driver-errors.js';
import { silentLogger, type RequestContext } from '../../src/domain/context.js';
import { AppError } from '../../src/domain/errors.js';
import { extended } from '../../src/domain/objects.js';
import { againAsActor, type ActorContext } from '../../src/services/actor.js';
import { body, createTestApp, errorCode, uniqueId, type TestApp } from '../helpers/app.js';
import { newGroup, newUids } from '../helpers/factories.js';

/**
 * The actor (the onBehalfOf user) is read once and put on the context (services/actor.ts). A
 * request whose input a service refuses before it reads the actor keeps that error, whoever
 * onBehalfOf names; elsewhere an unknown onBehalfOf is the answer.
 */
let t: TestApp;
before(async () => {
  t = await createTestApp();
});
after(async () => {
  await t.close();
});

const expectError = (response: { statusCode: number; body: string }, code: string, uid?: string) => {
  assert.equal(errorCode(response as never), code, response.body);
  if (uid !== undefined) assert.match(response.body, new RegExp(uid));
};

describe('the order of the actor and the input checks', () => {
  it('a bad input checked before the actor is answered as such, whoever onBehalfOf names', async () => {
    const nobody = uniqueId('nobody');
    const [alice, bob] = await newUids(t, t.appA, 2);
    const group = await newGroup(t, t.appA, {}, alice);
    const sent = await t.call(t.appA, '/v3/messages', {
      method: 'POST',
      body: { receiver: bob, receiverType: 'user', data: { text: 'hi' } },
      onBehalfOf: alice,
    });
    const id = String(body(sent).data.id);
    const as = (options: Record<string, unknown>) => ({ ...options, onBehalfOf: nobody });

    expectError(await t.call(t.appA, '/v3/groups', as({ method: 'POST', body: { guid: uniqueId('g'), name: 'G', type: 'password' } })), 'ERR_EMPTY_GROUP_PASS');
    expectError(await t.call(t.appA, '/v3/groups', as({ query: { affix: 'append' } })), 'ERR_BAD_REQUEST');
    expectError(await t.call(t.appA, `/v3/groups/${group.guid}/members`, as({ method: 'POST', body: {} })), 'ERR_BAD_REQUEST');
    expectError(await t.call(t.appA, `/v3/messages/${id}`, as({ method: 'PUT', body: {} })), 'ERR_BAD_REQUEST');
    for (const method of ['POST', 'DELETE', 'GET']) {
      expectError(await t.call(t.appA, `/v3/messages/${id}/reactions/%20`, as({ method })), 'ERR_BAD_REQUEST');
    }
    expectError(await t.call(t.appA, `/v3/users/${bob}/conversation`, as({ method: 'DELETE', body: { conversationWith: alice } })), 'ERR_BAD_REQUEST');
  });

  it('elsewhere an unknown or deactivated onBehalfOf is not found, before anything else', async () => {
    const nobody = uniqueId('nobody');
    const [alice, gone] = await newUids(t, t.appA, 2);
    await t.call(t.appA, '/v3/users', { method: 'DELETE', body: { uidsToDeactivate: [gone] } });
    const missing = uniqueId('missing');
    const paths: Array<[string, string?, unknown?]> = [
      ['/v3/rate_limits'],
      [`/v3/users/${alice}`],
      ['/v3/users'],
      [`/v3/groups/${missing}`],
      [`/v3/groups/${missing}`, 'DELETE'],
      [`/v3/groups/${missing}/members`],
      [`/v3/groups/${missing}/members/${alice}`, 'DELETE'],
      [`/v3/users/${missing}/friends`],
      [`/v3/users/${missing}/blockedusers`],
      ['/v3/messages/99999999999'],
      ['/v3/messages/99999999999/thread'],
      [`/v3/users/${missing}/conversation`],
      ['/v3/conversations/x_user_y'],
      [`/v3/users/${alice}/conversation/read`, 'POST', {}],
    ];
    for (const uid of [nobody, gone!]) {
      for (const [url, method, payload] of paths) {
        const response = await t.call(t.appA, url, { onBehalfOf: uid, ...(method ? { method: method as never } : {}), ...(payload ? { body: payload } : {}) });
        expectError(response, 'ERR_UID_NOT_FOUND', uid);
      }
    }
  });
});

describe('UsersService.withActor', () => {
  it('reads the actor once: a context that carries its actor is answered as it is', async () => {
    const [alice, bob] = await newUids(t, t.appA, 2);
    const ctx: RequestContext = { appId: t.appA.appId, requestId: 't', log: silentLogger, onBehalfOf: alice };
    const actorCtx = await t.services.users.withActor(ctx);
    assert.equal(actorCtx.actor?.uid, alice);
    assert.equal(await t.services.users.withActor(actorCtx), actorCtx);
    assert.equal((await t.services.users.withActor({ appId: t.appA.appId, requestId: 't', log: silentLogger })).actor, undefined);
    // A context made from it for another user (a bot message's sender) is read again.
    const asBob = await t.services.users.withActor(extended(actorCtx, { onBehalfOf: bob! }));
    assert.equal(asBob.actor?.uid, bob);
    await assert.rejects(t.services.users.withActor(extended(actorCtx, { onBehalfOf: uniqueId('nobody') })), (error: AppError) => error.code === 'ERR_UID_NOT_FOUND');
  });

  it('againAsActor reads the actor again before a run again', async () => {
    const ctx = { appId: 'a', requestId: 't', log: silentLogger, onBehalfOf: 'alice', actor: undefined } as unknown as ActorContext;
    const fresh = extended(ctx, { requestId: 'again' });
    const seen: string[] = [];
    const result = await againAsActor(
      ctx,
      async () => fresh,
      async (current) => {
        seen.push(current.requestId);
        if (seen.length === 1) throw new ForeignKeyViolation(undefined, undefined);
        return 'done';
      },
    );
    assert.equal(result, 'done');
    assert.deepEqual(seen, ['t', 'again']);
    await assert.rejects(
      againAsActor(
        ctx,
        async () => {
          throw new AppError('ERR_UID_NOT_FOUND', { params: { uid: 'alice' } });
        },
        async () => {
          throw new ForeignKeyViolation(undefined, undefined);
        },
      ),
      (error: AppError) => error.code === 'ERR_UID_NOT_FOUND',
    );
  });
});
