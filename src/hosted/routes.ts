import type { FastifyReply, FastifyRequest } from 'fastify';
import { acceptedLanguages, directionOf, hostedStrings } from '../embed/languages.js';
import { reservedHeights } from '../embed/reserve.js';
import { notFound, Params } from '../embeddables/kinds.js';
import { limitVisitor } from '../http/rate-limits.js';
import { FORM, POLL, findEmbeddable, findSummary, type Embeddable, type EmbeddableDoc } from '../embeddables/queries.js';
import type { App } from '../http/instance.js';
import type { Context } from '../kernel/context.js';

/** What of a translation the hosted page's head shows. */
type HeadTexts = { title?: string; description?: string; question?: string; options?: Record<string, string> };
import { hostedPage, missingPage, pageLanguage, type HostedObject, type HtmlPage } from './page.js';

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
  view: (doc: D) => Omit<HostedObject, 'kind' | 'id' | 'indexable' | 'lang' | 'dir'>,
) {
  const kind = what.kind as 'form' | 'poll';
  const summary = await findSummary(services, what, id);
  await limitVisitor(services, request, reply, summary?.account_id ?? null);
  const doc = summary?.published ? await findEmbeddable(services, what, summary.id) : null;
  if (!doc || !doc.published) {
    if (wantsJson(request.headers.accept)) throw notFound(kind);
    const { lang, strings } = hostedStrings(request.headers['accept-language']);
    return send(reply, 404, missingPage(kind, { lang, dir: directionOf(lang), strings }));
  }
  // The page, its head and the embed in it are in one language, chosen by the visitor's Accept-Language.
  const lang = pageLanguage(doc as { language?: string; translations?: Record<string, unknown> }, acceptedLanguages(request.headers['accept-language']));
  const page = hostedPage({ kind, id: doc.id, indexable: doc.settings.indexable === true, lang, dir: directionOf(lang), ...view(translated(doc, lang)) }, `${ownOrigin(services, request)}${path}/${doc.id}`);
  return send(reply.header('vary', 'accept-language'), 200, page);
}

/** The object's title, description, question and options' texts in a language it has a translation in; as written where the translation has none. */
function translated<D extends EmbeddableDoc>(doc: D, lang: string): D {
  const translation = (doc as { language?: string; translations?: Record<string, HeadTexts> }).translations?.[lang];
  if (!translation || lang === (doc as { language?: string }).language) return doc;
  const texts: Record<string, unknown> = {};
  for (const key of ['title', 'description', 'question'] as const) if (translation[key]) texts[key] = translation[key];
  const options = (doc as { options?: Array<{ id: string; text: string }> }).options;
  if (options && translation.options) texts.options = options.map((o) => ({ ...o, text: translation.options?.[o.id] ?? o.text }));
  return { ...doc, ...texts };
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
