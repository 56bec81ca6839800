import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { errorResponses, OnBehalfOfHeader } from '../../../schemas/common.schema.js';
import { MessageIdParams, MessageResponse } from '../../../schemas/messages.schema.js';
import { SendThreadMessageBody, ThreadListQuery, ThreadListResponse } from '../../../schemas/threads.schema.js';

const tags = ['Messages'];
const headers = Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) });

/** Threads: replies to a message, and their list. */
export const threadsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const threads = services.threads;

  app.post(
    '/messages/:id/thread',
    {
      config: { perUserLimit: 'send_per_user' },
      schema: {
        operationId: 'send-thread-message',
        tags,
        summary: 'Send Threaded Message',
        description:
          "Sends a reply to the message in the path, as the onBehalfOf user (required), in that message's conversation. `receiver` and `receiverType` may be left out; given, they must name that conversation.",
        headers,
        params: MessageIdParams,
        body: SendThreadMessageBody,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await threads.send(request.ctx, request.params.id, request.body) }),
  );

  app.get(
    '/messages/:id/thread',
    {
      schema: {
        operationId: 'list-all-thread-messages',
        tags,
        summary: 'List Threaded Messages',
        description: 'Lists the replies to the message in the path, oldest first, by page. With onBehalfOf, only a message of a conversation that user takes part in.',
        headers,
        params: MessageIdParams,
        querystring: ThreadListQuery,
        response: { 200: ThreadListResponse, ...errorResponses },
      },
    },
    async (request) => threads.list(await actorContext(request, services), request.params.id, request.query),
  );
};
