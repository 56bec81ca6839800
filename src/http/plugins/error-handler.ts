import { validationDetails } from '../../schemas/validator.js';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, badRequest } from '../../domain/errors.js';
import { extended } from '../../domain/objects.js';

/** Fastify's own 4xx errors, as catalogue errors. Anything not listed becomes ERR_BAD_REQUEST. */
function fromFastifyError(error: FastifyError, request: FastifyRequest, bodyLimit: number): AppError | undefined {
  if (error.validation) return validationError(error);
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return badRequest({ body: 'is not valid JSON' }, 'The request body is not valid JSON.');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('ERR_PAYLOAD_TOO_LARGE', {
        params: { limit: request.routeOptions.bodyLimit ?? bodyLimit },
      });
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('ERR_UNSUPPORTED_MEDIA_TYPE', { params: { contentType: request.headers['content-type'] ?? '' } });
  }
  const status = error.statusCode ?? 500;
  if (status >= 400 && status < 500) return new AppError('ERR_BAD_REQUEST', { message: error.message });
  return undefined;
}

function validationError(error: FastifyError): AppError {
  return badRequest(validationDetails(error.validation ?? [], error.validationContext ?? 'body'));
}

/**
 * Errors the router raises before any route or hook runs (a malformed URL, a path parameter
 * longer than the router keeps), in the vendor's shape: Fastify's `frameworkErrors` option.
 */
export function frameworkErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const message = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'A path parameter of the URL is too long.' : error.code === 'FST_ERR_BAD_URL' ? 'The URL is malformed.' : error.message;
  const refused = badRequest({ url: message.replace(/\.$/, '').toLowerCase() }, message);
  // The router's refusals skip the hooks, the onSend that sets the id's header among them.
  void reply.header('x-request-id', request.id).status(refused.status).send(errorBody(refused, request.id));
}

/**
 * An error in the vendor's shape; its `details` (the fields at fault, if any) also carry the
 * request's id, as its X-Request-Id header and every log line of it do, so a client's report
 * of an error leads to the server's lines.
 */
export function errorBody(error: AppError, requestId: string) {
  return {
    error: {
      code: error.code,
      message: error.message,
      devMessage: error.message,
      details: error.details ? extended(error.details, { requestId }) : { requestId },
    },
  };
}

/**
 * One error handler for the whole server: catalogue errors are rendered in the vendor's shape,
 * Fastify's 4xx errors are mapped onto the catalogue, and anything else is a logged 500 whose
 * cause is not shown.
 */
export function installErrorHandling(app: FastifyInstance, options: { bodyLimit: number }): void {
  app.setErrorHandler((error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    let appError = error instanceof AppError ? error : fromFastifyError(error, request, options.bodyLimit);
    if (!appError) {
      request.log.error({ err: error }, 'unhandled error');
      appError = new AppError('ERR_EXCEPTION');
    } else if (appError.status === 503) {
      // Busy, timed out or shutting down: the state of the server, not a fault in it. A refusal
      // of its own (no cause: a stopping server's, one per reconnecting client) is one line, no stack.
      if (appError.cause === undefined) request.log.warn({ code: appError.code }, appError.message);
      else request.log.warn({ err: appError.cause }, appError.message);
    } else if (appError.status >= 500) {
      request.log.error({ err: appError.cause ?? appError }, appError.message);
    }
    if (appError.retryAfter !== undefined) void reply.header('retry-after', String(appError.retryAfter));
    void reply.status(appError.status).send(errorBody(appError, request.id));
  });

  app.setNotFoundHandler((request, reply) => {
    const error = new AppError('ERR_API_NOT_FOUND', { params: { method: request.method, url: request.url.split('?')[0]! } });
    void reply.status(error.status).send(errorBody(error, request.id));
  });
}
