import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { errorResponses, OnBehalfOfHeader } from '../../../schemas/common.schema.js';
import { MessageIdParams, MessageResponse } from '../../../schemas/messages.schema.js';
import { ReactionListQuery, ReactionListResponse, ReactionParams } from '../../../schemas/reactions.schema.js';

const tags = ['Messages'];
const headers = Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) });

/** Reactions to a message: list, list one reaction, add, remove. */
export const reactionsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const reactions = services.reactions;

  app.get(
    '/messages/:id/reactions',
    {
      schema: {
        operationId: 'list-all-reactions',
        tags,
        summary: 'List all reactions',
        description: 'Lists the reactions to a message, in the order they were added, with the user of each.',
        headers,
        params: MessageIdParams,
        querystring: ReactionListQuery,
        response: { 200: ReactionListResponse, ...errorResponses },
      },
    },
    async (request) => reactions.list(request.ctx, request.params.id, request.query),
  );

  app.get(
    '/messages/:id/reactions/:reaction',
    {
      schema: {
        operationId: 'get-message-reactions',
        tags,
        summary: 'List reactions with a specific emoji/unicodes',
        description: 'Lists the reactions of one kind to a message, in the order they were added, with the user of each.',
        headers,
        params: ReactionParams,
        querystring: ReactionListQuery,
        response: { 200: ReactionListResponse, ...errorResponses },
      },
    },
    async (request) => reactions.list(request.ctx, request.params.id, request.query, request.params.reaction),
  );

  app.post(
    '/messages/:id/reactions/:reaction',
    {
      schema: {
        operationId: 'add-message-reactions',
        tags,
        summary: 'Add reaction',
        description: 'Adds a reaction of the onBehalfOf user (required) to a message; adding it again changes nothing. Answers the message with `data.reactions`.',
        headers,
        params: ReactionParams,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await reactions.add(request.ctx, request.params.id, request.params.reaction) }),
  );

  app.delete(
    '/messages/:id/reactions/:reaction',
    {
      schema: {
        operationId: 'remove-message-reactions',
        tags,
        summary: 'Remove reaction',
        description: 'Removes a reaction of the onBehalfOf user (required) from a message; removing one they have not added changes nothing. Answers the message with `data.reactions`.',
        headers,
        params: ReactionParams,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await reactions.remove(request.ctx, request.params.id, request.params.reaction) }),
  );
};
