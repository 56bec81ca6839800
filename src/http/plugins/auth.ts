import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyScope, RequestContext } from '../../domain/context.js';
import { AppError } from '../../domain/errors.js';
import { normalizeId } from '../../domain/normalize.js';
import type { AppsService } from '../../services/apps.service.js';
import type { ManagementService } from '../../services/management.service.js';
import type { RateLimitsService } from '../../services/rate-limits.service.js';
import { AuthFailureGuard } from './rate-limit.js';
import { resolveAppId, type TenancySettings } from './tenancy.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by the auth hook on every authenticated route. */
    ctx: RequestContext;
  }
  interface FastifyContextConfig {
    /** The least key scope a route accepts; fullAccess unless it says authOnly. */
    access?: ApiKeyScope;
    /**
     * The route also takes the deployment's management credential (the `key` and `secret`
     * headers) instead of an apiKey, as the vendor's moderation operations list them.
     */
    managementCredential?: boolean;
  }
}

function header(request: FastifyRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Tenancy, then authentication, then access, for every route registered in `scope`:
 * the app from the Host (or appId header), the apiKey header checked against that app's keys,
 * and the key's scope against the route's. Runs before the body is read, so a refused
 * request touches nothing. Refusals are cached (CredentialCache) and limited per client address
 * and per app (AuthFailureGuard): a key not cached as valid is looked up only while neither has
 * used up its failed authentications of the minute.
 */
export function installAuth(scope: FastifyInstance, options: { apps: AppsService; management: ManagementService; rateLimits: RateLimitsService; tenancy: TenancySettings }): void {
  const failures = new AuthFailureGuard(options.rateLimits);
  scope.decorateRequest('ctx', null as unknown as RequestContext);
  scope.addHook('onRequest', async (request) => {
    const appId = resolveAppId(request.hostname, request.headers.appid, options.tenancy);
    const ctx: RequestContext = { appId, requestId: request.id, log: request.log };
    const apiKey = header(request, 'apikey');
    const key = header(request, 'key');
    // Without an apiKey, a route that takes the management credential reads key and secret instead.
    const byManagement = apiKey === undefined && request.routeOptions.config.managementCredential === true && (key !== undefined || header(request, 'secret') !== undefined);
    // biome-ignore lint/suspicious/noImplicitAnyLet: typed by its assignment below (TypeScript's control-flow typing)
    let credential;
    try {
      if (byManagement) {
        await failures.check(request, ctx);
        await options.management.authenticate(ctx, key, header(request, 'secret'));
      }
      credential = byManagement ? await options.apps.managementCredential(ctx, key!) : await options.apps.authenticate(ctx, apiKey, () => failures.check(request, ctx));
    } catch (error) {
      return failures.refused(request, ctx, error);
    }
    if (credential.scope !== 'fullAccess' && request.routeOptions.config.access !== 'authOnly') {
      throw new AppError('AUTH_ERR_NO_ACCESS');
    }
    const onBehalfOf = header(request, 'onbehalfof')?.trim();
    // Field by field, not `{ ...ctx, credential }`: see domain/objects.ts.
    request.ctx = onBehalfOf ? { appId, requestId: request.id, log: request.log, credential, onBehalfOf: normalizeId(onBehalfOf) } : { appId, requestId: request.id, log: request.log, credential };
  });
}
