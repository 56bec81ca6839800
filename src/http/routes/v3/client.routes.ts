import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { ClientSettingsResponse, LoginResponse, UpdateMeBody, UserSessionBody, UserSessionResponse } from '../../../schemas/client.schema.js';
import { errorResponses } from '../../../schemas/common.schema.js';

const tags = ['Client'];

/**
 * The REST half of a client SDK's session (docs/client-api.md): called with the user's auth
 * token (or an apiKey with onBehalfOf). Parley's own operations, beside the vendor's.
 */
export const clientRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const sessions = services.clientSessions;

  app.put(
    '/me',
    {
      schema: {
        operationId: 'update-me',
        tags,
        summary: 'Log in',
        description:
          "The client's login: answers the user with the settings (Parley's hosts and version) and no jwt. With an auth token, the device's platform, app info and User-Agent are stored on the token.",
        body: UpdateMeBody,
        response: { 200: LoginResponse, ...errorResponses },
      },
    },
    async (request) => {
      const userAgent = request.headers['user-agent']?.slice(0, 1000);
      return { data: await sessions.login(request.ctx, { platform: request.body.platform, deviceId: request.body.deviceId, appInfo: request.body.appInfo, userAgent }, request.host) };
    },
  );

  app.get(
    '/settings',
    {
      schema: {
        operationId: 'get-client-settings',
        tags,
        summary: 'Settings',
        description: "Parley's hosts, version and real-time endpoints, as the login answers them.",
        response: { 200: ClientSettingsResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: sessions.settings(request.ctx, request.host) }),
  );

  app.post(
    '/user_sessions',
    {
      schema: {
        operationId: 'create-user-session',
        tags,
        summary: 'Session started',
        description: 'A client reports that its session started: accepted; Parley records nothing of it.',
        body: UserSessionBody,
        response: { 200: UserSessionResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await sessions.startSession(request.ctx) }),
  );
};
