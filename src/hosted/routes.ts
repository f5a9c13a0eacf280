import type { FastifyReply, FastifyRequest } from 'fastify';
import { LANGUAGES, hostedStrings } from '../embed/languages.js';
import { reservedHeights } from '../embed/reserve.js';
import { notFound } from '../embeddables/errors.js';
import { limitVisitor } from '../embeddables/limits.js';
import { FORM, POLL, findEmbeddable, findSummary, type Embeddable, type EmbeddableDoc } from '../embeddables/queries.js';
import { Params } from '../embeddables/schemas.js';
import type { App } from '../http/instance.js';
import type { Context } from '../kernel/context.js';
import { hostedPage, missingPage, type HostedObject, type HtmlPage } from './page.js';

/**
 * True when the client ranks JSON above HTML in its Accept header (a script,
 * `curl -H 'accept: application/json'`); a browser, or no header, gets HTML.
 */
export function wantsJson(accept: string | undefined): boolean {
  if (!accept) return false;
  const quality = (type: string): number => {
    let best = 0;
    for (const range of accept.split(',')) {
      const [media = '', ...params] = range.trim().toLowerCase().split(';');
      const q = Number(params.map((p) => p.trim()).find((p) => p.startsWith('q='))?.slice(2) ?? '1');
      const [major] = type.split('/');
      if (media === type || media === `${major}/*` || media === '*/*') best = Math.max(best, media === type ? q + 1e-6 : q);
    }
    return best;
  };
  return quality('application/json') > quality('text/html');
}

/** The service's own address: PUBLIC_BASE_URL, else the one the request was sent to. */
export const ownOrigin = (services: Pick<Context, 'config'>, request: FastifyRequest): string =>
  services.config.PUBLIC_BASE_URL?.replace(/\/$/, '') ?? `${request.protocol}://${request.host}`;

const send = (reply: FastifyReply, status: number, page: HtmlPage) =>
  reply.code(status).type('text/html; charset=utf-8').header('content-security-policy', page.policy).header('cache-control', 'no-cache').send(page.html);

/** The object's page, or the 404 page (a JSON error body to a client that asks for JSON). */
async function serve<D extends EmbeddableDoc & { settings: { indexable: boolean } }>(
  services: Context,
  request: FastifyRequest,
  reply: FastifyReply,
  id: string,
  what: Embeddable<D>,
  path: string,
  view: (doc: D) => Omit<HostedObject, 'kind' | 'id' | 'indexable'>,
) {
  const kind = what.kind as 'form' | 'poll';
  const summary = await findSummary(services, what, id);
  await limitVisitor(services, request, reply, summary?.account_id ?? null);
  const doc = summary?.published ? await findEmbeddable(services, what, summary.id) : null;
  if (!doc || !doc.published) {
    if (wantsJson(request.headers.accept)) throw notFound(kind);
    const { lang, strings } = hostedStrings(request.headers['accept-language']);
    const dir = LANGUAGES.find((l) => l.code === lang)?.dir ?? 'ltr';
    return send(reply, 404, missingPage(kind, { lang, dir, strings }));
  }
  const page = hostedPage({ kind, id: doc.id, indexable: doc.settings.indexable === true, ...view(doc) }, `${ownOrigin(services, request)}${path}/${doc.id}`);
  return send(reply, 200, page);
}

/**
 * GET /f/:id and /p/:id: a published form or poll as a page of its own, to
 * send people a link to. Unknown and unpublished objects are alike: a 404
 * page, or the JSON error body to a client that asks for JSON. HTML pages,
 * so not in the OpenAPI document.
 */
export function hostedRoutes(app: App, services: Context): void {
  app.get('/f/:id', { schema: { hide: true, params: Params } }, (request, reply) =>
    serve(services, request, reply, request.params.id, FORM, '/f', (form) => ({ title: form.title, description: form.description, reserve: reservedHeights('form', form) })),
  );
  app.get('/p/:id', { schema: { hide: true, params: Params } }, (request, reply) =>
    serve(services, request, reply, request.params.id, POLL, '/p', (poll) => ({ title: poll.question, description: poll.options.map((o) => o.text).join(' · '), reserve: reservedHeights('poll', poll) })),
  );
}
