import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { errorResponses } from '../../../schemas/common.schema.js';
import { ImportGroupsBody, ImportGroupsResponse } from '../../../schemas/data-import.schema.js';
import { routeOptions, type DataImportRouteOptions } from './route-options.js';

export const importGroupsRoutes: FastifyPluginAsyncTypebox<DataImportRouteOptions> = async (app, options) => {
  app.post(
    '/groups',
    {
      ...routeOptions(options),
      schema: {
        operationId: 'import-groups',
        tags: ['Data Import'],
        summary: 'Import groups',
        description:
          'Imports groups with their createdAt, answering per record: the stored group, or an error such as ERR_GUID_ALREADY_EXISTS. ' +
          'groupOwnerDetails creates a missing owner first; the owner becomes an admin member, joined at createdAt.',
        hide: options.hidden,
        body: ImportGroupsBody,
        response: { 200: ImportGroupsResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await options.services.dataImport.importGroups(request.ctx, request.body) }),
  );
};
