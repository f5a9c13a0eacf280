import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../kernel/errors.js';
import type { FastifyRequest } from 'fastify';
import { bearerOf, severalAuthorizations } from './bearer.js';
import type { App } from './instance.js';
import type { Metrics } from '../infra/metrics.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * Whether a request presents METRICS_TOKEN as its bearer: true when it does,
 * false when it sends no `Authorization` at all, 401 `unauthorized` when it
 * sends another credential (or any, while METRICS_TOKEN is unset), so that a
 * scraper or probe set up with the wrong token is told rather than served less.
 */
export function operatorCheck(token: string | undefined): (request: FastifyRequest) => boolean {
  const expected = token === undefined ? undefined : digest(token);
  return (request) => {
    const presented = bearerOf(request);
    if (presented === 'several') throw severalAuthorizations();
    if (presented === undefined && request.headers.authorization === undefined) return false;
    if (!expected) throw new AppError('unauthorized', 'Operator details are off: set METRICS_TOKEN and send it as `Authorization: Bearer <token>`');
    // Digests of equal length, so the comparison takes the same time whatever was sent.
    if (!presented || !timingSafeEqual(digest(presented), expected)) throw new AppError('unauthorized', 'Send METRICS_TOKEN as `Authorization: Bearer <token>`');
    return true;
  };
}

/**
 * The counters tell how the service is used (traffic, refusals, lag), so
 * they are no one's business but the operator's: GET /metrics takes
 * `Authorization: Bearer <METRICS_TOKEN>`, and without METRICS_TOKEN it
 * serves no one rather than everyone.
 */
export function metricsRoute(app: App, metrics: Metrics, token: string | undefined): void {
  const operator = operatorCheck(token);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (token === undefined) throw new AppError('unauthorized', 'Metrics are off: set METRICS_TOKEN and send it as `Authorization: Bearer <token>`');
    if (!operator(request)) throw new AppError('unauthorized', 'Send METRICS_TOKEN as `Authorization: Bearer <token>`');
    return reply.type('text/plain; version=0.0.4').send(metrics.render());
  });
}
