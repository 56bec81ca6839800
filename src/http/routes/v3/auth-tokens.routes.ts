import { pageOf } from './paging.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import {
  AuthTokenDeleteResponse,
  AuthTokenListResponse,
  AuthTokenParams,
  AuthTokenResponse,
  CreateAuthTokenBody,
  ListAuthTokensQuery,
  UpdateAuthTokenBody,
} from '../../../schemas/auth-tokens.schema.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import { UidParams } from '../../../schemas/users.schema.js';

const tags = ['Auth Tokens'];

export const authTokensRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    '/users/:uid/auth_tokens',
    {
      config: { access: 'authOnly', rateLimit: 'core' },
      schema: {
        operationId: 'create-authtoken',
        tags,
        summary: 'Create',
        description: 'Issues a new auth token for the user. The answer holds it in plain text: it is not shown again.',
        params: UidParams,
        body: CreateAuthTokenBody,
        response: { 200: AuthTokenResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.authTokens.create(request.ctx, request.params.uid) }),
  );

  app.get(
    '/users/:uid/auth_tokens',
    {
      schema: {
        operationId: 'list-authtokens',
        tags,
        summary: 'List',
        description: "Lists the user's auth tokens, newest first, masked.",
        params: UidParams,
        querystring: ListAuthTokensQuery,
        response: { 200: AuthTokenListResponse, ...errorResponses },
      },
    },
    async (request) =>
      services.authTokens.list(request.ctx, request.params.uid, {
        ...pageOf(request.query),
      }),
  );

  app.delete(
    '/users/:uid/auth_tokens',
    {
      schema: {
        operationId: 'flush-authtokens',
        tags,
        summary: 'Flush',
        description: 'Deletes all the auth tokens of the user.',
        params: UidParams,
        response: { 200: AuthTokenDeleteResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.authTokens.flush(request.ctx, request.params.uid) }),
  );

  app.get(
    '/users/:uid/auth_tokens/:authToken',
    {
      schema: {
        operationId: 'get-authtoken',
        tags,
        summary: 'Get',
        description: 'Retrieves an auth token, named by its value or by its masked form.',
        params: AuthTokenParams,
        response: { 200: AuthTokenResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.authTokens.get(request.ctx, request.params.uid, request.params.authToken) }),
  );

  app.put(
    '/users/:uid/auth_tokens/:authToken',
    {
      schema: {
        operationId: 'update-authtoken',
        tags,
        summary: 'Update',
        description: 'Records the platform, user agent and app information of an auth token.',
        params: AuthTokenParams,
        body: UpdateAuthTokenBody,
        response: { 200: AuthTokenResponse, ...errorResponses },
      },
    },
    async (request) => ({
      data: await services.authTokens.update(request.ctx, request.params.uid, request.params.authToken, request.body),
    }),
  );

  app.delete(
    '/users/:uid/auth_tokens/:authToken',
    {
      schema: {
        operationId: 'delete-authtoken',
        tags,
        summary: 'Delete',
        description: 'Deletes (revokes) an auth token.',
        params: AuthTokenParams,
        response: { 200: AuthTokenDeleteResponse, ...errorResponses },
      },
    },
    async (request) => ({
      data: await services.authTokens.delete(request.ctx, request.params.uid, request.params.authToken),
    }),
  );
};
