import type { IncomingHttpHeaders } from 'node:http';

/** The host that embeds the object: from Origin, else from Referer. */
export function embeddingHost(headers: IncomingHttpHeaders): string | null {
  for (const name of ['origin', 'referer'] as const) {
    const value = headers[name];
    if (typeof value !== 'string' || value === 'null') continue;
    try {
      return new URL(value).hostname.toLowerCase();
    } catch {
      return null;
    }
  }
  return null;
}

/** `example.com` admits that host only; `*.example.com` admits its subdomains too. */
export function hostAllowed(host: string | null, patterns: string[]): boolean {
  if (patterns.length === 0) return true;
  if (!host) return false;
  return patterns.some((pattern) =>
    pattern.startsWith('*.') ? host === pattern.slice(2) || host.endsWith(pattern.slice(1)) : host === pattern,
  );
}
