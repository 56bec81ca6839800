import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../../container.js';
import { errorResponses } from '../../../../schemas/common.schema.js';
import {
  AddApnsProviderBody,
  AddFcmProviderBody,
  ApnsProvidersChangedResponse,
  ApnsProvidersResponse,
  FcmProvidersChangedResponse,
  FcmProvidersResponse,
  ProviderParams,
  UpdateApnsProviderBody,
  UpdateFcmProviderBody,
} from '../../../../schemas/notification-push-providers.schema.js';

const WRITES = ' Answers `success` and the app’s providers of this kind after the change (the default among them); keys and private keys are never answered.';

/**
 * FCM and APNs providers (docs/notifications.md, "FCM and APNs providers"): several of each per
 * app, one of each the default. Like the vendor's, they take the app's fullAccess apiKey.
 */
export const pushProvidersRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const providers = services.pushProviders;
  const tags = ['Notifications'];

  // -- FCM --

  app.get(
    '/notifications/push/v1/providers/fcm',
    {
      schema: {
        operationId: 'notifications-push-list-fcm-providers',
        tags,
        summary: 'List FCM Providers',
        description: 'Lists the app’s FCM providers, oldest first, each with its service account (without its private key) and whether it is the default.',
        response: { 200: FcmProvidersResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.listFcm(request.ctx) }),
  );

  app.post(
    '/notifications/push/v1/providers/fcm',
    {
      schema: {
        operationId: 'notifications-push-add-fcm-provider',
        tags,
        summary: 'Add FCM Provider',
        description:
          'Adds an FCM provider: its id and its Firebase service account (the key file’s JSON, its RSA key checked). The app’s first FCM provider becomes its default. ' +
          `At most 25 per app.${WRITES}`,
        body: AddFcmProviderBody,
        response: { 200: FcmProvidersChangedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.addFcm(request.ctx, request.body) }),
  );

  app.put(
    '/notifications/push/v1/providers/fcm',
    {
      schema: {
        operationId: 'notifications-push-update-fcm-provider',
        tags,
        summary: 'Update FCM Provider',
        description: `Changes the FCM provider named by \`providerId\`: the fields given (a service account replaces the former whole); the others are kept.${WRITES}`,
        body: UpdateFcmProviderBody,
        response: { 200: FcmProvidersChangedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.updateFcm(request.ctx, request.body) }),
  );

  app.delete(
    '/notifications/push/v1/providers/fcm/:providerId',
    {
      schema: {
        operationId: 'notifications-push-delete-fcm-provider',
        tags,
        summary: 'Delete FCM Provider',
        description: `Deletes an FCM provider. When it was the default, the oldest remaining one becomes the default.${WRITES}`,
        params: ProviderParams,
        response: { 200: FcmProvidersChangedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.delete(request.ctx, 'fcm', request.params.providerId) }),
  );

  app.put(
    '/notifications/push/v1/providers/fcm/default/:providerId',
    {
      schema: {
        operationId: 'notifications-push-default-fcm-provider',
        tags,
        summary: 'Change default FCM Provider',
        description: `Makes an FCM provider the app’s default (the former default no longer is).${WRITES}`,
        params: ProviderParams,
        response: { 200: FcmProvidersChangedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.setDefault(request.ctx, 'fcm', request.params.providerId) }),
  );

  // -- APNs --

  app.get(
    '/notifications/push/v1/providers/apns',
    {
      schema: {
        operationId: 'notifications-push-list-apns-providers',
        tags,
        summary: 'List APNS Providers',
        description: 'Lists the app’s APNs providers, oldest first, without their .p8 keys, and which is the default.',
        response: { 200: ApnsProvidersResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.listApns(request.ctx) }),
  );

  app.post(
    '/notifications/push/v1/providers/apns',
    {
      schema: {
        operationId: 'notifications-push-add-apns-provider',
        tags,
        summary: 'Add APNS Provider',
        description: `Adds an APNs provider: its id, Key ID, Team ID, bundle id and .p8 key (an EC P-256 key, checked). The app’s first APNs provider becomes its default. At most 25 per app.${WRITES}`,
        body: AddApnsProviderBody,
        response: { 200: ApnsProvidersChangedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.addApns(request.ctx, request.body) }),
  );

  app.put(
    '/notifications/push/v1/providers/apns',
    {
      schema: {
        operationId: 'notifications-push-update-apns-provider',
        tags,
        summary: 'Update APNS Providers',
        description: `Changes the APNs provider named by \`providerId\`: the fields given; the others are kept.${WRITES}`,
        body: UpdateApnsProviderBody,
        response: { 200: ApnsProvidersChangedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.updateApns(request.ctx, request.body) }),
  );

  app.delete(
    '/notifications/push/v1/providers/apns/:providerId',
    {
      schema: {
        operationId: 'notifications-push-delete-apns-provider',
        tags,
        summary: 'Delete APNS Providers',
        description: `Deletes an APNs provider. When it was the default, the oldest remaining one becomes the default.${WRITES}`,
        params: ProviderParams,
        response: { 200: ApnsProvidersChangedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.delete(request.ctx, 'apns', request.params.providerId) }),
  );

  app.put(
    '/notifications/push/v1/providers/apns/default/:providerId',
    {
      schema: {
        operationId: 'notifications-push-default-apns-provider',
        tags,
        summary: 'Change default APNS Provider',
        description: `Makes an APNs provider the app’s default (the former default no longer is).${WRITES}`,
        params: ProviderParams,
        response: { 200: ApnsProvidersChangedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await providers.setDefault(request.ctx, 'apns', request.params.providerId) }),
  );
};
