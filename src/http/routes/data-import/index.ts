import type { FastifyPluginAsync } from 'fastify';
import { installAuth } from '../../plugins/auth.js';
import type { ImportCallLimiter } from '../../plugins/import-limits.js';
import { installRateLimits } from '../../plugins/rate-limit.js';
import type { TenancySettings } from '../../plugins/tenancy.js';
import { importGroupsRoutes } from './groups.routes.js';
import { importMembersRoutes } from './members.routes.js';
import { importMessagesRoutes } from './messages.routes.js';
import type { DataImportRouteOptions } from './route-options.js';
import { importUsersRoutes } from './users.routes.js';

/**
 * The data import API, at `<prefix>/data_import`: registered at both `/v3.0` (the base path
 * customers were given) and `/v3`, with the tenancy and authentication of the general API
 * (a fullAccess key), and a bound on the calls in flight (see ImportCallLimiter).
 */
export const dataImportRoutes: FastifyPluginAsync<DataImportRouteOptions & { tenancy: TenancySettings; importCalls: ImportCallLimiter; rateLimited?: boolean }> = async (app, options) => {
  installAuth(app, options.services, options.tenancy);
  options.importCalls.install(app);
  if (options.rateLimited !== false) installRateLimits(app, options.services.rateLimits);
  const routeOptions = { services: options.services, bodyLimit: options.bodyLimit, hidden: options.hidden };
  for (const routes of [importUsersRoutes, importGroupsRoutes, importMembersRoutes, importMessagesRoutes]) await app.register(routes, routeOptions);
};
