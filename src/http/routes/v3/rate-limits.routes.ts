import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../../container.js';
import { actorContext } from '../../plugins/actor.js';
import { errorResponses, OnBehalfOfHeader } from '../../../schemas/common.schema.js';
import { RateLimitsResponse } from '../../../schemas/rate-limits.schema.js';
import { setRateLimitHeaders } from '../../plugins/rate-limit.js';

/** Rate limits: where the calling app stands (a Parley extension; see docs/rate-limits.md). */
export const rateLimitsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/rate_limits',
    {
      // Neither counted nor refused: an app at its limit can still learn when it may go on.
      config: { rateLimit: 'uncounted' },
      schema: {
        operationId: 'get-rate-limits',
        tags: ['Rate Limits'],
        summary: 'Get',
        description:
          "The calling app's limit, requests remaining and reset time (unix seconds) of each rate-limit class that is on, in the current minute; with onBehalfOf, also the per-user classes that are on, for that user. Counts nothing.",
        headers: Type.Object({ onBehalfOf: Type.Optional(OnBehalfOfHeader) }),
        response: { 200: RateLimitsResponse, ...errorResponses },
      },
    },
    async (request, reply) => {
      const data = await services.rateLimits.usage(await actorContext(request, services));
      // The headers every /v3 answer carries, here the standard class's (read, not counted).
      if (data.standard) setRateLimitHeaders(reply, data.standard.limit, data.standard.remaining, data.standard.reset);
      return { data };
    },
  );
};
