import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction, onResponseHookHandler } from 'fastify';
import { UNMATCHED_ROUTE, type RequestCounts, type RouteCounts } from '../../metrics/requests.js';

/**
 * Counts every answer by route template (never the ids in the path), method and status, with
 * its latency (docs/metrics.md). Each route gets an onResponse hook of its own, bound to its
 * counts when it is registered (as the rate limits' hooks are), so a request only adds to a few
 * numbers; the requests no route matched are counted by one hook for the server. Call before
 * the routes are registered.
 */
export function installRequestMetrics(app: FastifyInstance, requests: RequestCounts): void {
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const counts = methods.map((method) => requests.route(route.url, method));
    const hook = counts.length === 1 ? observeWith(counts[0]!) : observeWithMethod(counts);
    const existing = route.onResponse === undefined ? [] : Array.isArray(route.onResponse) ? route.onResponse : [route.onResponse];
    // A new array: Fastify's HEAD twin of a GET route shares the original one.
    route.onResponse = [...existing, hook];
  });
  // Callback hooks, not async ones: they run on every request.
  app.addHook('onResponse', (request, reply, done) => {
    if (request.is404) requests.route(UNMATCHED_ROUTE, request.method).observe(reply.statusCode, reply.elapsedTime, appOf(request));
    done();
  });
}

function observeWith(counts: RouteCounts): onResponseHookHandler {
  return function countAnswer(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    counts.observe(reply.statusCode, reply.elapsedTime, appOf(request));
    done();
  };
}

function observeWithMethod(counts: RouteCounts[]): onResponseHookHandler {
  return function countAnswer(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) {
    const method = request.method;
    for (const each of counts) if (each.method === method) each.observe(reply.statusCode, reply.elapsedTime, appOf(request));
    done();
  };
}

/** The app the request was for, once tenancy resolved it ('' before, or on a route without). */
function appOf(request: FastifyRequest): string {
  return (request as { ctx?: { appId: string } | null }).ctx?.appId ?? '';
}
