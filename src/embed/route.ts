import type { App } from '../http/instance.js';
import { AppError } from '../kernel/errors.js';
import { packText } from './languages.js';
import { embedScript } from './script.js';

/**
 * A blank page that runs the embed in preview mode: the dashboard frames it
 * so an owner sees the real embed, its styles kept apart from the
 * dashboard's as on a site, drawing definitions the dashboard posts to it.
 */
const PREVIEW_PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
  '<title>Preview of the embed</title></head><body><main data-preview-target aria-label="Preview of the embed"></main>' +
  '<script src="/embed.js" data-preview></script></body></html>';

/** Only pages of this origin may frame the preview; it loads the embed and its language packs, nothing else. */
const PREVIEW_POLICY = "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

/** The script site owners paste (the embed with the form evaluator) is made once per process (the server makes it at start-up) and served to every origin. */
export function embedRoute(app: App): void {
  app.get('/embed.js', { config: { publicCors: true }, schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').header('cache-control', 'public, max-age=300').send(embedScript()),
  );
  // A language pack: fetched by the embed once per page, only for a visitor who reads that language.
  app.get<{ Params: { file: string } }>('/embed/lang/:file', { config: { publicCors: true }, schema: { hide: true } }, async (request, reply) => {
    const code = /^([a-z]{2})\.json$/.exec(request.params.file)?.[1];
    const text = code === undefined ? undefined : packText(code);
    if (text === undefined) throw new AppError('not_found', `No language pack ${request.params.file}`);
    return reply.type('application/json; charset=utf-8').header('cache-control', 'public, max-age=86400').send(text);
  });
  app.get(
    '/embed/preview',
    {
      schema: { hide: true },
      // After the app's own onSend, which denies framing to every other reply.
      onSend: async (_request, reply, payload) => {
        reply.header('x-frame-options', 'SAMEORIGIN');
        return payload;
      },
    },
    async (_request, reply) =>
      reply.type('text/html; charset=utf-8').header('cache-control', 'no-cache').header('content-security-policy', PREVIEW_POLICY).send(PREVIEW_PAGE),
  );
}
