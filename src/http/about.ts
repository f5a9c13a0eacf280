/**
 * What the service calls itself, in the OpenAPI document, `GET /` and the
 * start-up log. The version is package.json's (a test holds them equal): read
 * here rather than from the file, which a build does not lay out where the
 * compiled code could find it.
 */
export const SERVICE = { name: 'Feedback collection service', version: '0.1.0' } as const;

/** The licence the service is published under (the LICENSE file), as the OpenAPI document names it. */
export const LICENSE = { name: 'MIT', url: 'https://spdx.org/licenses/MIT.html' } as const;

/** Where a newcomer finds each part of a running service, as paths under its address. */
export const ADDRESSES = {
  docs: '/docs',
  api_reference: '/docs/api.md',
  openapi: '/api/openapi.json',
  embed_script: '/embed.js',
  dashboard: '/dashboard',
  health: '/healthz',
  ready: '/readyz',
} as const;

/** The addresses under `base` (a URL without a trailing slash), or as paths when it is empty. */
export function addressesAt(base: string): Record<keyof typeof ADDRESSES, string> {
  return Object.fromEntries(Object.entries(ADDRESSES).map(([name, path]) => [name, `${base}${path}`])) as Record<keyof typeof ADDRESSES, string>;
}
