import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { hasZodFastifySchemaValidationErrors } from 'fastify-type-provider-zod';
import { AppError, STATUS as CODE_STATUS, type ErrorCode } from '../kernel/errors.js';
import { AppendTooLarge } from '../infra/event-store/port.js';
import { BODY_TOO_LARGE, discardBody } from './body-limit.js';
import { errorBody, type ErrorBody } from './error-body.js';
import type { Metrics } from '../infra/metrics.js';
import { isStorageFull, type StorageWatch } from '../infra/storage.js';
import { isStoreUnavailable } from '../infra/outage.js';
import { STATUS_CODES } from 'node:http';

/** Fastify's own client errors (bad JSON, wrong content type, too large) by status. */
const FASTIFY_CODES: Record<number, ErrorCode> = {
  400: 'validation_error',
  404: 'not_found',
  413: 'payload_too_large',
  415: 'unsupported_media_type',
};

/**
 * The refusals of the file server behind /docs (a path that leaves its
 * folder, a Range past the end, a failed If-Match): the client's doing, so
 * they keep their status rather than becoming a 500.
 */
const STATIC_CODES: Record<number, ErrorCode> = {
  400: 'validation_error',
  403: 'forbidden',
  404: 'not_found',
  412: 'precondition_failed',
  416: 'range_not_satisfiable',
};

function toBody(error: unknown, request: FastifyRequest, onStorageFull: () => void): ErrorBody {
  // Readiness says so however the request was answered (an error of ours wrapping it decides the reply).
  const full = isStorageFull(error);
  if (full) onStorageFull();
  // Ours first: an error of ours says what the client is told, whatever it wraps.
  if (!(error instanceof AppError) && full) {
    // Refused before it was acknowledged: the client is told nothing was stored and may retry.
    request.log.error({ err: error }, 'the store has no room left; writes are refused until it has');
    return errorBody('storage_full', 'The service has no storage space left; nothing of this request was stored. Retry later');
  }
  if (!(error instanceof AppError) && isStoreUnavailable(error)) {
    request.log.error({ err: error }, 'a store could not be reached or was held by another writer');
    return errorBody('store_unavailable', 'The service could not reach its storage in time. Retry in a few seconds');
  }
  if (error instanceof AppError) {
    // Ours, and the client cannot help it: the operator needs what the client does not get.
    if (error.statusCode >= 500) request.log.error({ err: error.cause ?? error, code: error.code }, error.message);
    return errorBody(error.code, error.message, error.details);
  }
  if (error instanceof AppendTooLarge) {
    // The body limit keeps requests under the store's default: the store must be configured for less.
    request.log.warn({ err: error, limit: error.limit }, 'the event store refused an append as too large; its maximum append size is below what the HTTP body limit lets through');
    return errorBody('payload_too_large', 'The request would store more than the event store takes at once');
  }
  if (hasZodFastifySchemaValidationErrors(error)) {
    const where = (error as FastifyError).validationContext ?? 'body';
    // One detail a path, the first zod found: a number past the range of whole numbers is not also told it is past the field's maximum.
    const details = new Map<string, { path: string; message: string }>();
    for (const issue of error.validation) {
      const path = [where, ...issue.instancePath.split('/').filter(Boolean)].join('.');
      if (!details.has(path)) details.set(path, { path, message: issue.message ?? 'is invalid' });
    }
    return errorBody('validation_error', `The request ${where} is invalid`, [...details.values()]);
  }
  const fastifyError = error as Partial<FastifyError>;
  const status = fastifyError.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500 && typeof fastifyError.code === 'string' && fastifyError.code.startsWith('FST_')) {
    const code = FASTIFY_CODES[status] ?? 'validation_error';
    if (code === 'payload_too_large') return errorBody(code, BODY_TOO_LARGE);
    if (code === 'validation_error') {
      return errorBody(code, 'The request body is not valid JSON', [{ path: 'body', message: fastifyError.message ?? 'is invalid' }]);
    }
    return errorBody(code, fastifyError.message ?? CODE_STATUS[code].toString());
  }
  const staticCode = typeof status === 'number' && (error as { expose?: unknown }).expose === true ? STATIC_CODES[status] : undefined;
  if (staticCode) return errorBody(staticCode, STATUS_CODES[status!] ?? 'Bad Request');
  // The client closed the connection before its body had all arrived: nothing of ours failed, and nobody is left to answer.
  const reset = (error as { code?: unknown }).code;
  if ((reset === 'ECONNRESET' || reset === 'ECONNABORTED') && !request.raw.complete) {
    request.log.info({ code: reset }, 'the client closed the connection before its request had arrived');
    return errorBody('validation_error', 'The request did not arrive whole: the client closed the connection');
  }
  request.log.error({ err: error }, 'unhandled error');
  return errorBody('internal_error', 'Something went wrong on our side; the request id identifies it in our logs');
}

/**
 * What a 507 asks a client to wait: room comes back when someone frees it,
 * not within milliseconds, and a retry before that is refused again (and
 * stores nothing), so an embed or integration backs off rather than hammers.
 */
const STORAGE_FULL_RETRY_SECONDS = 60;

/** A store held by another writer or out of reach is back within seconds, or the operator is paged. */
const STORE_UNAVAILABLE_RETRY_SECONDS = 5;

export function registerErrorHandling(app: FastifyInstance, metrics: Metrics, storage: StorageWatch): void {
  app.setErrorHandler(async (error, request, reply: FastifyReply) => {
    const body = toBody(error, request, () => storage.markFull());
    const documented = request.routeOptions.config?.documentedErrors;
    if (documented && !documented.has(body.code)) {
      // The OpenAPI document promised other codes: a defect of ours, not the client's.
      request.log.error({ code: body.code, route: request.routeOptions.url }, 'error code missing from the route\'s OpenAPI entry');
      metrics.increment('feedback_undocumented_errors_total', { route: `${request.method} ${request.routeOptions.url}`, code: body.code });
    }
    if (body.statusCode >= 500) reply.header('cache-control', 'no-store');
    if (body.code === 'storage_full') reply.header('retry-after', String(STORAGE_FULL_RETRY_SECONDS));
    if (body.code === 'store_unavailable') reply.header('retry-after', String(STORE_UNAVAILABLE_RETRY_SECONDS));
    // A body refused unread is still arriving: taken off the wire (up to a bound) before the answer, whose
    // connection closes after it, so a client still writing meets the answer rather than a closed connection.
    if (body.code === 'payload_too_large' || body.code === 'unsupported_media_type') await discardBody(request.raw);
    return reply.code(body.statusCode).send(body);
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send(errorBody('not_found', `No route ${request.method} ${request.url.split('?')[0]}`)),
  );
}
