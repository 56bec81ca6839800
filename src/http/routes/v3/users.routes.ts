import { pageOf } from './paging.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { errorResponses, OnBehalfOfHeader } from '../../../schemas/common.schema.js';
import {
  CreateUserBody,
  DeactivateUsersBody,
  DeactivateUsersResponse,
  DeleteUserBody,
  DeleteUserResponse,
  ListUsersQuery,
  ReactivateUsersBody,
  ReactivateUsersResponse,
  UidParams,
  UpdateUserBody,
  UserListResponse,
  UserResponse,
} from '../../../schemas/users.schema.js';

const tags = ['Users'];

export const usersRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    '/users',
    {
      config: { access: 'authOnly', rateLimit: 'core' },
      schema: {
        operationId: 'create-user',
        tags,
        summary: 'Create',
        description: 'Creates a new user. The uid is stored lower-cased.',
        body: CreateUserBody,
        response: { 200: UserResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.users.create(request.ctx, request.body) }),
  );

  app.get(
    '/users',
    {
      schema: {
        operationId: 'list-users',
        tags,
        summary: 'List',
        description: 'Lists the users of the app, sorted by name. With onBehalfOf, users carry blockedByMe and hasBlockedMe relative to that user.',
        querystring: ListUsersQuery,
        headers: Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) }),
        response: { 200: UserListResponse, ...errorResponses },
      },
    },
    async (request) => {
      const query = request.query;
      const roles = [...(query.role ? [query.role] : []), ...(query.roles ?? [])];
      return services.users.list(await actorContext(request, services), {
        ...pageOf(query),
        searchKey: query.searchKey || undefined,
        searchIn: query.searchIn,
        status: query.status,
        roles: roles.length ? roles : undefined,
        tags: query.tags,
        withTags: query.withTags,
        onlyDeactivated: query.onlyDeactivated,
        withDeactivated: query.withDeactivated,
      });
    },
  );

  app.get(
    '/users/:uid',
    {
      schema: {
        operationId: 'get-user',
        tags,
        summary: 'Get',
        description: 'Retrieves the user with the given uid.',
        params: UidParams,
        headers: Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) }),
        response: { 200: UserResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.users.get(await actorContext(request, services), request.params.uid) }),
  );

  app.put(
    '/users/:uid',
    {
      schema: {
        operationId: 'update-user',
        tags,
        summary: 'Update',
        description: 'Updates the user with the given uid; `unset` removes fields.',
        params: UidParams,
        body: UpdateUserBody,
        response: { 200: UserResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.users.update(request.ctx, request.params.uid, request.body) }),
  );

  app.delete(
    '/users/:uid',
    {
      config: { rateLimit: 'core' },
      schema: {
        operationId: 'delete-user',
        tags,
        summary: 'Delete',
        description: 'Deactivates the user, or deletes them and all their data with `permanent: true`.',
        params: UidParams,
        body: DeleteUserBody,
        response: { 200: DeleteUserResponse, ...errorResponses },
      },
    },
    async (request) => ({
      data: await services.users.delete(request.ctx, request.params.uid, request.body?.permanent ?? false),
    }),
  );

  app.delete(
    '/users',
    {
      schema: {
        operationId: 'deactivate-users',
        tags,
        summary: 'Deactivate',
        description: 'Deactivates the given users. The answer lists those that exist and are now deactivated.',
        body: DeactivateUsersBody,
        response: { 200: DeactivateUsersResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.users.deactivate(request.ctx, request.body.uidsToDeactivate) }),
  );

  app.put(
    '/users',
    {
      schema: {
        operationId: 'reactivate-users',
        tags,
        summary: 'Reactivate',
        description: 'Reactivates the given users. The answer lists those that exist and are now active.',
        body: ReactivateUsersBody,
        response: { 200: ReactivateUsersResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.users.reactivate(request.ctx, request.body.uidsToActivate) }),
  );
};
