import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../../container.js';
import { errorResponses } from '../../../../schemas/common.schema.js';
import { NotificationLogQuery, NotificationLogResponse } from '../../../../schemas/notification-log.schema.js';

/** The notification log (docs/notifications.md, "Logs"). */
export const notificationLogRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/notifications/v1/logs',
    {
      schema: {
        operationId: 'notifications-logs',
        tags: ['Notifications'],
        summary: 'Notifications logs',
        description:
          'Pages through the notifications the server attempted (one entry per recipient, channel and token), triggered or not and why not, ' +
          'in the order they were recorded: the newest page unless affix and logId say otherwise.',
        querystring: NotificationLogQuery,
        response: { 200: NotificationLogResponse, ...errorResponses },
      },
    },
    async (request) => services.notificationLog.list(request.ctx, request.query),
  );
};
