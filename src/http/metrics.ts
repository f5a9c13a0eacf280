import { createHash, timingSafeEqual } from 'node:crypto';
import { AppError } from '../kernel/errors.js';
import { bearerOf, severalAuthorizations } from './bearer.js';
import type { App } from './instance.js';
import type { Metrics } from '../infra/metrics.js';

const digest = (value: string) => createHash('sha256').update(value).digest();

/**
 * The counters tell how the service is used (traffic, refusals, lag), so
 * they are no one's business but the operator's: GET /metrics takes
 * `Authorization: Bearer <METRICS_TOKEN>`, and without METRICS_TOKEN it
 * serves no one rather than everyone.
 */
export function metricsRoute(app: App, metrics: Metrics, token: string | undefined): void {
  const expected = token === undefined ? undefined : digest(token);
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    if (!expected) throw new AppError('unauthorized', 'Metrics are off: set METRICS_TOKEN and send it as `Authorization: Bearer <token>`');
    const presented = bearerOf(request);
    if (presented === 'several') throw severalAuthorizations();
    // Digests of equal length, so the comparison takes the same time whatever was sent.
    if (!presented || !timingSafeEqual(digest(presented), expected)) throw new AppError('unauthorized', 'Send METRICS_TOKEN as `Authorization: Bearer <token>`');
    return reply.type('text/plain; version=0.0.4').send(metrics.render());
  });
}
