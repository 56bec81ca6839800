import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { errorResponses, OnBehalfOfHeader } from '../../../schemas/common.schema.js';
import {
  CreateReasonBody,
  FlaggedListResponse,
  FlagMessageBody,
  FlagMessageResponse,
  ListFlaggedQuery,
  ListReviewedQuery,
  MessageParams,
  ReasonDeleteResponse,
  ReasonListResponse,
  ReasonParams,
  ReasonResponse,
  ReviewedFlaggedResponse,
  ReviewedListResponse,
  ReviewFlaggedBody,
  UpdateReasonBody,
} from '../../../schemas/moderation-flags.schema.js';

/** Moderation: reasons, users' flags of messages, and their review. */
export const moderationFlagsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const reasons = services.moderationReasons;
  const flags = services.moderationFlags;
  const reasonTags = ['Moderation - Reasons'];
  const flaggedTags = ['Moderation - Flagged Messages'];

  app.post(
    '/moderation/reasons',
    {
      schema: {
        operationId: 'create-reason',
        tags: reasonTags,
        summary: 'Create Reasons',
        description: 'Creates a reason users can flag messages for; at most 100 per app, the built-in reasons aside. A built-in reason’s id is taken unless the app deleted it.',
        body: CreateReasonBody,
        response: { 200: ReasonResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await reasons.create(request.ctx, request.body) }),
  );

  app.get(
    '/moderation/reasons',
    {
      schema: {
        operationId: 'list-reasons',
        tags: reasonTags,
        summary: 'List Reasons',
        description: 'Lists the reasons of the app: the built-in ones (`default: true`) as the app changed them, then its own, oldest first.',
        response: { 200: ReasonListResponse, ...errorResponses },
      },
    },
    async (request) => reasons.list(request.ctx),
  );

  app.get(
    '/moderation/reasons/:id',
    {
      schema: {
        operationId: 'get-reason-details',
        tags: reasonTags,
        summary: 'Get Reason details',
        description: 'Retrieves a reason.',
        params: ReasonParams,
        response: { 200: ReasonResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await reasons.get(request.ctx, request.params.id) }),
  );

  app.put(
    '/moderation/reasons/:id',
    {
      schema: {
        operationId: 'update-reason-details',
        tags: reasonTags,
        summary: 'Update Reason details',
        description: 'Updates the name and/or description of a reason, a built-in one included.',
        params: ReasonParams,
        body: UpdateReasonBody,
        response: { 200: ReasonResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await reasons.update(request.ctx, request.params.id, request.body) }),
  );

  app.delete(
    '/moderation/reasons/:id',
    {
      schema: {
        operationId: 'delete-reason',
        tags: reasonTags,
        summary: 'Delete Reasons',
        description: 'Deletes a reason, a built-in one included; flags made with it keep its id. Answers `success` and `message` at the top level, as the vendor does.',
        params: ReasonParams,
        response: { 200: ReasonDeleteResponse, ...errorResponses },
      },
    },
    async (request) => reasons.delete(request.ctx, request.params.id),
  );

  app.post(
    '/messages/:id/flagged',
    {
      schema: {
        operationId: 'flag-a-message',
        tags: flaggedTags,
        summary: 'Flag a message',
        description:
          'Flags a message as the onBehalfOf user (required), who must see it, for a reason of the app. One flag per user and message: flagging again replaces it. The message goes to the queue of flagged messages.',
        headers: Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) }),
        params: MessageParams,
        body: FlagMessageBody,
        response: { 200: FlagMessageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await flags.flag(request.ctx, request.params.id, request.body) }),
  );

  app.get(
    '/moderation/flagged-messages',
    {
      schema: {
        operationId: 'list-flagged-messages',
        tags: flaggedTags,
        summary: 'List flagged messages',
        description: 'Lists the flagged messages waiting for review, the one flagged last first, each with its message, latest flags and counts by reason.',
        querystring: ListFlaggedQuery,
        response: { 200: FlaggedListResponse, ...errorResponses },
      },
    },
    async (request) => flags.listFlagged(request.ctx, request.query),
  );

  app.patch(
    '/moderation/flagged-messages/:id',
    {
      schema: {
        operationId: 'blockreview-flagged-message',
        tags: flaggedTags,
        summary: 'Block/Review Flagged Message',
        description:
          'Reviews a flagged message: `approved` keeps it shown (shows it again after a disapproval), `disapproved` hides it from all but its sender. It moves to the reviewed messages; it may be reviewed again.',
        params: MessageParams,
        body: ReviewFlaggedBody,
        response: { 200: ReviewedFlaggedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await flags.review(request.ctx, request.params.id, request.body.status) }),
  );

  app.get(
    '/moderation/reviewed-messages',
    {
      schema: {
        operationId: 'list-reviewed-messages',
        tags: ['Moderation - Reviewed Messages'],
        summary: 'List Reviewed messages',
        description: 'Lists what moderators reviewed, the latest review first: flagged messages (`source: flagged`) and messages the moderation engine held (`source: blocked`).',
        querystring: ListReviewedQuery,
        response: { 200: ReviewedListResponse, ...errorResponses },
      },
    },
    async (request) => flags.listReviewed(request.ctx, request.query),
  );
};
