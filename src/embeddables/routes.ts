import { z } from 'zod';
import type { Scope } from '../accounts/plans.js';
import { ErasurePending } from '../erasure/outcome.js';
import { deleteEmbeddable, type Author } from './commands.js';
import { callerOf, requireKey } from '../http/auth.js';
import { bearerOf } from '../http/bearer.js';
import { preflight } from '../http/cors.js';
import { titled } from '../http/operations.js';
import type { App } from '../http/instance.js';
import { Pagination, PaginationQuery, pagination, window } from '../kernel/pagination.js';
import type { Context } from '../kernel/context.js';
import { issueEmbedToken, TOKEN_TTL_SECONDS, embeddingHost, hostAllowed, isClosed } from './access.js';
import { CODES, domainNotAllowed, notFound, notPublished, ID, ParamsOf } from './kinds.js';
import { limitVisitor } from '../http/rate-limits.js';
import { findEmbeddable, findSummary, recentSummary, type Embeddable, type EmbeddableDoc, type EmbeddableSummary } from './queries.js';
import { RenderedViews } from './rendered-views.js';

/* The routes widgets, forms and polls share, each made for one kind. */

/** Each kind's public views kept as sent (see RenderedViews). */
const RENDERED_VIEWS_BYTES = 8 * 1024 * 1024;

/**
 * GET <path>/:id: public for published objects. Anonymous callers get 403
 * `*_not_published` for an unpublished one; a key of another account gets
 * 404; the owner (with the view's scope) gets the full view.
 */
export function publicRead<D extends EmbeddableDoc, S extends z.ZodType>(
  app: App,
  services: Context,
  what: Embeddable<D>,
  view: {
    schema: S;
    render(doc: D, owner: boolean): z.output<S> | Promise<z.output<S>>;
    suffix?: string;
    summary?: string;
    /** The OpenAPI operation's name and description; `get<Kind>` and the view's rules by default. */
    operationId?: string;
    description?: string;
    /** What a key needs to read it: definitions by default; a poll's results are a read of its votes (D1, spec 5.4). */
    scope?: Scope;
  },
): void {
  const url = `${what.path}/:id${view.suffix ?? ''}`;
  // The reply schema is the caller's, so fastify types the reply loosely here; `render` is typed by it instead.
  const schema: z.ZodType<unknown> = view.schema;
  const render = (doc: D, owner: boolean): unknown => view.render(doc, owner);
  const readWithKey = requireKey(services, { scope: view.scope ?? 'forms:read' });
  // The view alone changes with its object's stream and with the clock and the slots only through `closed`; anything with a suffix (results) is counted afresh.
  const rendered = view.suffix === undefined ? new RenderedViews(RENDERED_VIEWS_BYTES) : null;
  const version = (summary: EmbeddableSummary) => `${summary.revision}|${isClosed(summary, services.clock())}`;
  app.get(
    url,
    {
      config: { publicCors: true, optionalKey: true, errors: [CODES[what.kind].notFound, CODES[what.kind].notPublished] },
      schema: {
        tags: [`${what.kind}s`],
        operationId: view.operationId ?? `get${titled(what.kind)}`,
        summary: view.summary ?? `Get a ${what.kind} (public when published)`,
        description:
          view.description ??
          `Anyone reads a published ${what.kind}, as an embed does. Without \`Authorization\` an unpublished one is 403 \`${CODES[what.kind].notPublished}\`; with the owner's key (\`forms:read\`) the reply also holds its \`settings\` and timestamps; another account's key reads a published one as anyone does, and is answered 404 for an unpublished one.`,
        params: ParamsOf[what.kind],
        response: { 200: schema },
      },
    },
    async (request, reply) => {
      // The rate and the right to see it are checked on the summary, before the whole object is read.
      const summary = await findSummary(services, what, request.params.id);
      // Several Authorization headers are no one's: the key check refuses them, even when the one Node kept is empty.
      const anonymous = !request.headers.authorization && bearerOf(request) !== 'several';
      if (anonymous) await limitVisitor(services, request, reply, summary?.account_id ?? null);
      if (!summary) throw notFound(what.kind);
      if (anonymous && !summary.published) throw notPublished(what.kind);
      const sent = anonymous ? rendered?.get(summary.id, version(summary)) : undefined;
      if (sent !== undefined) return reply.type('application/json; charset=utf-8').send(sent);
      let owner = false;
      if (!anonymous) {
        await readWithKey.call(app, request, reply);
        owner = callerOf(request).accountId === summary.account_id;
        if (!owner && !summary.published) throw notFound(what.kind);
      }
      const doc = await findEmbeddable(services, what, summary.id);
      // Deleted, or unpublished, since the summary was read.
      if (!doc || (!owner && !doc.published)) throw anonymous && doc ? notPublished(what.kind) : notFound(what.kind);
      if (!anonymous || !rendered) return render(doc, owner);
      const body = JSON.stringify(view.schema.parse(await render(doc, false)));
      // Kept under the version the summary named: a change since then is a miss next time, never a stale view.
      rendered.set(doc.id, version(summary), body);
      return reply.type('application/json; charset=utf-8').send(body);
    },
  );
  preflight(app, url, ['GET']);
}

/** What a GET shows as `closed` now, for a PUT that sends it back (its aggregate compares the two); undefined when not sent. */
export async function shownClosed<D extends EmbeddableDoc>(services: Context, what: Embeddable<D>, id: string, sent: boolean | undefined): Promise<boolean | undefined> {
  if (sent === undefined) return undefined;
  const doc = await findEmbeddable(services, what, id);
  return doc ? isClosed(doc, services.clock()) : undefined;
}

/** GET <path>: the caller's own objects, newest first, paginated (D9), under the key `<kind>s`. */
export function listRoute<D extends EmbeddableDoc, S extends z.ZodType>(app: App, services: Context, what: Embeddable<D>, item: S): void {
  const key = `${what.kind}s`;
  const schema: z.ZodType<unknown> = z.object({ [key]: z.array(item), pagination: Pagination });
  app.get(
    what.path,
    {
      onRequest: requireKey(services, { scope: 'forms:read' }),
      schema: {
        tags: [key],
        operationId: `list${titled(key)}`,
        summary: `List ${key}`,
        description: `The caller's own ${key}, newest first, a page at a time (\`page\`, \`limit\` up to 100); each as a summary: its whole definition is one \`GET\` of it away.`,
        querystring: PaginationQuery,
        response: { 200: schema },
      },
    },
    async (request): Promise<unknown> => {
      const { accountId } = callerOf(request);
      // Summaries only: a page of whole definitions could weigh tens of megabytes.
      const [docs, total] = await Promise.all([
        services.readModels.find(what.summaries, { account_id: accountId }, { sort: [['created_at', -1], ['id', -1]], ...window(request.query) }),
        services.readModels.count(what.summaries, { account_id: accountId }),
      ]);
      return { [key]: docs, pagination: pagination(request.query, total) };
    },
  );
}

/**
 * DELETE <path>/:id: the owner deletes the object (its aggregate decides,
 * `remove` runs that command). The deletion event is the erasure's intent:
 * the erasure process erases every response or vote of the object, and the
 * reply waits for it (bounded), else answers 202.
 */
export function deleteRoute<D extends EmbeddableDoc>(
  app: App,
  services: Context,
  what: Embeddable<D>,
  remove: (id: string, author: Author, at: Date) => Promise<unknown>,
): void {
  app.delete(
    `${what.path}/:id`,
    {
      onRequest: requireKey(services, { scope: 'forms:write' }),
      config: { errors: [CODES[what.kind].notFound, 'conflict', 'event_unreadable'] },
      schema: {
        tags: [`${what.kind}s`],
        operationId: `delete${titled(what.kind)}`,
        summary: `Delete a ${what.kind} and erase all its ${what.kind === 'poll' ? 'votes' : 'responses'}`,
        description: 'The reply waits for the erasure (up to 10 s): 200 when it is done, 202 when it is still running; it finishes regardless, across restarts.',
        params: ParamsOf[what.kind],
        response: { 200: z.object({ success: z.literal(true) }), 202: ErasurePending },
      },
    },
    async (request, reply) => {
      const { accountId, keyId } = callerOf(request);
      const id = request.params.id;
      if (!ID.test(id)) throw notFound(what.kind);
      const { done } = await deleteEmbeddable(services, what.kind, id, { accountId, actor: keyId, requestId: request.id }, remove);
      if (!done) return reply.code(202).send({ success: true as const, pending: true as const });
      return { success: true as const };
    },
  );
}

/** GET <path>/:id/token: an embed token for a published object (D6). */
export function tokenRoute<D extends EmbeddableDoc>(app: App, services: Context, what: Embeddable<D>): void {
  app.get(
    `${what.path}/:id/token`,
    {
      config: { publicCors: true, errors: [CODES[what.kind].notFound, CODES[what.kind].notPublished, 'domain_not_allowed'] },
      schema: {
        tags: [`${what.kind}s`],
        operationId: `get${titled(what.kind)}EmbedToken`,
        summary: 'Get an embed token (valid 1800 s)',
        description: `The token a visitor's ${what.kind === 'poll' ? 'vote' : 'submission'} carries in \`_token\`, for a published ${what.kind}. With \`settings.allowed_domains\` set, a request whose \`Origin\` (else \`Referer\`) names a site the list leaves out is 403 \`domain_not_allowed\`; one naming no site still gets a token, and the ${what.kind === 'poll' ? 'vote' : 'submission'} is checked again.`,
        params: ParamsOf[what.kind],
        response: { 200: z.object({ token: z.string(), expiresIn: z.literal(TOKEN_TTL_SECONDS) }) },
      },
    },
    async (request, reply) => {
      const summary = await recentSummary(services, what, request.params.id);
      await limitVisitor(services, request, reply, summary?.account_id ?? null);
      if (!summary) throw notFound(what.kind);
      if (!summary.published) throw notPublished(what.kind);
      // Refused here, before the visitor fills anything in, so the embed can stay away. A
      // caller that names no site (a server, a script) still gets a token: submit checks again.
      const host = embeddingHost(request.headers, services.config.PUBLIC_BASE_URL);
      if (host !== null && !hostAllowed(host, summary.settings.allowed_domains)) throw domainNotAllowed(what.kind, host);
      return { token: issueEmbedToken(services.keys.embedTokens, what.kind, summary.id, services.clock()), expiresIn: TOKEN_TTL_SECONDS };
    },
  );
  preflight(app, `${what.path}/:id/token`, ['GET']);
}
