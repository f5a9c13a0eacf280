import { z } from 'zod';
import { WIDGETS } from '../../projections/widgets.js';
import { execute, load } from '../aggregate.js';
import { AppError } from '../errors.js';
import type { App } from '../http/app.js';
import { callerOf, requireKey } from '../http/auth.js';
import { preflight } from '../http/cors.js';
import { ErrorResponses } from '../http/error-schemas.js';
import { Pagination, PaginationQuery, pagination, window } from '../http/pagination.js';
import type { Services } from '../services.js';
import { issueEmbedToken, TOKEN_TTL_SECONDS } from '../submissions/embed-token.js';
import { eraseResponses, responseIdsOf } from '../submissions/erasure.js';
import { ClientMetadata } from '../submissions/metadata.js';
import { listResponses, ResponseList } from '../submissions/responses.js';
import { Settings } from '../submissions/settings.js';
import { submitResponse } from '../submissions/submit.js';
import { CreateWidgetBody, Theme, TriggerConfig, UpdateWidgetBody, WidgetType } from './schemas.js';
import { WidgetQuestion } from '../questions.js';
import { widget, type Widget } from './widget.js';

const ID = /^[A-Za-z0-9_-]{1,64}$/;
const Params = z.object({ id: z.string().max(200) });

const WidgetListItem = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  widget_type: WidgetType,
  published: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** Spec 4.3, plus `description` and `closed`; owners also see `settings` and the timestamps. */
const WidgetView = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  widget_type: WidgetType,
  questions: z.array(WidgetQuestion),
  trigger_config: TriggerConfig,
  theme: Theme,
  thank_you_title: z.string(),
  thank_you_message: z.string(),
  published: z.boolean(),
  closed: z.boolean(),
  settings: Settings.optional(),
  created_at: z.string().optional(),
  updated_at: z.string().optional(),
});

const SubmitBody = z.object({
  answers: z.record(z.string().max(64), z.unknown()).default({}),
  _token: z.string().max(1000).optional(),
  metadata: ClientMetadata.default({}),
});

const isClosed = (doc: Widget & { slots_taken?: number }, now: Date) =>
  Boolean(doc.settings.closes_at && Date.parse(doc.settings.closes_at) <= now.getTime()) ||
  (doc.settings.max_responses !== null && (doc.slots_taken ?? 0) >= doc.settings.max_responses);

export function widgetRoutes(app: App, services: Services): void {
  const readDefinitions = requireKey(services, { scope: 'forms:read' });
  const writeDefinitions = requireKey(services, { scope: 'forms:write' });
  const readResponses = requireKey(services, { scope: 'responses:read' });

  /** A stored widget by id; malformed ids never reach a store. */
  async function find(id: string): Promise<(Widget & { slots_taken?: number }) | null> {
    if (!ID.test(id)) return null;
    return (await services.readModels.get(WIDGETS, id)) as (Widget & { slots_taken?: number }) | null;
  }
  const notFound = () => new AppError('widget_not_found', 'Widget not found');

  function view(doc: Widget & { slots_taken?: number }, owner: boolean): z.output<typeof WidgetView> {
    const base = {
      id: doc.id,
      title: doc.title,
      description: doc.description,
      widget_type: doc.widget_type,
      questions: doc.questions,
      trigger_config: doc.trigger_config,
      theme: doc.theme,
      thank_you_title: doc.thank_you_title,
      thank_you_message: doc.thank_you_message,
      published: doc.published,
      closed: isClosed(doc, services.clock()),
    };
    return owner ? { ...base, settings: doc.settings, created_at: doc.created_at, updated_at: doc.updated_at } : base;
  }

  app.get(
    '/api/widgets',
    { preHandler: readDefinitions, schema: { tags: ['widgets'], summary: 'List widgets', querystring: PaginationQuery, response: { 200: z.object({ widgets: z.array(WidgetListItem), pagination: Pagination }), ...ErrorResponses } } },
    async (request) => {
      const { accountId } = callerOf(request);
      const [docs, total] = await Promise.all([
        services.readModels.find(WIDGETS, { account_id: accountId }, { sort: [['created_at', -1], ['id', -1]], ...window(request.query) }),
        services.readModels.count(WIDGETS, { account_id: accountId }),
      ]);
      return { widgets: docs as unknown as z.input<typeof WidgetListItem>[], pagination: pagination(request.query, total) };
    },
  );

  app.post(
    '/api/widgets',
    {
      preHandler: requireKey(services, { scope: 'forms:write', plans: ['business'] }),
      schema: {
        tags: ['widgets'],
        summary: 'Create a widget',
        body: CreateWidgetBody,
        response: { 201: z.object({ id: z.string(), title: z.string(), widget_type: WidgetType, published: z.literal(false), created_at: z.string() }), ...ErrorResponses },
      },
    },
    async (request, reply) => {
      const { accountId, keyId } = callerOf(request);
      const id = services.ids('wgt');
      const at = services.clock();
      const { state } = await execute(services.commands, widget, id, { type: 'CreateWidget', widget_id: id, account_id: accountId, body: request.body, at: at.toISOString() }, { actor: keyId, at, requestId: request.id });
      if (state.status !== 'active') throw new Error('widget was not created');
      const { title, widget_type, created_at } = state.widget;
      return reply.code(201).send({ id, title, widget_type, published: false as const, created_at });
    },
  );

  app.get(
    '/api/widgets/:id',
    { config: { publicCors: true }, schema: { tags: ['widgets'], summary: 'Get a widget (public when published)', params: Params, response: { 200: WidgetView, ...ErrorResponses } } },
    async (request, reply) => {
      const doc = await find(request.params.id);
      if (!doc) throw notFound();
      if (!request.headers.authorization) {
        // Anonymous callers see published widgets only; the rest do not exist for them.
        if (!doc.published) throw notFound();
        return view(doc, false);
      }
      await readDefinitions.call(app, request, reply);
      const owner = callerOf(request).accountId === doc.account_id;
      if (!owner && !doc.published) throw notFound();
      return view(doc, owner);
    },
  );
  preflight(app, '/api/widgets/:id', ['GET']);

  app.put(
    '/api/widgets/:id',
    {
      preHandler: writeDefinitions,
      schema: {
        tags: ['widgets'],
        summary: 'Update a widget (any subset of its configuration, and publish or unpublish it)',
        params: Params,
        body: UpdateWidgetBody,
        response: { 200: z.object({ id: z.string(), title: z.string(), published: z.boolean(), updated_at: z.string() }), ...ErrorResponses },
      },
    },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      if (!ID.test(request.params.id)) throw notFound();
      const at = services.clock();
      const { state } = await execute(services.commands, widget, request.params.id, { type: 'UpdateWidget', account_id: accountId, body: request.body, at: at.toISOString() }, { actor: keyId, at, requestId: request.id });
      if (state.status !== 'active') throw notFound();
      const { id, title, published, updated_at } = state.widget;
      return { id, title, published, updated_at };
    },
  );

  app.delete(
    '/api/widgets/:id',
    { preHandler: writeDefinitions, schema: { tags: ['widgets'], summary: 'Delete a widget and erase all its responses', params: Params, response: { 200: z.object({ success: z.literal(true) }), ...ErrorResponses } } },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      if (!ID.test(request.params.id)) throw notFound();
      const at = services.clock();
      await execute(services.commands, widget, request.params.id, { type: 'DeleteWidget', account_id: accountId, at: at.toISOString() }, { actor: keyId, at, requestId: request.id });
      const responseIds = await responseIdsOf(services, 'widget', request.params.id);
      await eraseResponses(services, { accountId, parent: 'widget', parentId: request.params.id, responseIds, reason: 'parent_deleted', keyId, requestId: request.id });
      return { success: true as const };
    },
  );

  app.get(
    '/api/widgets/:id/token',
    { config: { publicCors: true }, schema: { tags: ['widgets'], summary: 'Get an embed token (valid 1800 s)', params: Params, response: { 200: z.object({ token: z.string(), expiresIn: z.literal(TOKEN_TTL_SECONDS) }), ...ErrorResponses } } },
    async (request) => {
      const doc = await find(request.params.id);
      if (!doc) throw notFound();
      if (!doc.published) throw new AppError('widget_not_published', 'This widget is not published');
      return { token: issueEmbedToken(services.keys.embedTokens, 'widget', doc.id, services.clock()), expiresIn: TOKEN_TTL_SECONDS };
    },
  );
  preflight(app, '/api/widgets/:id/token', ['GET']);

  app.post(
    '/api/widgets/:id/submit',
    { config: { publicCors: true }, schema: { tags: ['widgets'], summary: 'Submit a widget response (embed token in `_token`)', params: Params, body: SubmitBody, response: { 200: z.object({ success: z.literal(true), id: z.string() }), ...ErrorResponses } } },
    async (request) => {
      if (!ID.test(request.params.id)) throw notFound();
      const state = await load(services.commands, widget, request.params.id);
      if (state.status !== 'active') throw notFound();
      const w = state.widget;
      const id = await submitResponse(
        services,
        { kind: 'widget', id: w.id, accountId: w.account_id, published: w.published, questions: w.questions, settings: w.settings },
        { token: request.body._token, answers: request.body.answers, request: { headers: request.headers, ip: request.ip, ips: request.ips, client: request.body.metadata } },
        request.id,
      );
      return { success: true as const, id };
    },
  );
  preflight(app, '/api/widgets/:id/submit', ['POST']);

  app.get(
    '/api/widgets/:id/responses',
    { preHandler: readResponses, schema: { tags: ['responses'], summary: "List a widget's responses, newest first", params: Params, querystring: PaginationQuery, response: { 200: ResponseList, ...ErrorResponses } } },
    async (request) => {
      const doc = await find(request.params.id);
      if (!doc || doc.account_id !== callerOf(request).accountId) throw notFound();
      return listResponses(services, { widget_id: doc.id }, request.query);
    },
  );
}

