import type { FastifyPluginAsync } from 'fastify';
import type { Services } from '../../../container.js';
import { installManagementAuth } from '../../plugins/management-auth.js';
import type { TenancySettings } from '../../plugins/tenancy.js';
import { managementAppsRoutes } from './apps.routes.js';
import type { ManagementRouteOptions } from './route-options.js';
import { managementSettingsRoutes } from './settings.routes.js';
import { managementWebhookDeliveriesRoutes } from './webhook-deliveries.routes.js';
import { managementWebhooksRoutes } from './webhooks.routes.js';

/**
 * The vendor's management API (its spec's tags App, Settings and Webhooks; docs/management-api.md),
 * authenticated by a management credential of the deployment. Registered twice: at the vendor's
 * paths (`/apps/...`) for the host `apimgmt.<domain>` only, and at `/mgmt/apps/...` on any host
 * (left out of the OpenAPI document, which lists both bases as the operations' servers).
 */
export const MANAGEMENT_ROUTE_MODULES = [managementAppsRoutes, managementSettingsRoutes, managementWebhooksRoutes, managementWebhookDeliveriesRoutes];

export const managementRoutes: FastifyPluginAsync<{ services: Services; tenancy: TenancySettings; vendorHost: boolean }> = async (app, options) => {
  const host = `apimgmt.${options.tenancy.domain}`;
  installManagementAuth(app, { management: options.services.management, rateLimits: options.services.rateLimits, host: options.vendorHost ? host : undefined });
  const routeOptions: ManagementRouteOptions = {
    services: options.services,
    hidden: !options.vendorHost,
    servers: [{ url: `https://${host}` }, { url: `https://${options.tenancy.domain}/mgmt` }],
  };
  for (const routes of MANAGEMENT_ROUTE_MODULES) await app.register(routes, routeOptions);
};
