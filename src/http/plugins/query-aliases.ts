import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, preValidationHookHandler } from 'fastify';

/**
 * Query parameters under the names the vendor's client SDK sends (docs/client-api.md): `per_page`
 * for a list's `perPage` (or, on the message lists that page by `limit`, for `limit`). Each list
 * route whose query takes one of them gets a preValidation hook of its own that renames the
 * alias before the query is validated; a request that sends both keeps the canonical name's value.
 */
export function installQueryAliases(scope: FastifyInstance): void {
  scope.addHook('onRoute', (route) => {
    const properties = (route.schema?.querystring as { properties?: Record<string, unknown> } | undefined)?.properties;
    if (properties === undefined || 'per_page' in properties) return;
    const target = 'perPage' in properties ? 'perPage' : 'limit' in properties ? 'limit' : undefined;
    if (target === undefined) return;
    const existing = route.preValidation === undefined ? [] : Array.isArray(route.preValidation) ? route.preValidation : [route.preValidation];
    // A new array: Fastify's HEAD twin of a GET route shares the original one.
    route.preValidation = [...existing, aliasHook('per_page', target)];
  });
}

function aliasHook(alias: string, target: string): preValidationHookHandler {
  return function renameAlias(request: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction) {
    const query = request.query as Record<string, unknown> | undefined;
    if (query !== undefined && query[alias] !== undefined) {
      if (query[target] === undefined) query[target] = query[alias];
      delete query[alias];
    }
    done();
  };
}
