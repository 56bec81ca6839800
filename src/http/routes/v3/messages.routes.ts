import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { errorResponses, OnBehalfOfHeader } from '../../../schemas/common.schema.js';
import { GuidParams } from '../../../schemas/groups.schema.js';
import {
  ListAllMessagesQuery,
  ListGroupMessagesQuery,
  ListUserMessagesQuery,
  MessageIdParams,
  MessageListResponse,
  MessageResponse,
  SendMessageBody,
  SendMessageResponse,
} from '../../../schemas/messages.schema.js';
import { UidParams } from '../../../schemas/users.schema.js';

const tags = ['Messages'];
const headers = Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) });

/** Messages: send, get, and the three history lists (a conversation's pages kept as answered: see RenderedPages). */
export const messagesRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  // A conversation's latest page is read again and again (by each client that opens it): the
  // node's copies of the pages it answered (services.pageCache, see RenderedPages).
  const { messages, history, pageCache: pages } = services;

  app.post(
    '/messages',
    {
      config: { perUserLimit: 'send_per_user' },
      schema: {
        operationId: 'send-message',
        tags,
        summary: 'Send',
        description: 'Sends a message as the onBehalfOf user (required). With `multipleReceivers`, sends one message to each receiver and answers per receiver.',
        headers,
        body: SendMessageBody,
        response: { 200: SendMessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await messages.send(request.ctx, request.body) }),
  );

  app.get(
    '/messages',
    {
      schema: {
        operationId: 'list-all-messages',
        tags,
        summary: 'List',
        description: "Lists the app's messages, oldest first within a page; with onBehalfOf, those of that user's conversations.",
        headers,
        querystring: ListAllMessagesQuery,
        response: { 200: MessageListResponse, ...errorResponses },
      },
    },
    async (request) => history.listAll(await actorContext(request, services), request.query),
  );

  app.get(
    '/messages/:id',
    {
      schema: {
        operationId: 'get-message-details',
        tags,
        summary: 'Get',
        description: 'Retrieves a message. With onBehalfOf, only a message of a conversation that user takes part in.',
        headers,
        params: MessageIdParams,
        response: { 200: MessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await history.get(await actorContext(request, services), request.params.id) }),
  );

  app.get(
    '/users/:uid/messages',
    {
      schema: {
        operationId: 'user-list-user-messages',
        tags,
        summary: 'List user conversation messages',
        description: 'Lists the messages between the onBehalfOf user (required) and the user in the path.',
        headers,
        params: UidParams,
        querystring: ListUserMessagesQuery,
        response: { 200: MessageListResponse, ...errorResponses },
      },
    },
    async (request, reply) => pages.serve(request, reply, (versioned) => history.listWithUser(request.ctx, request.params.uid, request.query, { versioned })),
  );

  app.get(
    '/groups/:guid/messages',
    {
      schema: {
        operationId: 'user-list-group-messages',
        tags,
        summary: 'List group messages',
        description: "Lists a group's messages; with onBehalfOf, that user must be a member.",
        headers,
        params: GuidParams,
        querystring: ListGroupMessagesQuery,
        response: { 200: MessageListResponse, ...errorResponses },
      },
    },
    async (request, reply) => pages.serve(request, reply, (versioned) => history.listInGroup(request.ctx, request.params.guid, request.query, { versioned })),
  );
};
