import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { ApiKeyScope, Credential, RequestContext } from '../../domain/context.js';
import { AppError } from '../../domain/errors.js';
import { normalizeId } from '../../domain/normalize.js';
import type { AppsService } from '../../services/apps.service.js';
import type { AuthTokensService } from '../../services/auth-tokens.service.js';
import type { ManagementService } from '../../services/management.service.js';
import type { RateLimitsService } from '../../services/rate-limits.service.js';
import { checkClientBody, checkClientRequest, checkClientRule } from './client-access.js';
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
 * and the key's scope against the route's. Without an apiKey, an `authToken` header acts as its
 * user (docs/client-api.md): the context's onBehalfOf is theirs, and the client access table
 * (client-access.ts) says which operations, naming whom, it may call. Runs before the body is
 * read, so a refused request touches nothing. Refusals are cached (CredentialCache) and limited
 * per client address and per app (AuthFailureGuard): a key or token not cached as valid is
 * looked up only while neither has used up its failed authentications of the minute.
 */
export function installAuth(
  scope: FastifyInstance,
  services: { apps: AppsService; authTokens: AuthTokensService; management: ManagementService; rateLimits: RateLimitsService },
  tenancy: TenancySettings,
): void {
  const failures = new AuthFailureGuard(services.rateLimits);
  scope.decorateRequest('ctx', null as unknown as RequestContext);
  // A route opened to tokens must say how its path names users (client-access.ts).
  scope.addHook('onRoute', (route) => checkClientRule((route.schema as { operationId?: string } | undefined)?.operationId, route.url));
  scope.addHook('onRequest', async (request, reply) => {
    const appId = resolveAppId(request.hostname, request.headers.appid, tenancy);
    const ctx: RequestContext = { appId, requestId: request.id, log: request.log };
    const apiKey = header(request, 'apikey');
    const key = header(request, 'key');
    // Without an apiKey, a route that takes the management credential reads key and secret instead.
    const byManagement = apiKey === undefined && request.routeOptions.config.managementCredential === true && (key !== undefined || header(request, 'secret') !== undefined);
    const authToken = apiKey === undefined && !byManagement ? header(request, 'authtoken') : undefined;
    if (authToken !== undefined) {
      const { credential, uid } = await tokenCredential(request, ctx, authToken, services, failures);
      checkClientRequest(request, uid);
      const onBehalfOf = header(request, 'onbehalfof')?.trim();
      if (onBehalfOf && normalizeId(onBehalfOf) !== uid) {
        throw new AppError('ERR_PERMISSION_DENIED', { message: 'An auth token acts for its own user only: onBehalfOf may name no one else.' });
      }
      // Every log line of the request says whose token it was.
      const log = request.log.child({ authTokenUid: uid });
      request.log = log;
      reply.log = log;
      request.ctx = { appId, requestId: request.id, log, credential, onBehalfOf: uid };
      return;
    }
    // biome-ignore lint/suspicious/noImplicitAnyLet: typed by its assignment below (TypeScript's control-flow typing)
    let credential;
    try {
      if (byManagement) {
        await failures.check(request, ctx);
        await services.management.authenticate(ctx, key, header(request, 'secret'));
      }
      credential = byManagement ? await services.apps.managementCredential(ctx, key!) : await services.apps.authenticate(ctx, apiKey, () => failures.check(request, ctx));
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
  // Body fields a token's rule names (client-access.ts), once the body is parsed and validated.
  scope.addHook('preHandler', (request, _reply, done) => {
    const ctx = request.ctx;
    if (ctx?.credential?.kind !== 'authToken') return done();
    try {
      checkClientBody(request, ctx.onBehalfOf!);
    } catch (error) {
      return done(error as Error);
    }
    done();
  });
}

/**
 * The credential and user of a request's auth token: the token looked up (the failed
 * authentications' limit checked first unless it was found valid lately), then the app. A token
 * not found for an app that does not exist answers as a wrong app id does.
 */
async function tokenCredential(
  request: FastifyRequest,
  ctx: RequestContext,
  authToken: string,
  services: { apps: AppsService; authTokens: AuthTokensService },
  failures: AuthFailureGuard,
): Promise<{ credential: Credential; uid: string }> {
  try {
    const found = await services.authTokens
      .authenticate(ctx, authToken, () => failures.check(request, ctx))
      .catch(async (error: unknown) => {
        if (error instanceof AppError && error.code === 'AUTH_ERR_AUTH_TOKEN_NOT_FOUND') await services.apps.tokenCredential(ctx, '');
        throw error;
      });
    return { credential: await services.apps.tokenCredential(ctx, found.tokenHash), uid: found.uid };
  } catch (error) {
    return failures.refused(request, ctx, error);
  }
}
