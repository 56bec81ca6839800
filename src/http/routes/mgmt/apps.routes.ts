import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AppListResponse,
  AppParams,
  AppResponse,
  CreateAppBody,
  DeleteAppResponse,
  ListAppsQuery,
  ManagementHeaders,
  managementErrors,
  UsageBody,
  UsageResponse,
} from '../../../schemas/management.schema.js';
import { managementContext } from '../../plugins/management-auth.js';
import { documented, type ManagementRouteOptions } from './route-options.js';

/** The vendor's tag App: create, list and delete apps; an app's usage. */
export const managementAppsRoutes: FastifyPluginAsyncTypebox<ManagementRouteOptions> = async (app, options) => {
  const { management } = options.services;
  const shared = documented(options, 'App');

  app.post(
    '/apps',
    {
      schema: {
        ...shared,
        operationId: 'create-app',
        summary: 'Create',
        description: 'Creates an app with a fullAccess ("Rest API Key") and an authOnly ("Auth Key") key, shown here in plain text only.',
        headers: ManagementHeaders,
        body: CreateAppBody,
        response: { 200: AppResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await management.createApp(managementContext(request), request.body) }),
  );

  app.get(
    '/apps',
    {
      schema: {
        ...shared,
        operationId: 'list-apps',
        summary: 'List',
        description: "Lists the deployment's apps, oldest first, with their keys masked.",
        headers: ManagementHeaders,
        querystring: ListAppsQuery,
        response: { 200: AppListResponse, ...managementErrors },
      },
    },
    async (request) => management.listApps(managementContext(request), request.query),
  );

  app.delete(
    '/apps/:appId',
    {
      schema: {
        ...shared,
        operationId: 'delete-app',
        summary: 'Delete',
        description: 'Deletes the app and all its data now: its keys stop working at once.',
        headers: ManagementHeaders,
        params: AppParams,
        response: { 200: DeleteAppResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await management.deleteApp(managementContext(request, request.params.appId)) }),
  );

  app.post(
    '/apps/:appId/usage',
    {
      schema: {
        ...shared,
        operationId: 'fetch-multi-tenant-usage',
        summary: 'Fetch usage',
        description: 'Users and groups created and messages sent in the current calendar month (UTC) so far, or the previous one.',
        headers: ManagementHeaders,
        params: AppParams,
        body: UsageBody,
        response: { 200: UsageResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await management.usage(managementContext(request, request.params.appId), { usePreviousBillingCycle: request.body.usePreviousBillingCycle }) }),
  );
};
