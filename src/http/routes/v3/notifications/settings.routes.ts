import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../../container.js';
import { errorResponses } from '../../../../schemas/common.schema.js';
import { SettingsChangeBody, SettingsResponse, SuccessResponse } from '../../../../schemas/notification-preferences.schema.js';

/** The app's notification settings (docs/notifications.md, "Who is notified and when"): preferences, sounds, templates. */
export const notificationSettingsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const settings = services.notificationSettings;
  const tags = ['Notifications'];

  app.get(
    '/notifications/v1/settings',
    {
      schema: {
        operationId: 'notifications-push-list-settings',
        tags,
        summary: 'List Settings',
        description: "The app's notification preferences (each with whether users may override it), sounds and templates: the defaults where the app set none.",
        response: { 200: SettingsResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await settings.get(request.ctx) }),
  );

  app.patch(
    '/notifications/v1/settings',
    {
      schema: {
        operationId: 'notifications-push-update-settings',
        tags,
        summary: 'Update Settings',
        description:
          'Changes the fields given (customJson is replaced whole); the others stay. A field that does not exist, a value out of its range, a time of day that is none ' +
          "(HHMM, minutes 00 to 59), customJson over 4 KB, or a digest's maxPerDayPerConversation above its maxPerDay is refused, and nothing changes.",
        body: SettingsChangeBody,
        response: { 200: SuccessResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await settings.update(request.ctx, request.body) }),
  );

  app.delete(
    '/notifications/v1/settings',
    {
      schema: {
        operationId: 'notifications-push-reset-settings',
        tags,
        summary: 'Reset Settings',
        description: "Puts the app's preferences, sounds and templates back to their defaults. Users' own preferences stay, and apply where the defaults let users override.",
        response: { 200: SuccessResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await settings.reset(request.ctx) }),
  );
};
