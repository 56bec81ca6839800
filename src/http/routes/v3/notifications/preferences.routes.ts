import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../../container.js';
import { NOTIFICATION_LIMITS } from '../../../../domain/notifications/preferences-input.js';
import { errorResponses } from '../../../../schemas/common.schema.js';
import {
  ContactBody,
  ContactHeaders,
  ContactQuery,
  ContactResponse,
  MuteBody,
  MutedResponse,
  ResetPreferencesResponse,
  SuccessResponse,
  TimezoneBody,
  TimezoneResponse,
  UidQuery,
  UnmuteBody,
  UserPreferencesBody,
  UserPreferencesResponse,
} from '../../../../schemas/notification-preferences.schema.js';

/**
 * A user's notification preferences, muted conversations, time zone and contact details
 * (docs/notifications.md, "Who is notified and when"). The user is named by `uid` (the contact
 * details: by the onBehalfOf header, or `uid`), an active user of the app, else ERR_UID_NOT_FOUND.
 */
export const notificationPreferencesRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { notificationPreferences: preferences, notificationMutes: mutes, notificationContactDetails: contact } = services;
  const tags = ['Notifications'];

  app.get(
    '/notifications/v1/preferences',
    {
      schema: {
        operationId: 'notifications-push-list-preferences',
        tags,
        summary: 'List Preferences',
        description: "The preferences that apply to the user: the app's, with the user's own where the app lets users override them; and the app's sounds and templates.",
        querystring: UidQuery,
        response: { 200: UserPreferencesResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await preferences.get(request.ctx, request.query.uid) }),
  );

  app.patch(
    '/notifications/v1/preferences',
    {
      schema: {
        operationId: 'notifications-push-update-preferences',
        tags,
        summary: 'Update Preferences',
        description:
          "Sets the user's own values. Those the app does not let users override are left out, with no error, as the vendor does; " +
          'answers the preferences that apply after. A schedule day may be given in part.',
        querystring: UidQuery,
        body: UserPreferencesBody,
        response: { 200: UserPreferencesResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await preferences.update(request.ctx, request.query.uid, request.body) }),
  );

  app.delete(
    '/notifications/v1/preferences',
    {
      schema: {
        operationId: 'notifications-push-reset-preferences',
        tags,
        summary: 'Reset Preferences',
        description: "Forgets the user's own values (not their time zone, contact details or mutes) and answers what applies now, the app's, in the names of an update.",
        querystring: UidQuery,
        response: { 200: ResetPreferencesResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await preferences.reset(request.ctx, request.query.uid) }),
  );

  app.get(
    '/notifications/v1/preferences/mute',
    {
      schema: {
        operationId: 'notifications-push-list-muted',
        tags,
        summary: 'List muted conversations',
        description: 'The conversations the user muted, and not unmuted nor ended: 1:1 conversations by the other user (oneOnOne) and groups, with until (unix ms) when the mute ends.',
        querystring: UidQuery,
        response: { 200: MutedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await mutes.list(request.ctx, request.query.uid) }),
  );

  app.put(
    '/notifications/v1/preferences/mute',
    {
      schema: {
        operationId: 'notifications-push-mute-conversations',
        tags,
        summary: 'Mute notifications for conversations',
        description:
          `Mutes up to ${NOTIFICATION_LIMITS.mutesPerCall} conversations, all or none: each an active user of the app (not the user) or a group of the app, ` +
          `until a time in the future (unix ms) or until unmuted. Muting again sets the new until. ${NOTIFICATION_LIMITS.mutesPerUser} muted conversations per user at most.`,
        querystring: UidQuery,
        body: MuteBody,
        response: { 200: SuccessResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await mutes.mute(request.ctx, request.query.uid, request.body.conversations) }),
  );

  app.delete(
    '/notifications/v1/preferences/mute',
    {
      schema: {
        operationId: 'notifications-push-unmute-conversations',
        tags,
        summary: 'Unmute notifications for conversations',
        description: 'Unmutes the conversations; those not muted are no matter.',
        querystring: UidQuery,
        body: UnmuteBody,
        response: { 200: SuccessResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await mutes.unmute(request.ctx, request.query.uid, request.body.conversations) }),
  );

  app.get(
    '/notifications/v1/preferences/timezone',
    {
      schema: {
        operationId: 'notifications-get-timezone',
        tags,
        summary: 'Get timezone',
        description: "The user's time zone, in which their schedule is read: UTC until one is set.",
        querystring: UidQuery,
        response: { 200: TimezoneResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await preferences.getTimezone(request.ctx, request.query.uid) }),
  );

  app.patch(
    '/notifications/v1/preferences/timezone',
    {
      schema: {
        operationId: 'notifications-update-timezone',
        tags,
        summary: 'Update timezone',
        description: "Sets the user's time zone: an IANA name (e.g. Asia/Tokyo, any case; answered as spelt in the time zone database). Offsets and abbreviations that are no IANA name are refused.",
        querystring: UidQuery,
        body: TimezoneBody,
        response: { 200: TimezoneResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await preferences.updateTimezone(request.ctx, request.query.uid, request.body.timezone) }),
  );

  app.get(
    '/notifications/v1/contact-details',
    {
      schema: {
        operationId: 'notifications-get-contact-details',
        tags,
        summary: 'Get contact details',
        description: "The user's e-mail address and phone number, each when stored.",
        headers: ContactHeaders,
        querystring: ContactQuery,
        response: { 200: ContactResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await contact.get(request.ctx, request.query.uid) }),
  );

  app.patch(
    '/notifications/v1/contact-details',
    {
      schema: {
        operationId: 'notifications-update-contact-details',
        tags,
        summary: 'Update contact details',
        description: 'Sets the e-mail address and/or the phone number (E.164, e.g. +14155550123); null removes one, a field not given stays. Answers both after.',
        headers: ContactHeaders,
        querystring: ContactQuery,
        body: ContactBody,
        response: { 200: ContactResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await contact.update(request.ctx, request.query.uid, request.body) }),
  );

  app.delete(
    '/notifications/v1/contact-details',
    {
      schema: {
        operationId: 'notifications-delete-contact-details',
        tags,
        summary: 'Delete contact details',
        description: "Removes the user's e-mail address and phone number.",
        headers: ContactHeaders,
        querystring: ContactQuery,
        response: { 200: SuccessResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await contact.delete(request.ctx, request.query.uid) }),
  );
};
