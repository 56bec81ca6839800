import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../../container.js';
import { errorResponses } from '../../../schemas/common.schema.js';
import { MessagesQuery, MessagesResponse, UsageQuery, UsageResponse } from '../../../schemas/stats.schema.js';

/** The vendor's Metrics (docs/stats.md): usage and message metrics, read from the counts the event log's aggregation keeps. */
export const statsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/stats',
    {
      schema: {
        operationId: 'usage-metrics',
        tags: ['Metrics'],
        summary: 'Usage Metrics',
        description:
          'Usage metrics of the app between fromDate and toDate (Unix seconds or milliseconds, at most 31 days apart): the distinct users active in the UTC hours the range touches. Calls and user-facing connections do not exist in Parley yet, so their minutes and concurrent_users are 0. A fullAccess key. See docs/stats.md.',
        querystring: UsageQuery,
        response: { 200: UsageResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.stats.usage(request.ctx, request.query) }),
  );

  app.get(
    '/stats/messages',
    {
      schema: {
        operationId: 'message-receipt-metrics',
        tags: ['Metrics'],
        summary: 'Message Metrics',
        description:
          'Messages sent, read receipts and delivery receipts of the app in five-minute points: the last hour, to the end of the five minutes under way, or (a Parley extension) the points that fromDate to toDate touch, at most a day. A fullAccess key. See docs/stats.md.',
        querystring: MessagesQuery,
        response: { 200: MessagesResponse, ...errorResponses },
      },
    },
    async (request) => ({ data: await services.stats.messages(request.ctx, request.query) }),
  );
};
