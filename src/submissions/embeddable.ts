import type { FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ACCOUNTS } from '../../projections/accounts.js';
import { Plan } from '../accounts/plans.js';
import { AppError, type ErrorCode } from '../errors.js';
import type { App } from '../http/app.js';
import { callerOf, requireKey } from '../http/auth.js';
import { preflight } from '../http/cors.js';
import { Pagination, PaginationQuery, pagination, window } from '../http/pagination.js';
import type { Doc } from '../infra/read-models/port.js';
import type { Services } from '../services.js';
import { issueEmbedToken, TOKEN_TTL_SECONDS, type EmbedTarget } from './embed-token.js';
import type { Settings } from './settings.js';
import { eraseResponses, responseIdsOf } from './erasure.js';

/**
 * What widgets, forms and polls share: owners publish them, visitors read
 * and answer them through public endpoints with an embed token.
 */
export type Kind = EmbedTarget;

export const CODES: Record<Kind, { notFound: ErrorCode; notPublished: ErrorCode; closed: ErrorCode; label: string }> = {
  widget: { notFound: 'widget_not_found', notPublished: 'widget_not_published', closed: 'widget_closed', label: 'Widget' },
  form: { notFound: 'form_not_found', notPublished: 'form_not_published', closed: 'form_closed', label: 'Form' },
  poll: { notFound: 'poll_not_found', notPublished: 'poll_not_published', closed: 'poll_closed', label: 'Poll' },
};

export const ID = /^[A-Za-z0-9_-]{1,64}$/;
export const Params = z.object({ id: z.string().max(200) });

export const notFound = (kind: Kind) => new AppError(CODES[kind].notFound, `${CODES[kind].label} not found`);
export const notPublished = (kind: Kind) => new AppError(CODES[kind].notPublished, `This ${kind} is not published`);
export const closed = (kind: Kind) => new AppError(CODES[kind].closed, `This ${kind} is closed`);

/** What a visitor's answer (submit or vote) can be refused with, in the order the checks run (the first: the object's events are replayed). */
export const answerErrors = (kind: Kind): ErrorCode[] => ['event_unreadable', CODES[kind].notFound, CODES[kind].notPublished, CODES[kind].closed, 'invalid_token', 'domain_not_allowed', 'duplicate_submission'];

/** The stored fields every embeddable read model has. */
export interface EmbeddableDoc extends Doc {
  account_id: string;
  published: boolean;
  settings: Settings;
  /** Submissions accepted so far under `max_responses` (slots, never erased). */
  slots_taken?: number;
}

export interface Embeddable<D extends EmbeddableDoc> {
  kind: Kind;
  collection: string;
  /** `/api/widgets` and the like. */
  path: string;
}

/** A stored object by id, or null; malformed ids never reach a store. */
export async function findEmbeddable<D extends EmbeddableDoc>(services: Services, what: Embeddable<D>, id: string): Promise<D | null> {
  if (!ID.test(id)) return null;
  return (await services.readModels.get(what.collection, id)) as D | null;
}

/** The caller's own object, or the kind's 404 (D5: another account's object does not exist for the caller). */
export async function ownEmbeddable<D extends EmbeddableDoc>(services: Services, what: Embeddable<D>, id: string, accountId: string): Promise<D> {
  const doc = await findEmbeddable(services, what, id);
  if (!doc || doc.account_id !== accountId) throw notFound(what.kind);
  return doc;
}

/** The plan of an object's owner now (D4, D10: rates and metadata follow it). */
export async function ownerPlan(services: Services, accountId: string): Promise<Plan> {
  const owner = await services.readModels.get(ACCOUNTS, accountId);
  return Plan.catch('free').parse(owner?.plan);
}

/**
 * D4: public requests count per (owner, client address) at the owner's plan
 * rate; requests about objects that do not exist count per address, at the
 * lowest rate, so probing for ids is throttled. Answers the owner's plan.
 */
export async function limitVisitor(services: Services, request: FastifyRequest, reply: FastifyReply, ownerId: string | null): Promise<Plan> {
  const { limits } = request.server;
  if (ownerId === null) {
    await limits.take(request, reply, limits.address(request));
    return 'free';
  }
  const plan = await ownerPlan(services, ownerId);
  await limits.take(request, reply, limits.plan(`visitor:${ownerId}:${request.ip}`, plan));
  return plan;
}

/** Pro and Business: the object's own per-address limit on submissions (`settings.rate_limit`). */
export async function limitSubmissions(request: FastifyRequest, reply: FastifyReply, kind: Kind, id: string, settings: Settings, plan: Plan): Promise<void> {
  if (plan === 'free' || !settings.rate_limit) return;
  const { max, window_seconds } = settings.rate_limit;
  await request.server.limits.take(request, reply, { key: `object:${kind}:${id}:${request.ip}`, max, windowMs: window_seconds * 1000 }, false);
}

/** At or after `closes_at`. */
export const pastClosingTime = (settings: Settings, now: Date): boolean => Boolean(settings.closes_at && Date.parse(settings.closes_at) <= now.getTime());

/** Closed at or after `closes_at`, or once `max_responses` submissions were accepted. */
export function isClosed(doc: Pick<EmbeddableDoc, 'settings' | 'slots_taken'>, now: Date): boolean {
  const { max_responses } = doc.settings;
  return pastClosingTime(doc.settings, now) || (max_responses !== null && (doc.slots_taken ?? 0) >= max_responses);
}

/**
 * GET <path>/:id: public for published objects. Anonymous callers get 403
 * `*_not_published` for an unpublished one; a key of another account gets
 * 404; the owner (forms:read) gets the full view.
 */
export function publicRead<D extends EmbeddableDoc, S extends z.ZodType>(
  app: App,
  services: Services,
  what: Embeddable<D>,
  view: { schema: S; render(doc: D, owner: boolean): z.output<S> | Promise<z.output<S>>; suffix?: string; summary?: string },
): void {
  const url = `${what.path}/:id${view.suffix ?? ''}`;
  // The reply schema is the caller's, so fastify types the reply loosely here; `render` is typed by it instead.
  const schema: z.ZodType<unknown> = view.schema;
  const render = (doc: D, owner: boolean): unknown => view.render(doc, owner);
  const readDefinitions = requireKey(services, { scope: 'forms:read' });
  app.get(
    url,
    {
      config: { publicCors: true, optionalKey: true, errors: [CODES[what.kind].notFound, CODES[what.kind].notPublished] },
      schema: { tags: [`${what.kind}s`], summary: view.summary ?? `Get a ${what.kind} (public when published)`, params: Params, response: { 200: schema } },
    },
    async (request, reply) => {
      const doc = await findEmbeddable(services, what, request.params.id);
      if (!request.headers.authorization) await limitVisitor(services, request, reply, doc?.account_id ?? null);
      if (!doc) throw notFound(what.kind);
      if (!request.headers.authorization) {
        if (!doc.published) throw notPublished(what.kind);
        return render(doc, false);
      }
      await readDefinitions.call(app, request, reply);
      const owner = callerOf(request).accountId === doc.account_id;
      if (!owner && !doc.published) throw notFound(what.kind);
      return render(doc, owner);
    },
  );
  preflight(app, url, ['GET']);
}

/** GET <path>: the caller's own objects, newest first, paginated (D9), under the key `<kind>s`. */
export function listRoute<D extends EmbeddableDoc, S extends z.ZodType>(app: App, services: Services, what: Embeddable<D>, item: S): void {
  const key = `${what.kind}s`;
  const schema: z.ZodType<unknown> = z.object({ [key]: z.array(item), pagination: Pagination });
  app.get(
    what.path,
    { preHandler: requireKey(services, { scope: 'forms:read' }), schema: { tags: [key], summary: `List ${key}`, querystring: PaginationQuery, response: { 200: schema } } },
    async (request): Promise<unknown> => {
      const { accountId } = callerOf(request);
      const [docs, total] = await Promise.all([
        services.readModels.find(what.collection, { account_id: accountId }, { sort: [['created_at', -1], ['id', -1]], ...window(request.query) }),
        services.readModels.count(what.collection, { account_id: accountId }),
      ]);
      return { [key]: docs, pagination: pagination(request.query, total) };
    },
  );
}

/**
 * DELETE <path>/:id: the owner deletes the object (its aggregate decides,
 * `remove` runs that command), then every response or vote of it is erased.
 */
export function deleteRoute<D extends EmbeddableDoc>(
  app: App,
  services: Services,
  what: Embeddable<D>,
  remove: (id: string, meta: { accountId: string; keyId: string; at: Date; requestId: string }) => Promise<unknown>,
): void {
  app.delete(
    `${what.path}/:id`,
    {
      preHandler: requireKey(services, { scope: 'forms:write' }),
      config: { errors: [CODES[what.kind].notFound, 'conflict', 'event_unreadable'] },
      schema: { tags: [`${what.kind}s`], summary: `Delete a ${what.kind} and erase all its ${what.kind === 'poll' ? 'votes' : 'responses'}`, params: Params, response: { 200: z.object({ success: z.literal(true) }) } },
    },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      const id = request.params.id;
      if (!ID.test(id)) throw notFound(what.kind);
      await remove(id, { accountId, keyId, at: services.clock(), requestId: request.id });
      const responseIds = await responseIdsOf(services, what.kind, id);
      await eraseResponses(services, { accountId, parent: what.kind, parentId: id, responseIds, reason: 'parent_deleted', keyId, requestId: request.id });
      return { success: true as const };
    },
  );
}

/** GET <path>/:id/token: an embed token for a published object (D6). */
export function tokenRoute<D extends EmbeddableDoc>(app: App, services: Services, what: Embeddable<D>): void {
  app.get(
    `${what.path}/:id/token`,
    {
      config: { publicCors: true, errors: [CODES[what.kind].notFound, CODES[what.kind].notPublished] },
      schema: {
        tags: [`${what.kind}s`],
        summary: 'Get an embed token (valid 1800 s)',
        params: Params,
        response: { 200: z.object({ token: z.string(), expiresIn: z.literal(TOKEN_TTL_SECONDS) }) },
      },
    },
    async (request, reply) => {
      const doc = await findEmbeddable(services, what, request.params.id);
      await limitVisitor(services, request, reply, doc?.account_id ?? null);
      if (!doc) throw notFound(what.kind);
      if (!doc.published) throw notPublished(what.kind);
      return { token: issueEmbedToken(services.keys.embedTokens, what.kind, doc.id, services.clock()), expiresIn: TOKEN_TTL_SECONDS };
    },
  );
  preflight(app, `${what.path}/:id/token`, ['GET']);
}
