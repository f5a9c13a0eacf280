import { z } from 'zod';
import { API_KEYS } from '../../projections/accounts.js';
import { WEBHOOKS, type WebhookDoc } from '../../projections/webhooks.js';
import { createKey, keyPage, revokeKey } from '../accounts/commands.js';
import { DEFAULT_SCOPES, Scope, type Plan } from '../accounts/plans.js';
import { deleteEmbeddable, type Author } from '../embeddables/commands.js';
import { ID, notFound, Params } from '../embeddables/kinds.js';
import { FORM, POLL, WIDGET, findEmbeddable, ownEmbeddable, type Embeddable, type EmbeddableDoc } from '../embeddables/queries.js';
import { ErasurePending, ErasureReplies, requestErasure } from '../erasure/outcome.js';
import { AppError } from '../kernel/errors.js';
import { createForm, deleteForm, updateForm } from '../forms/commands.js';
import { FormListItem, FormView, formView } from '../forms/routes.js';
import { CreateFormBody, FormCreatedReply, FormUpdatedReply, UpdateFormBody } from '../forms/schemas.js';
import type { App } from '../http/instance.js';
import { Pagination, PaginationQuery, pagination, window } from '../kernel/pagination.js';
import { createPoll, deletePoll, updatePoll } from '../polls/commands.js';
import { PollListItem, PollView, Results, pollResults, pollView } from '../polls/routes.js';
import { CreatePollBody, PollCreatedReply, PollUpdatedReply, UpdatePollBody } from '../polls/schemas.js';
import type { Context } from '../kernel/context.js';
import { listResponses, ResponseList, ResponsesQuery } from '../submissions/responses.js';
import { WebhookView } from '../webhooks/schemas.js';
import { webhookView } from '../webhooks/routes.js';
import { createWidget, deleteWidget, updateWidget } from '../widgets/commands.js';
import { WidgetListItem, WidgetView, widgetView } from '../widgets/routes.js';
import { CreateWidgetBody, UpdateWidgetBody, WidgetCreatedReply, WidgetUpdatedReply } from '../widgets/schemas.js';
import { requireSession, sessionOf, type DashboardSession } from './auth.js';
import { planLimits, WIDGET_PLANS } from './plans.js';
import { Role } from '../members/roles.js';

/** How a kind of object is listed, shown and changed: the API's shapes and commands. */
interface KindSpec<D extends EmbeddableDoc, C extends z.ZodType, U extends z.ZodType> {
  what: Embeddable<D>;
  item: z.ZodType;
  view: z.ZodType;
  render(doc: D, now: Date): unknown;
  createBody: C;
  updateBody: U;
  created: z.ZodType;
  updated: z.ZodType;
  create(services: Context, author: Author, body: z.output<C>): Promise<unknown>;
  update(services: Context, author: Author, id: string, body: z.output<U>): Promise<unknown>;
  remove(services: Context, id: string, author: Author, at: Date): Promise<unknown>;
  /** The plans that may create one (default: every plan). */
  createPlans?: readonly Plan[];
}

const kind = <D extends EmbeddableDoc, C extends z.ZodType, U extends z.ZodType>(spec: KindSpec<D, C, U>) => spec;

const WIDGETS = kind({
  what: WIDGET,
  item: WidgetListItem,
  view: WidgetView,
  render: (doc, now) => widgetView(doc, true, now),
  createBody: CreateWidgetBody,
  updateBody: UpdateWidgetBody,
  created: WidgetCreatedReply,
  updated: WidgetUpdatedReply,
  create: createWidget,
  update: updateWidget,
  remove: deleteWidget,
  createPlans: WIDGET_PLANS,
});
const FORMS = kind({
  what: FORM,
  item: FormListItem,
  view: FormView,
  render: (doc, now) => formView(doc, true, now),
  createBody: CreateFormBody,
  updateBody: UpdateFormBody,
  created: FormCreatedReply,
  updated: FormUpdatedReply,
  create: createForm,
  update: updateForm,
  remove: deleteForm,
});
const POLLS = kind({
  what: POLL,
  item: PollListItem,
  view: PollView,
  render: (doc, now) => pollView(doc, true, now),
  createBody: CreatePollBody,
  updateBody: UpdatePollBody,
  created: PollCreatedReply,
  updated: PollUpdatedReply,
  create: createPoll,
  update: updatePoll,
  remove: deletePoll,
});

const KeyName = z.string().trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
const CreateKeyBody = z.strictObject({
  name: KeyName,
  scopes: z
    .array(Scope)
    .min(1, 'must name at least one scope')
    .max(Scope.options.length)
    .transform((scopes) => [...new Set(scopes)])
    .default(DEFAULT_SCOPES),
});
const KeyView = z.object({
  key_id: z.string(),
  name: z.string(),
  prefix: z.string(),
  scopes: z.array(z.string()),
  created_at: z.string(),
  last_used_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
});
const KeyParams = z.object({ key_id: z.string().max(100) });

export const SessionView = z.object({
  account: z.object({ id: z.string(), name: z.string(), plan: z.string() }),
  /** The member signed in; null for a session of the admin command line's login link (the operator, with an owner's rights). */
  member: z.object({ id: z.string(), email: z.string() }).nullable(),
  role: Role,
  csrf_token: z.string(),
  idle_expires_at: z.string(),
  plan_limits: z.object({
    api_access: z.boolean(),
    create_widgets: z.boolean(),
    rate_limit_per_minute: z.number().int(),
    metadata_fields: z.array(z.string()),
    honeypot: z.boolean(),
    per_ip_rate_limit: z.boolean(),
  }),
});

const ResponseParams = Params.extend({ response_id: z.string().regex(ID, 'must be an id') });

const author = (request: { id: string }, session: DashboardSession): Author => ({ accountId: session.accountId, actor: session.sessionId, requestId: request.id });

/**
 * The dashboard's JSON endpoints: the owner's objects, responses, keys and
 * webhooks, read from the read models, changed through the API's commands.
 * Another account's object is not found (D5), as in the API.
 */
export function apiRoutes(app: App, services: Context): void {
  const session = requireSession(services);
  // Keys and webhooks are the account's, managed by its admins and owners.
  const adminSession = requireSession(services, { role: 'admin' });
  const hide = { hide: true };

  app.get('/dashboard/api/session', { onRequest: session, schema: { ...hide, response: { 200: SessionView } } }, async (request) => {
    const { account, csrfToken, endsAt, member, role } = sessionOf(request);
    return { account, member, role, csrf_token: csrfToken, idle_expires_at: endsAt.toISOString(), plan_limits: planLimits(account.plan) };
  });

  objectRoutes(app, services, 'widgets', WIDGETS);
  objectRoutes(app, services, 'forms', FORMS);
  objectRoutes(app, services, 'polls', POLLS);

  for (const [path, what] of [['widgets', WIDGET], ['forms', FORM]] as const) {
    app.get(`/dashboard/api/${path}/:id/responses`, { onRequest: session, schema: { ...hide, params: Params, querystring: ResponsesQuery, response: { 200: ResponseList } } }, async (request) => {
      const doc = await ownEmbeddable(services, what, request.params.id, sessionOf(request).accountId);
      return listResponses(services, doc.id, request.query);
    });
    // D18: editors delete responses. The same erasure as DELETE /api/responses, asked by the member's session.
    app.delete(
      `/dashboard/api/${path}/:id/responses/:response_id`,
      { onRequest: session, schema: { ...hide, params: ResponseParams, response: ErasureReplies } },
      async (request, reply) => {
        const { accountId, sessionId } = sessionOf(request);
        const doc = await ownEmbeddable(services, what, request.params.id, accountId);
        const answer = await requestErasure(services, { accountId, parent: what.kind, parentId: doc.id, ids: [request.params.response_id], keyId: null, actor: sessionId, requestId: request.id });
        return reply.code(answer.status).send(answer.body);
      },
    );
  }

  app.get('/dashboard/api/polls/:id/results', { onRequest: session, schema: { ...hide, params: Params, response: { 200: Results } } }, async (request) => {
    const doc = await findEmbeddable(services, POLL, request.params.id);
    if (!doc || doc.account_id !== sessionOf(request).accountId) throw notFound('poll');
    return pollResults(services, doc);
  });

  app.get(
    '/dashboard/api/keys',
    { onRequest: adminSession, schema: { ...hide, querystring: PaginationQuery, response: { 200: z.object({ keys: z.array(KeyView), pagination: Pagination }) } } },
    async (request) => {
      const { keys, pagination } = await keyPage(services, sessionOf(request).accountId, request.query);
      // Read-model documents: their fields are the stored ones, checked by the reply's schema.
      return { keys: keys as Array<z.input<typeof KeyView>>, pagination };
    },
  );

  app.post(
    '/dashboard/api/keys',
    { onRequest: adminSession, schema: { ...hide, body: CreateKeyBody, response: { 201: z.object({ key_id: z.string(), api_key: z.string(), prefix: z.string(), scopes: z.array(z.string()) }) } } },
    async (request, reply) => {
      const { accountId, sessionId } = sessionOf(request);
      return reply.code(201).send(await createKey(services, { accountId, name: request.body.name, scopes: request.body.scopes }, sessionId));
    },
  );

  app.delete(
    '/dashboard/api/keys/:key_id',
    { onRequest: adminSession, schema: { ...hide, params: KeyParams, response: { 200: z.object({ key_id: z.string(), revoked: z.literal(true) }) } } },
    async (request) => {
      const { accountId, sessionId } = sessionOf(request);
      const key = await services.readModels.get(API_KEYS, request.params.key_id);
      if (!key || key.account_id !== accountId) throw new AppError('key_not_found', 'no such key');
      return revokeKey(services, request.params.key_id, sessionId);
    },
  );

  app.get('/dashboard/api/webhooks', { onRequest: adminSession, schema: { ...hide, response: { 200: z.object({ endpoints: z.array(WebhookView) }) } } }, async (request) => {
    const docs = await services.readModels.find(WEBHOOKS, { account_id: sessionOf(request).accountId }, { sort: [['created_at', -1], ['id', -1]] });
    return { endpoints: (docs as WebhookDoc[]).map(webhookView) };
  });
}

function objectRoutes<D extends EmbeddableDoc, C extends z.ZodType, U extends z.ZodType>(app: App, services: Context, path: string, spec: KindSpec<D, C, U>): void {
  const session = requireSession(services);
  const base = `/dashboard/api/${path}`;
  const { kind } = spec.what;

  app.get(base, { onRequest: session, schema: { hide: true, querystring: PaginationQuery, response: { 200: z.object({ items: z.array(spec.item), pagination: Pagination }) } } }, async (request) => {
    const { accountId } = sessionOf(request);
    const [items, total] = await Promise.all([
      services.readModels.find(spec.what.summaries, { account_id: accountId }, { sort: [['created_at', -1], ['id', -1]], ...window(request.query) }),
      services.readModels.count(spec.what.summaries, { account_id: accountId }),
    ]);
    return { items, pagination: pagination(request.query, total) };
  });

  app.post(base, { onRequest: session, schema: { hide: true, body: spec.createBody, response: { 201: spec.created } } }, async (request, reply) => {
    const current = sessionOf(request);
    const plans = spec.createPlans;
    if (plans && !plans.includes(current.account.plan)) {
      throw new AppError('plan_required', `Creating a ${kind} needs the ${plans.join(' or ')} plan; the account is on ${current.account.plan}`);
    }
    return reply.code(201).send(await spec.create(services, author(request, current), request.body as z.output<C>));
  });

  const own = async (id: string, accountId: string): Promise<D> => {
    const doc = await findEmbeddable(services, spec.what, id);
    if (!doc || doc.account_id !== accountId) throw notFound(kind);
    return doc;
  };

  app.get(`${base}/:id`, { onRequest: session, schema: { hide: true, params: Params, response: { 200: spec.view } } }, async (request) =>
    spec.render(await own(request.params.id, sessionOf(request).accountId), services.clock()),
  );

  app.put(`${base}/:id`, { onRequest: session, schema: { hide: true, params: Params, body: spec.updateBody, response: { 200: spec.updated } } }, async (request) => {
    const current = sessionOf(request);
    // The aggregate refuses another account's object too; this answers before any command runs.
    await own(request.params.id, current.accountId);
    return spec.update(services, author(request, current), request.params.id, request.body as z.output<U>);
  });

  app.delete(
    `${base}/:id`,
    { onRequest: session, schema: { hide: true, params: Params, response: { 200: z.object({ success: z.literal(true) }), 202: ErasurePending } } },
    async (request, reply) => {
      const current = sessionOf(request);
      const doc = await own(request.params.id, current.accountId);
      const { done } = await deleteEmbeddable(services, kind, doc.id, author(request, current), (id, who, at) => spec.remove(services, id, who, at));
      if (!done) return reply.code(202).send({ success: true as const, pending: true as const });
      return { success: true as const };
    },
  );
}
