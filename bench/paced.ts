import { Agent, request } from 'node:http';

export interface PacedResult {
  rps: number;
  p50: number;
  p99: number;
  errors: number;
  non2xx: number;
}

/**
 * An open-loop load at a steady rate: one request every 1000/rate ms, each
 * sent on time whether or not earlier ones have answered, latency measured
 * from when it was due. autocannon's `overallRate` is not this: each
 * connection sends flat out until its quota for the second is used, then
 * idles, so "half the rate" is really the peak load half the time.
 */
export async function paced(options: { url: string | string[]; rate: number; seconds: number; method?: string; request: () => { headers: Record<string, string>; body?: string } }): Promise<PacedResult> {
  // Several URLs (instances of one service) take the requests in turn.
  const targets = [options.url].flat().map((url) => new URL(url));
  // noDelay: a body written after its headers must not wait on Nagle's algorithm and the peer's delayed ACK.
  const agent = new Agent({ keepAlive: true, maxSockets: 256, noDelay: true });
  const latencies: number[] = [];
  let errors = 0;
  let non2xx = 0;
  let sent = 0;
  let inFlight = 0;
  const started = performance.now();
  const total = Math.round(options.rate * options.seconds);
  const one = (dueAt: number) => {
    const { headers, body } = options.request();
    const target = targets[sent % targets.length]!;
    inFlight++;
    const req = request({ host: target.hostname, port: target.port, path: target.pathname + target.search, method: options.method ?? 'GET', headers, agent }, (res) => {
      res.resume();
      res.on('end', () => {
        inFlight--;
        latencies.push(performance.now() - dueAt);
        if (res.statusCode === undefined || res.statusCode >= 300) non2xx++;
      });
    });
    req.on('error', () => {
      inFlight--;
      errors++;
    });
    req.end(body);
  };
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const now = performance.now();
      // Request k is due at k·1000/rate ms.
      const due = Math.min(total, Math.floor(((now - started) * options.rate) / 1000) + 1);
      for (; sent < due; sent++) one(started + (sent * 1000) / options.rate);
      if (sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 1);
  });
  while (inFlight > 0) await new Promise((resolve) => setTimeout(resolve, 5));
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const at = (q: number) => Math.round(latencies[Math.min(latencies.length - 1, Math.floor(q * latencies.length))] ?? NaN);
  return { rps: Math.round(latencies.length / ((performance.now() - started) / 1000)), p50: at(0.5), p99: at(0.99), errors, non2xx };
}
