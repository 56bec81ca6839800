import { pageOf } from './paging.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { errorResponses, OnBehalfOfHeader, PageQuery } from '../../../schemas/common.schema.js';
import {
  AddMembersBody,
  AddMembersResponse,
  BannedListResponse,
  ChangeScopeBody,
  ChangeScopeResponse,
  GuidParams,
  GuidUidParams,
  ListMembersQuery,
  MemberListResponse,
  SuccessResponse,
} from '../../../schemas/groups.schema.js';

const headers = Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) });

/** Group Members and Banned Users. */
export const groupMembersRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const members = services.groupMembers;

  app.post(
    '/groups/:guid/members',
    {
      // Joining a group is this operation, so it is core whether it joins or adds.
      config: { rateLimit: 'core' },
      schema: {
        operationId: 'add-group-members',
        tags: ['Group Members'],
        summary: 'Add',
        description:
          'Adds members with a scope, or bans users, answering per uid. An onBehalfOf user who adds only themselves as a participant joins the group (with `password` for a password group).',
        headers,
        params: GuidParams,
        body: AddMembersBody,
        response: { 200: AddMembersResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await members.add(request.ctx, request.params.guid, request.body) }),
  );

  app.get(
    '/groups/:guid/members',
    {
      schema: {
        operationId: 'list-group-members',
        tags: ['Group Members'],
        summary: 'List',
        description: 'Lists the members of a group, in uid order.',
        params: GuidParams,
        querystring: ListMembersQuery,
        response: { 200: MemberListResponse, ...errorResponses },
      },
    },
    async (request) =>
      members.list(await actorContext(request, services), request.params.guid, {
        ...pageOf(request.query),
        scopes: request.query.scopes,
        status: request.query.status,
      }),
  );

  app.put(
    '/groups/:guid/members/:uid',
    {
      schema: {
        operationId: 'change-group-member-scope',
        tags: ['Group Members'],
        summary: 'Change scope',
        description: 'Changes the scope of a member.',
        headers,
        params: GuidUidParams,
        body: ChangeScopeBody,
        response: { 200: ChangeScopeResponse, ...errorResponses },
      },
    },
    async (request) => ({
      data: await members.changeScope(await actorContext(request, services), request.params.guid, request.params.uid, request.body.scope ?? 'participant'),
    }),
  );

  app.delete(
    '/groups/:guid/members/:uid',
    {
      // Leaving a group is this operation, so it is core whether it leaves or kicks.
      config: { rateLimit: 'core' },
      schema: {
        operationId: 'kick-group-member',
        tags: ['Group Members'],
        summary: 'Kick',
        description: 'Removes a member. An onBehalfOf user who names themselves leaves the group.',
        headers,
        params: GuidUidParams,
        response: { 200: SuccessResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await members.kick(await actorContext(request, services), request.params.guid, request.params.uid) }),
  );

  app.post(
    '/groups/:guid/bannedusers/:uid',
    {
      schema: {
        operationId: 'ban-group-user',
        tags: ['Banned Users'],
        summary: 'Ban',
        description: 'Bans a user from a group, removing their membership.',
        headers,
        params: GuidUidParams,
        response: { 200: SuccessResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await members.ban(await actorContext(request, services), request.params.guid, request.params.uid) }),
  );

  app.delete(
    '/groups/:guid/bannedusers/:uid',
    {
      schema: {
        operationId: 'unban-group-user',
        tags: ['Banned Users'],
        summary: 'Unban',
        description: 'Lifts a ban.',
        headers,
        params: GuidUidParams,
        response: { 200: SuccessResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await members.unban(await actorContext(request, services), request.params.guid, request.params.uid) }),
  );

  app.get(
    '/groups/:guid/bannedusers',
    {
      schema: {
        operationId: 'list-banned-group-users',
        tags: ['Banned Users'],
        summary: 'List',
        description: 'Lists the users banned from a group, in uid order.',
        params: GuidParams,
        querystring: Type.Object({ ...PageQuery }),
        response: { 200: BannedListResponse, ...errorResponses },
      },
    },
    async (request) => members.listBanned(await actorContext(request, services), request.params.guid, pageOf(request.query)),
  );
};
