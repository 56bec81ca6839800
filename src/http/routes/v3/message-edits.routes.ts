import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { errorResponses, OnBehalfOfHeader } from '../../../schemas/common.schema.js';
import { DeleteMessageBody, UpdateMessageBody } from '../../../schemas/message-edits.schema.js';
import { MessageIdParams, MessageResponse, SendMessageBody, SendMessageResponse } from '../../../schemas/messages.schema.js';
import { UidParams } from '../../../schemas/users.schema.js';

const tags = ['Messages'];
const headers = Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) });

/** Edits, deletes (each answered with its action message) and bot messages. */
export const messageEditsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const edits = services.messageEdits;

  app.put(
    '/messages/:id',
    {
      schema: {
        operationId: 'update-message',
        tags,
        summary: 'Update',
        description: 'Edits a message: with onBehalfOf, only its sender may; without it, the app edits any message. Answers the `edited` action message.',
        headers,
        params: MessageIdParams,
        body: UpdateMessageBody,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await edits.update(request.ctx, request.params.id, request.body) }),
  );

  app.delete(
    '/messages/:id',
    {
      schema: {
        operationId: 'delete-message',
        tags,
        summary: 'Delete',
        description:
          "Marks a message deleted, or removes it with `permanent: true`. With onBehalfOf, its sender or a group's moderators, admins and owner may; without it, the app. Answers the `deleted` action message.",
        headers,
        params: MessageIdParams,
        body: DeleteMessageBody,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await edits.delete(await actorContext(request, services), request.params.id, request.body?.permanent ?? false) }),
  );

  app.post(
    '/bots/:uid/messages',
    {
      // The sender is the bot in the path.
      config: { perUserLimit: 'send_per_user', perUserParam: 'uid' },
      schema: {
        operationId: 'send-bot-message',
        tags,
        summary: 'Send as a bot',
        description: 'Sends a message as the user in the path (an active user), with the body and rules of send-message.',
        params: UidParams,
        body: SendMessageBody,
        response: { 200: SendMessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await edits.sendAsBot(request.ctx, request.params.uid, request.body) }),
  );
};
