import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestContext } from '../../domain/context.js';
import { AppError } from '../../domain/errors.js';
import type { ManagementService } from '../../services/management.service.js';
import type { RateLimitsService } from '../../services/rate-limits.service.js';
import { AuthFailureGuard } from './rate-limit.js';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The management API's authentication, for every route registered in `scope`: the vendor's `key`
 * and `secret` headers, checked against the deployment's management credentials before the body
 * is read. With `host`, the routes answer only requests for that host (`apimgmt.<domain>`, the
 * vendor's paths); any other host gets ERR_API_NOT_FOUND, as for a path that is not routed.
 * Refused pairs are cached (ManagementKeysRepository.matches), and failed authentications are
 * limited per client address (AuthFailureGuard): past the limit, no lookup is made.
 */
export function installManagementAuth(scope: FastifyInstance, options: { management: ManagementService; rateLimits: RateLimitsService; host?: string }): void {
  const failures = new AuthFailureGuard(options.rateLimits);
  scope.decorateRequest('ctx', null as unknown as RequestContext);
  scope.addHook('onRequest', async (request) => {
    if (options.host !== undefined && request.hostname.toLowerCase() !== options.host) {
      throw new AppError('ERR_API_NOT_FOUND', { params: { method: request.method, url: request.url.split('?')[0]! } });
    }
    // The app, for the app-scoped operations, is the route's: see managementContext.
    request.ctx = { appId: '', requestId: request.id, log: request.log };
    try {
      await failures.check(request, request.ctx);
      await options.management.authenticate(request.ctx, header(request, 'key'), header(request, 'secret'));
    } catch (error) {
      await failures.refused(request, request.ctx, error);
    }
  });
}

/** The context of a management request about the app `appId` (a path parameter, any case). */
export function managementContext(request: FastifyRequest, appId = ''): RequestContext {
  return { appId: appId.toLowerCase(), requestId: request.id, log: request.log };
}
