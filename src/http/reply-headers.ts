/**
 * The headers every reply carries, however it was made (a route, fastify's
 * own refusals, or Node's parser before fastify saw the request). A page the
 * service serves (the docs, the embed) sets its own Content-Security-Policy.
 */
export const EVERY_REPLY = {
  'X-Content-Type-Options': 'nosniff',
  'Referrer-Policy': 'no-referrer',
  'X-Frame-Options': 'DENY',
  // JSON needs no sources.
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
} as const;
