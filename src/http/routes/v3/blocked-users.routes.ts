import { pageOf } from './paging.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { BlockedUserListResponse, BlockResultsResponse, BlockUsersBody, ListBlockedUsersQuery, UnblockUsersBody } from '../../../schemas/blocked-users.schema.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import { UidParams } from '../../../schemas/users.schema.js';

const tags = ['Blocked Users'];

export const blockedUsersRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const blocked = services.blockedUsers;

  app.post(
    '/users/:uid/blockedusers',
    {
      schema: {
        operationId: 'block-users',
        tags,
        summary: 'Block',
        description: 'Blocks the given users for the user, answering per uid; blocking a blocked user succeeds.',
        params: UidParams,
        body: BlockUsersBody,
        response: { 200: BlockResultsResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await blocked.block(await actorContext(request, services), request.params.uid, request.body.blockedUids) }),
  );

  app.delete(
    '/users/:uid/blockedusers',
    {
      schema: {
        operationId: 'unblock-users',
        tags,
        summary: 'Unblock',
        description: 'Unblocks the given users for the user, answering per uid; unblocking a user who is not blocked succeeds.',
        params: UidParams,
        body: UnblockUsersBody,
        response: { 200: BlockResultsResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await blocked.unblock(await actorContext(request, services), request.params.uid, request.body.blockedUids) }),
  );

  app.get(
    '/users/:uid/blockedusers',
    {
      schema: {
        operationId: 'list-blocked-users',
        tags,
        summary: 'List',
        description: 'Lists the users the user blocked (or who blocked them, or both), sorted by name.',
        params: UidParams,
        querystring: ListBlockedUsersQuery,
        response: { 200: BlockedUserListResponse, ...errorResponses },
      },
    },
    async (request) =>
      blocked.list(await actorContext(request, services), request.params.uid, {
        ...pageOf(request.query),
        direction: request.query.direction ?? 'blockedByMe',
        searchKey: request.query.searchKey || undefined,
      }),
  );
};
