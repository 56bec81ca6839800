import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { RequestContext } from '../../domain/context.js';
import { AppError } from '../../domain/errors.js';
import type { ManagementService } from '../../services/management.service.js';

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * The management API's authentication, for every route registered in `scope`: the vendor's `key`
 * and `secret` headers, checked against the deployment's management credentials before the body
 * is read. With `host`, the routes answer only requests for that host (`apimgmt.<domain>`, the
 * vendor's paths); any other host gets ERR_API_NOT_FOUND, as for a path that is not routed.
 */
export function installManagementAuth(scope: FastifyInstance, options: { management: ManagementService; host?: string }): void {
  scope.decorateRequest('ctx', null as unknown as RequestContext);
  scope.addHook('onRequest', async (request) => {
    if (options.host !== undefined && request.hostname.toLowerCase() !== options.host) {
      throw new AppError('ERR_API_NOT_FOUND', { params: { method: request.method, url: request.url.split('?')[0]! } });
    }
    // The app, for the app-scoped operations, is the route's: see managementContext.
    request.ctx = { appId: '', requestId: request.id, log: request.log };
    await options.management.authenticate(request.ctx, header(request, 'key'), header(request, 'secret'));
  });
}

/** The context of a management request about the app `appId` (a path parameter, any case). */
export function managementContext(request: FastifyRequest, appId = ''): RequestContext {
  return { appId: appId.toLowerCase(), requestId: request.id, log: request.log };
}
