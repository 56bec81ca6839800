import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import {
  AppParams,
  ListSettingsResponse,
  ManagementHeaders,
  managementErrors,
  MapSettingsBody,
  MapSettingsResponse,
  UnmapSettingsBody,
  UnmapSettingsResponse,
} from '../../../schemas/management.schema.js';
import { managementContext } from '../../plugins/management-auth.js';
import { documented, type ManagementRouteOptions } from './route-options.js';

/** The vendor's tag Settings: an app's settings, boolean values by key. */
export const managementSettingsRoutes: FastifyPluginAsyncTypebox<ManagementRouteOptions> = async (app, options) => {
  const { management } = options.services;
  const shared = documented(options, 'Settings');

  app.post(
    '/apps/:appId/settings',
    {
      schema: {
        ...shared,
        operationId: 'map-settings',
        summary: 'Maps Settings',
        description: 'Sets settings of the app: each key to true or false.',
        headers: ManagementHeaders,
        params: AppParams,
        body: MapSettingsBody,
        response: { 200: MapSettingsResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await management.mapSettings(managementContext(request, request.params.appId), request.body.settings) }),
  );

  app.get(
    '/apps/:appId/settings',
    {
      schema: {
        ...shared,
        operationId: 'list-settings',
        summary: 'List settings',
        description: 'Lists the settings mapped for the app, by key.',
        headers: ManagementHeaders,
        params: AppParams,
        response: { 200: ListSettingsResponse, ...managementErrors },
      },
    },
    async (request) => ({ data: await management.listSettings(managementContext(request, request.params.appId)) }),
  );

  app.delete(
    '/apps/:appId/settings',
    {
      schema: {
        ...shared,
        operationId: 'unmap-settings',
        summary: 'UnMaps settings',
        description: 'Removes the named settings of the app, or all of them when the body names none.',
        headers: ManagementHeaders,
        params: AppParams,
        body: UnmapSettingsBody,
        response: { 200: UnmapSettingsResponse, ...managementErrors },
      },
    },
    async (request) => {
      const named = request.body.settings;
      const keys = named === undefined ? undefined : Array.isArray(named) ? named : Object.keys(named);
      return { data: await management.unmapSettings(managementContext(request, request.params.appId), keys) };
    },
  );
};
