import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { ApiKeyDeleteResponse, ApiKeyListResponse, ApiKeyParams, ApiKeyResponse, CreateApiKeyBody, ListApiKeysQuery, UpdateApiKeyBody } from '../../../schemas/api-keys.schema.js';
import { errorResponses } from '../../../schemas/common.schema.js';

const tags = ['API Keys'];

export const apiKeysRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.post(
    '/apikeys',
    {
      schema: {
        operationId: 'create-apikey',
        tags,
        summary: 'Create',
        description: 'Creates an API key. The answer holds the key in plain text: it is not shown again.',
        body: CreateApiKeyBody,
        response: { 200: ApiKeyResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.apiKeys.create(request.ctx, request.body) }),
  );

  app.get(
    '/apikeys',
    {
      schema: {
        operationId: 'list-apikeys',
        tags,
        summary: 'List',
        description: 'Lists the API keys of the app, masked.',
        querystring: ListApiKeysQuery,
        response: { 200: ApiKeyListResponse, ...errorResponses },
      },
    },
    async (request) => services.apiKeys.list(request.ctx, request.query),
  );

  app.get(
    '/apikeys/:apiKey',
    {
      schema: {
        operationId: 'get-apikey',
        tags,
        summary: 'Get',
        description: 'Retrieves an API key, named by its value or by its masked form.',
        params: ApiKeyParams,
        response: { 200: ApiKeyResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.apiKeys.get(request.ctx, request.params.apiKey) }),
  );

  app.put(
    '/apikeys/:apiKey',
    {
      schema: {
        operationId: 'update-apikey',
        tags,
        summary: 'Update',
        description: 'Renames an API key or changes its scope. A key cannot change itself.',
        params: ApiKeyParams,
        body: UpdateApiKeyBody,
        response: { 200: ApiKeyResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.apiKeys.update(request.ctx, request.params.apiKey, request.body) }),
  );

  app.delete(
    '/apikeys/:apiKey',
    {
      schema: {
        operationId: 'delete-apikey',
        tags,
        summary: 'Delete',
        description: 'Deletes an API key. A key cannot delete itself.',
        params: ApiKeyParams,
        response: { 200: ApiKeyDeleteResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.apiKeys.delete(request.ctx, request.params.apiKey) }),
  );
};
