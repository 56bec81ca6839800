import { pageOf } from './paging.js';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { extended } from '../../../domain/objects.js';
import { errorResponses, OnBehalfOfHeader } from '../../../schemas/common.schema.js';
import {
  ConversationActionResponse,
  ConversationIdParams,
  ConversationListResponse,
  ConversationResponse,
  ListConversationsQuery,
  MarkConversationBody,
  ResetUserConversationBody,
  UpdateConversationBody,
} from '../../../schemas/conversations.schema.js';
import { GuidParams } from '../../../schemas/groups.schema.js';
import { UidParams } from '../../../schemas/users.schema.js';
import type { ReceiptKind } from '../../../services/conversations.service.js';

const tags = ['Conversations'];
// Required by every operation; the service answers its absence with ERR_BAD_REQUEST.
const headers = Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) });

const MARKS: Array<{ kind: ReceiptKind; method: 'POST' | 'DELETE'; path: string; user: string; group: string; summary: string }> = [
  { kind: 'delivered', method: 'POST', path: 'delivered', user: 'mark-conversation-as-delivered', group: 'mark-group-conversation-as-delivered', summary: 'Mark as delivered' },
  { kind: 'read', method: 'POST', path: 'read', user: 'mark-conversation-as-read', group: 'mark-group-conversation-as-read', summary: 'Mark as read' },
  { kind: 'unread', method: 'DELETE', path: 'read', user: 'mark-conversation-as-unread', group: 'mark-group-conversation-as-unread', summary: 'Mark as unread' },
];

/** Conversations: list, get, tag, reset, and the viewer's receipts. */
export const conversationsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const conversations = services.conversations;

  app.get(
    '/conversations',
    {
      schema: {
        operationId: 'list-all-conversations',
        tags,
        summary: 'List',
        description: 'Lists the conversations of the onBehalfOf user (required), the most recently active first.',
        headers,
        querystring: ListConversationsQuery,
        response: { 200: ConversationListResponse, ...errorResponses },
      },
    },
    async (request) => conversations.list(request.ctx, extended(request.query, pageOf(request.query))),
  );

  app.get(
    '/conversations/:conversationId',
    {
      schema: {
        operationId: 'get-conversation',
        tags,
        summary: 'Get (deprecated)',
        description: 'Retrieves a conversation of the onBehalfOf user (required) by its id.',
        headers,
        params: ConversationIdParams,
        response: { 200: ConversationResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await conversations.getById(await actorContext(request, services), request.params.conversationId) }),
  );

  app.delete(
    '/conversations/:conversationId',
    {
      schema: {
        operationId: 'delete-conversation',
        tags,
        summary: 'Delete (deprecated)',
        description: 'Clears the conversation for the onBehalfOf user (required), as reset-user/group-conversation does.',
        headers,
        params: ConversationIdParams,
        response: { 200: ConversationActionResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await conversations.deleteById(await actorContext(request, services), request.params.conversationId) }),
  );

  for (const kind of ['user', 'group'] as const) {
    const base = kind === 'user' ? '/users/:uid/conversation' : '/groups/:guid/conversation';
    const params = kind === 'user' ? UidParams : GuidParams;
    const what = kind === 'user' ? 'the 1:1 conversation of the onBehalfOf user (required) with the user in the path' : "the group's conversation, for the onBehalfOf member (required)";
    const target = (p: { uid?: string; guid?: string }) => ({ type: kind, id: (kind === 'user' ? p.uid : p.guid)! });

    app.get(
      base,
      {
        schema: {
          operationId: kind === 'user' ? 'get-user-conversations' : 'get-group-conversations',
          tags,
          summary: kind === 'user' ? 'Get user conversation' : 'Get group conversation',
          description: `Retrieves ${what}.`,
          headers,
          params,
          response: { 200: ConversationResponse, ...errorResponses },
        },
      },
      async (request) => ({ data: await conversations.get(await actorContext(request, services), target(request.params as { uid?: string; guid?: string })) }),
    );

    app.put(
      base,
      {
        schema: {
          operationId: kind === 'user' ? 'update-user-conversation' : 'update-group-conversation',
          tags,
          summary: kind === 'user' ? 'Update user conversation' : 'Update group conversation',
          description: `Sets the viewer's tags of ${what}.`,
          headers,
          params,
          body: UpdateConversationBody,
          response: { 200: ConversationResponse, ...errorResponses },
        },
      },
      async (request) => ({ data: await conversations.update(await actorContext(request, services), target(request.params as { uid?: string; guid?: string }), request.body) }),
    );

    app.delete(
      base,
      {
        schema: {
          operationId: kind === 'user' ? 'reset-user-conversation' : 'reset-group-conversation',
          tags,
          summary: kind === 'user' ? 'Reset user conversation' : 'Reset group conversation',
          description: `Clears ${what}, for the viewer only, until a new message.${kind === 'user' ? ' `deleteMessagesPermanently` deletes it and its messages for both users.' : ''}`,
          headers,
          params,
          ...(kind === 'user' ? { body: ResetUserConversationBody } : {}),
          response: { 200: ConversationActionResponse, ...errorResponses },
        },
      },
      async (request) => ({
        data: await conversations.reset(request.ctx, target(request.params as { uid?: string; guid?: string }), (request.body ?? {}) as object),
      }),
    );

    for (const mark of MARKS) {
      const route = { method: mark.method, url: `${base}/${mark.path}` } as const;
      app.route({
        ...route,
        // Marking unread has a per-user limit of its own (unread_per_user, docs/rate-limits.md).
        ...(mark.kind === 'unread' ? { config: { perUserLimit: 'unread_per_user' as const } } : {}),
        schema: {
          operationId: kind === 'user' ? mark.user : mark.group,
          tags,
          summary: `${mark.summary}${kind === 'group' ? ' (group)' : ''}`,
          description: `Moves the viewer's ${mark.kind === 'delivered' ? 'delivered' : 'read'} mark in ${what}${mark.kind === 'unread' ? ' back: the messages after `messageId` (or all) become unread' : ' to `messageId`, or to the last message; never backwards'}.`,
          headers,
          params,
          body: MarkConversationBody,
          response: { 200: ConversationActionResponse, ...errorResponses },
        },
        handler: async (request) => {
          const body = (request.body ?? {}) as { messageId?: string | number };
          const result = await conversations.mark(await actorContext(request, services), target(request.params as { uid?: string; guid?: string }), mark.kind, body.messageId);
          // The vendor's 1:1 delivered/read examples spell the key `Message`.
          if (kind === 'user' && mark.kind !== 'unread') return { data: { success: result.success, Message: result.message } };
          return { data: result };
        },
      });
    }
  }
};
