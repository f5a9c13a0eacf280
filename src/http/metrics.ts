import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { AppError } from '../errors.js';
import { bearerOf, severalAuthorizations } from './bearer.js';
import type { App } from './instance.js';

/**
 * A few counters an operator wants to watch, in Prometheus' text format at
 * GET /metrics. Kept per process: each instance reports its own.
 */
const SAMPLES = 10_000;

export class Metrics {
  private readonly counters = new Map<string, number>();
  /** The latest samples of each observed quantity (a ring), for quantiles. */
  private readonly samples = new Map<string, { values: number[]; next: number; seen: number }>();

  observe(name: string, value: number): void {
    let ring = this.samples.get(name);
    if (!ring) this.samples.set(name, (ring = { values: [], next: 0, seen: 0 }));
    ring.values[ring.next] = value;
    ring.next = (ring.next + 1) % SAMPLES;
    ring.seen++;
  }

  increment(name: string, labels: Record<string, string> = {}): void {
    const key = `${name}${Object.keys(labels).length ? `{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}` : ''}`;
    this.counters.set(key, (this.counters.get(key) ?? 0) + 1);
  }

  render(): string {
    const lines = [...this.counters].map(([key, value]) => `${key} ${value}`);
    for (const [name, ring] of this.samples) {
      const sorted = [...ring.values].sort((a, b) => a - b);
      for (const q of [0.5, 0.9, 0.99]) lines.push(`${name}{quantile="${q}"} ${sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]}`);
      lines.push(`${name}_count ${ring.seen}`);
    }
    return lines.join('\n') + '\n';
  }
}

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
