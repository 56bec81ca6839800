import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import { BlockedListResponse, BlockedParams, ListBlockedQuery, ReviewBlockedBody, ReviewBlockedResponse } from '../../../schemas/moderation-blocked.schema.js';

/**
 * Moderation: messages held by the rules or the moderation hook, and their review. They take the
 * fullAccess apiKey or the deployment's management credential, as the vendor lists them.
 */
export const moderationBlockedRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const blocked = services.moderationBlocked;
  const config = { managementCredential: true };

  app.get(
    '/moderation/blocked-messages',
    {
      config,
      schema: {
        operationId: 'list-moderation-blocked-messages',
        tags: ['Moderation'],
        summary: 'List Blocked Messages',
        description:
          'Lists the messages a rule or the moderation hook held for review, newest first, with what held them; `status` lists those approved, rejected, or all instead of those awaiting review.',
        querystring: ListBlockedQuery,
        response: { 200: BlockedListResponse, ...errorResponses },
      },
    },
    async (request) => blocked.list(request.ctx, request.query),
  );

  // The vendor's review-blocked-message (`status` approved | rejected, `reviewed`) and
  // approve-moderation-blocked-messages (`status` approved) are the same PATCH: one handler serves both.
  app.patch(
    '/moderation/blocked-messages/:id',
    {
      config,
      schema: {
        operationId: 'review-blocked-message',
        tags: ['Moderation - Blocked Messages', 'Moderation'],
        summary: 'Review Blocked Message (also: Approve Blocked Messages)',
        description:
          "Reviews a held message: `approved` releases it in its original place (its message_sent fires now), `rejected` keeps it hidden from everyone but its sender. Also serves the vendor's approve-moderation-blocked-messages.",
        params: BlockedParams,
        body: ReviewBlockedBody,
        response: { 200: ReviewBlockedResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await blocked.review(request.ctx, request.params.id, request.body) }),
  );
};
