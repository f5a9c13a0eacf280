import type { IncomingHttpHeaders } from 'node:http';

/**
 * Stands for the service's own pages (its hosted pages) as the embedding
 * host: every object's `allowed_domains` admits them.
 */
export const SERVICE_PAGE = '(this service)';

/**
 * The host that embeds the object: from Origin, else from Referer;
 * SERVICE_PAGE when that is the service itself (the address the request was
 * sent to, or PUBLIC_BASE_URL's).
 */
export function embeddingHost(headers: IncomingHttpHeaders, publicBaseUrl?: string): string | null {
  for (const name of ['origin', 'referer'] as const) {
    const value = headers[name];
    if (typeof value !== 'string' || value === 'null') continue;
    try {
      const url = new URL(value);
      const own = [headers.host, publicBaseUrl ? new URL(publicBaseUrl).host : undefined].filter(Boolean);
      return own.includes(url.host) ? SERVICE_PAGE : url.hostname.toLowerCase();
    } catch {
      return null;
    }
  }
  return null;
}

/** `example.com` admits that host only; `*.example.com` admits its subdomains too. */
export function hostAllowed(host: string | null, patterns: string[]): boolean {
  if (patterns.length === 0 || host === SERVICE_PAGE) return true;
  if (!host) return false;
  return patterns.some((pattern) =>
    pattern.startsWith('*.') ? host === pattern.slice(2) || host.endsWith(pattern.slice(1)) : host === pattern,
  );
}
