import type { App } from './app.js';

/**
 * A few counters an operator wants to watch, in Prometheus' text format at
 * GET /metrics. Kept per process: each instance reports its own.
 */
export class Metrics {
  private readonly counters = new Map<string, number>();

  increment(name: string, labels: Record<string, string> = {}): void {
    const key = `${name}${Object.keys(labels).length ? `{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}` : ''}`;
    this.counters.set(key, (this.counters.get(key) ?? 0) + 1);
  }

  render(): string {
    return [...this.counters].map(([key, value]) => `${key} ${value}`).join('\n') + '\n';
  }
}

export function metricsRoute(app: App, metrics: Metrics): void {
  app.get('/metrics', { schema: { hide: true } }, async (_request, reply) => reply.type('text/plain; version=0.0.4').send(metrics.render()));
}
