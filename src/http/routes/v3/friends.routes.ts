import { pageOf } from './paging.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import { AddFriendsBody, AddFriendsResponse, FriendListResponse, ListFriendsQuery, RemoveFriendsBody, RemoveFriendsResponse } from '../../../schemas/friends.schema.js';
import { UidParams } from '../../../schemas/users.schema.js';

const tags = ['Friends'];

export const friendsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const friends = services.friends;

  app.post(
    '/users/:uid/friends',
    {
      schema: {
        operationId: 'add-friend',
        tags,
        summary: 'Add',
        description: 'Makes the user a friend of each given user, both ways, answering per uid.',
        params: UidParams,
        body: AddFriendsBody,
        response: { 200: AddFriendsResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await friends.add(await actorContext(request, services), request.params.uid, request.body.accepted) }),
  );

  app.get(
    '/users/:uid/friends',
    {
      schema: {
        operationId: 'list-all-friends',
        tags,
        summary: 'List',
        description: "Lists the user's friends, sorted by name, with blockedByMe and hasBlockedMe relative to the user.",
        params: UidParams,
        querystring: ListFriendsQuery,
        response: { 200: FriendListResponse, ...errorResponses },
      },
    },
    async (request) =>
      friends.list(await actorContext(request, services), request.params.uid, {
        ...pageOf(request.query),
        searchKey: request.query.searchKey || undefined,
      }),
  );

  app.delete(
    '/users/:uid/friends',
    {
      schema: {
        operationId: 'remove-friend',
        tags,
        summary: 'Remove',
        description: 'Ends the friendships with the given users, both ways; uids that are not friends are ignored.',
        params: UidParams,
        body: RemoveFriendsBody,
        response: { 200: RemoveFriendsResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await friends.remove(await actorContext(request, services), request.params.uid, request.body.friends) }),
  );
};
