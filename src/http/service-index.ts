import { z } from 'zod';
import { ADDRESSES, SERVICE, addressesAt } from './about.js';
import type { App } from './instance.js';

const ServiceIndex = z
  .object({
    name: z.string(),
    version: z.string(),
    links: z.object(Object.fromEntries(Object.keys(ADDRESSES).map((name) => [name, z.string()])) as Record<keyof typeof ADDRESSES, z.ZodString>),
  })
  .meta({ description: 'The service and where its parts are: paths, or URLs under `PUBLIC_BASE_URL` when it is set' });

/** A client asking for a page gets one; the JSON index is for programs. */
const wantsPage = (accept: string | undefined) => /\btext\/html\b/i.test(accept ?? '');

/** `GET /`: the first thing a newcomer requests. */
export function serviceIndexRoute(app: App, publicBaseUrl: string | undefined): void {
  const body = { ...SERVICE, links: addressesAt(publicBaseUrl?.replace(/\/$/, '') ?? '') };
  app.get(
    '/',
    {
      schema: {
        tags: ['service'],
        operationId: 'getServiceIndex',
        summary: 'The service: its name, version and addresses',
        description: 'Browsers (`Accept: text/html`) are redirected to the interactive reference at `/docs`.',
        response: { 200: ServiceIndex, 302: z.null().meta({ description: 'To `/docs`, for a client that accepts `text/html`' }) },
      },
    },
    async (request, reply) => (wantsPage(request.headers.accept) ? reply.redirect(ADDRESSES.docs, 302) : body),
  );
}
