import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../../container.js';

/**
 * The vendor's Notifications operations, `/v3/notifications/...` (docs/notifications.md), one
 * module per part; v3/index.ts lists this one with the others.
 */
export const NOTIFICATION_ROUTE_MODULES: Array<FastifyPluginAsyncTypebox<{ services: Services }>> = [
  // -- The app's settings and push providers --
  // -- SMS, e-mail and custom providers --
  // -- Users' notification data and the log --
];

export const notificationsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, options) => {
  for (const routes of NOTIFICATION_ROUTE_MODULES) await app.register(routes, { services: options.services });
};
