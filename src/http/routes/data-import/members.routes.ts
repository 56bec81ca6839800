import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../../schemas/common.schema.js';
import { ImportMembersBody, ImportMembersResponse } from '../../../schemas/data-import.schema.js';
import { routeOptions, type DataImportRouteOptions } from './route-options.js';

export const importMembersRoutes: FastifyPluginAsyncTypebox<DataImportRouteOptions> = async (app, options) => {
  app.post(
    '/members',
    {
      ...routeOptions(options),
      schema: {
        operationId: 'import-members',
        tags: ['Data Import'],
        summary: 'Import group members',
        description:
          'Imports memberships with their joinedAt, and bans (isBanned), answering per record: the membership, or an error such as ' +
          'ERR_ALREADY_JOINED. userDetails and groupDetails create a missing user or group first.',
        hide: options.hidden,
        body: ImportMembersBody,
        response: { 200: ImportMembersResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await options.services.dataImport.importMembers(request.ctx, request.body) }),
  );
};
