import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../../container.js';
import { notificationPreferencesRoutes } from './preferences.routes.js';
import { notificationSettingsRoutes } from './settings.routes.js';
import { channelProvidersRoutes } from './channel-providers.routes.js';
import { pushProvidersRoutes } from './push-providers.routes.js';
import { notificationLogRoutes } from './log.routes.js';
import { pushTokensRoutes } from './push-tokens.routes.js';

/**
 * The vendor's Notifications operations, `/v3/notifications/...` (docs/notifications.md), one
 * module per part; v3/index.ts lists this one with the others.
 */
export const NOTIFICATION_ROUTE_MODULES: Array<FastifyPluginAsyncTypebox<{ services: Services }>> = [
  notificationSettingsRoutes,
  notificationPreferencesRoutes,
  pushProvidersRoutes,
  channelProvidersRoutes,
  pushTokensRoutes,
  notificationLogRoutes,
];

export const notificationsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, options) => {
  for (const routes of NOTIFICATION_ROUTE_MODULES) await app.register(routes, { services: options.services });
};
