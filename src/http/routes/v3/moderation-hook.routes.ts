import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import { HookDeleteResponse, HookResponse, SetHookBody } from '../../../schemas/moderation-hook.schema.js';

/**
 * The moderation hook, a Parley extension (docs/compatibility.md): the app's endpoint asked about
 * each message before it is stored. Like the vendor's moderation operations, it takes the app's
 * apiKey or the deployment's management credential.
 */
export const moderationHookRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const hook = services.moderationHook;
  const tags = ['Moderation'];
  const config = { managementCredential: true };

  app.get(
    '/moderation/hook',
    {
      config,
      schema: {
        operationId: 'get-moderation-hook',
        tags,
        summary: 'Get Moderation Hook',
        description: "Retrieves the app's moderation hook, its signing secret masked. Parley extension.",
        response: { 200: HookResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await hook.get(request.ctx) }),
  );

  app.put(
    '/moderation/hook',
    {
      config,
      schema: {
        operationId: 'set-moderation-hook',
        tags,
        summary: 'Set Moderation Hook',
        description:
          "Creates the app's moderation hook or replaces it (the fields not given take their defaults). A new hook, or `rotateSecret`, gets a new signing secret, " +
          'answered in plain text this once; otherwise the secret is kept and shown masked. Parley extension.',
        body: SetHookBody,
        response: { 200: HookResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await hook.set(request.ctx, request.body) }),
  );

  app.delete(
    '/moderation/hook',
    {
      config,
      schema: {
        operationId: 'delete-moderation-hook',
        tags,
        summary: 'Delete Moderation Hook',
        description: "Deletes the app's moderation hook: messages are no longer sent to it. Parley extension.",
        response: { 200: HookDeleteResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await hook.delete(request.ctx) }),
  );
};
