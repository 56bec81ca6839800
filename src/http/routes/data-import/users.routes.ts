import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../../schemas/common.schema.js';
import { ImportUsersBody, ImportUsersResponse } from '../../../schemas/data-import.schema.js';
import { routeOptions, type DataImportRouteOptions } from './route-options.js';

export const importUsersRoutes: FastifyPluginAsyncTypebox<DataImportRouteOptions> = async (app, options) => {
  app.post(
    '/users',
    {
      ...routeOptions(options),
      schema: {
        operationId: 'import-users',
        tags: ['Data Import'],
        summary: 'Import users',
        description:
          'Imports users with their source timestamps (createdAt, lastActiveAt, deactivatedAt), answering per record: the stored user, ' +
          'or an error such as ERR_UID_ALREADY_EXISTS (a uid imported before) or ERR_ROLE_NOT_FOUND.',
        hide: options.hidden,
        body: ImportUsersBody,
        response: { 200: ImportUsersResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await options.services.dataImport.importUsers(request.ctx, request.body) }),
  );
};
