import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest } from '../../domain/errors.js';
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
 * The edge check of every request, before any hook reads its values and before any service:
 * a body, path parameter, query value or header value that PostgreSQL cannot store (NUL, a lone
 * UTF-16 surrogate: see domain/text.ts), or a JSON body nested deeper than MAX_JSON_DEPTH, is
 * refused with ERR_BAD_REQUEST naming the field.
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

  // Callback hook, not an async one: it runs on every request.
  app.addHook('preValidation', (request, _reply, done) => {
    const problem = findUnstorable(request.params) ?? findUnstorable(request.query) ?? headerProblem(request);
    done(problem ? badRequest(problem) : undefined);
  });
}

function headerProblem(request: FastifyRequest) {
  for (const [name, value] of Object.entries(request.headers)) {
    for (const item of Array.isArray(value) ? value : [value]) {
      const problem = typeof item === 'string' ? unstorableText(item) : undefined;
      if (problem) return { [`header ${name}`]: problem };
    }
  }
  return undefined;
}
