import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, type ErrorDetails } from '../../domain/errors.js';
import { findUnstorable, jsonNestsDeeperThan, MAX_JSON_DEPTH, mayHoldUnstorableText, unstorableText } from '../../domain/text.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * 'records': the body is a batch of records that the service checks one by one (the data
     * import), so that a bad record fails alone; the edge then bounds only its nesting.
     */
    bodyCheck?: 'records';
  }
}

/**
 * A data import body (`{"users": {"<uid>": {...}}}`) is refused whole only when nested deeper than
 * this; a record nested deeper than MAX_JSON_DEPTH within it fails alone (the service checks it).
 */
const RECORDS_BODY_MAX_DEPTH = 2 * MAX_JSON_DEPTH;

/**
 * The edge check of every request, before any service: a body, path parameter, query value or
 * header value that PostgreSQL cannot store (NUL, a lone UTF-16 surrogate: see domain/text.ts),
 * or a JSON body nested deeper than MAX_JSON_DEPTH, is refused with ERR_BAD_REQUEST naming the
 * field. This installs the JSON body parser; the app's preValidation hook calls textProblemOf.
 */
export function installTextGuard(app: FastifyInstance): void {
  // An empty body with a JSON content type (common on DELETE) is read as no body.
  const jsonParser = app.getDefaultJsonParser('error', 'error');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body as string;
    if (text === '') return done(null, undefined);
    const records = request.routeOptions.config?.bodyCheck === 'records';
    const maxDepth = records ? RECORDS_BODY_MAX_DEPTH : MAX_JSON_DEPTH;
    if (jsonNestsDeeperThan(text, maxDepth)) return done(badRequest({ body: `nests deeper than ${maxDepth} levels` }), undefined);
    jsonParser(request, text, (error, parsed) => {
      if (error || records || !mayHoldUnstorableText(text)) return done(error, parsed);
      const problem = findUnstorable(parsed);
      if (problem) done(badRequest(problem), undefined);
      else done(null, parsed);
    });
  });
}

/**
 * The edge's check of a request's path parameters, query values and header values (the body is
 * checked as it is parsed): the first that PostgreSQL cannot store, as error details. Called by
 * the app's one preValidation hook, on every request, so it allocates nothing when all is well.
 */
export function textProblemOf(request: FastifyRequest): ErrorDetails | undefined {
  return findUnstorable(request.params) ?? findUnstorable(request.query) ?? headerProblem(request.headers);
}

function headerProblem(headers: FastifyRequest['headers']): ErrorDetails | undefined {
  for (const name in headers) {
    const value = headers[name];
    if (typeof value === 'string') {
      const problem = unstorableText(value);
      if (problem) return { [`header ${name}`]: problem };
    } else if (Array.isArray(value)) {
      for (const item of value) {
        const problem = unstorableText(item);
        if (problem) return { [`header ${name}`]: problem };
      }
    }
  }
  return undefined;
}
