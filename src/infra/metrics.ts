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
