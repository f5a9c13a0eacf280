import type { App } from './instance.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A public endpoint that embeds on any site call from the browser. */
    publicCors?: boolean;
  }
}

/**
 * Public endpoints (GET object, token, submit, vote, results) are called by
 * the embed from the host site's origin, so they allow every origin; the
 * domain allowlist is enforced on submission, not here. Management endpoints
 * send no CORS headers at all, so browsers keep other sites off them.
 */
export function publicCors(app: App): void {
  app.addHook('onSend', async (request, reply) => {
    if (request.routeOptions.config?.publicCors) reply.header('access-control-allow-origin', '*');
  });
}

/** Answers the browser's preflight for one public path. */
export function preflight(app: App, url: string, methods: Array<'GET' | 'POST'>): void {
  app.options(url, { config: { publicCors: true }, schema: { hide: true } }, async (_request, reply) => {
    reply.header('access-control-allow-methods', [...methods, 'OPTIONS'].join(', '));
    reply.header('access-control-allow-headers', 'Content-Type');
    reply.header('access-control-max-age', '86400');
    return reply.code(204).send();
  });
}
