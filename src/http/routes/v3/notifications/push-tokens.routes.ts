import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../../container.js';
import { PUSH_TOKEN_LIMITS } from '../../../../domain/notifications/push-tokens.js';
import { errorResponses } from '../../../../schemas/common.schema.js';
import {
  ListPushTokensQuery,
  PushTokenListResponse,
  PushTokenParams,
  RegisterPushTokenBody,
  RegisterPushTokenResponse,
  UnregisterPushTokenBody,
  UnregisterPushTokensQuery,
} from '../../../../schemas/notification-tokens.schema.js';

/** Users' push tokens (docs/notifications.md, "Push tokens"), named by one of their auth tokens. */
export const pushTokensRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const pushTokens = services.pushTokens;
  const tags = ['Notifications'];

  app.post(
    '/notifications/push/v1/tokens',
    {
      schema: {
        operationId: 'notifications-push-register-token',
        tags,
        summary: 'Register push token',
        description:
          "Registers a device's push token for the user of the auth token: the token comes in the platform's field (fcmToken, deviceToken or voipToken). " +
          `A token registered before, by anyone in the app, moves to this user and auth token. A user keeps their ${PUSH_TOKEN_LIMITS.tokensPerUser} most recently registered tokens.`,
        body: RegisterPushTokenBody,
        response: { 200: RegisterPushTokenResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await pushTokens.register(request.ctx, request.body) }),
  );

  app.get(
    '/notifications/push/v1/tokens',
    {
      schema: {
        operationId: 'notifications-push-list-tokens',
        tags,
        summary: 'List push tokens',
        description: 'Lists the push tokens registered with the auth token (with all=true, every token of its user), most recently registered first.',
        querystring: ListPushTokensQuery,
        response: { 200: PushTokenListResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await pushTokens.list(request.ctx, request.query.authToken, request.query.all) }),
  );

  app.delete(
    '/notifications/push/v1/tokens',
    {
      schema: {
        operationId: 'notifications-push-unregister-tokens',
        tags,
        summary: 'Unregister push tokens for authToken',
        description: 'Deletes the push tokens registered with the auth token (with all=true, every token of its user) and lists those it deleted.',
        querystring: UnregisterPushTokensQuery,
        body: UnregisterPushTokenBody,
        response: { 200: PushTokenListResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await pushTokens.unregister(request.ctx, request.body.authToken, request.query.all) }),
  );

  app.delete(
    '/notifications/push/v1/tokens/:pushToken',
    {
      schema: {
        operationId: 'notifications-push-delete-token',
        tags,
        summary: 'Delete the given push token',
        description: "Deletes one of the push tokens of the auth token's user and lists it; a token the user does not hold is left alone (an empty list).",
        params: PushTokenParams,
        body: UnregisterPushTokenBody,
        response: { 200: PushTokenListResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await pushTokens.delete(request.ctx, request.body.authToken, request.params.pushToken) }),
  );
};
