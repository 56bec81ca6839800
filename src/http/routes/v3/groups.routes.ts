import { pageOf } from './paging.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { errorResponses, OnBehalfOfHeader } from '../../../schemas/common.schema.js';
import { CreateGroupBody, GroupDeleteResponse, GroupListResponse, GroupResponse, GuidParams, ListGroupsQuery, UpdateGroupBody } from '../../../schemas/groups.schema.js';

const tags = ['Groups'];
const headers = Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) });

export const groupsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    '/groups',
    {
      config: { rateLimit: 'core' },
      schema: {
        operationId: 'create-group',
        tags,
        summary: 'Create',
        description: 'Creates a group. Its owner (`owner`, else the onBehalfOf user) becomes an admin member; inline `members` are answered per uid.',
        headers,
        body: CreateGroupBody,
        response: { 200: GroupResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.groups.create(request.ctx, request.body) }),
  );

  app.get(
    '/groups',
    {
      schema: {
        operationId: 'list-groups',
        tags,
        summary: 'List',
        description: 'Lists the groups of the app; with onBehalfOf, each carries that user’s membership.',
        headers,
        querystring: ListGroupsQuery,
        response: { 200: GroupListResponse, ...errorResponses },
      },
    },
    async (request) => {
      const query = request.query;
      const types = [...(query.type ? [query.type] : []), ...(query.types ?? [])];
      return services.groups.list(request.ctx, {
        ...pageOf(query),
        searchKey: query.searchKey || undefined,
        searchIn: query.searchIn,
        sortBy: query.sortBy,
        sortOrder: query.sortOrder,
        affix: query.affix,
        updatedAt: query.updatedAt,
        withTags: query.withTags,
        tags: query.tags,
        types: types.length ? types : undefined,
        hasJoined: query.hasJoined,
      });
    },
  );

  app.get(
    '/groups/:guid',
    {
      schema: {
        operationId: 'get-group',
        tags,
        summary: 'Get',
        description: 'Retrieves a group; with onBehalfOf, with that user’s membership.',
        headers,
        params: GuidParams,
        response: { 200: GroupResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.groups.get(await actorContext(request, services), request.params.guid) }),
  );

  app.put(
    '/groups/:guid',
    {
      schema: {
        operationId: 'update-group',
        tags,
        summary: 'Update',
        description: 'Updates a group; `unset` removes fields, `owner` hands the ownership on.',
        headers,
        params: GuidParams,
        body: UpdateGroupBody,
        response: { 200: GroupResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.groups.update(await actorContext(request, services), request.params.guid, request.body) }),
  );

  app.delete(
    '/groups/:guid',
    {
      schema: {
        operationId: 'delete-group',
        tags,
        summary: 'Delete',
        description: 'Deletes a group with its members and bans.',
        headers,
        params: GuidParams,
        response: { 200: GroupDeleteResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.groups.delete(await actorContext(request, services), request.params.guid) }),
  );
};
