import { DEFINITION_LIMITS_TEXT } from '../embeddables/definition-limits.js';
import { WIDGET } from '../embeddables/queries.js';
import type { WidgetDoc } from '../../projections/widgets.js';
import { deleteRoute, listRoute, publicRead, tokenRoute } from '../embeddables/routes.js';
import { isClosed } from '../embeddables/access.js';
import { ParamsOf } from '../embeddables/kinds.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { createWidget, deleteWidget, updateWidget } from './commands.js';
import { callerOf, requireKey } from '../http/auth.js';
import type { Context } from '../kernel/context.js';
import { shownSettings } from '../embeddables/settings.js';
import { responsesRoute, submitRoute } from '../submissions/routes.js';
import { WidgetCreated } from './events.js';
import { CreateWidgetBody, UpdateWidgetBody, WidgetCreatedReply, WidgetType, WidgetUpdatedReply } from './schemas.js';
import { widget } from './widget.js';

export const WidgetListItem = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  widget_type: WidgetType,
  published: z.boolean(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A widget shows what is stored, which met the limits of its day: those of today may be tighter. */
const stored = WidgetCreated.schema.shape;

/** Spec 4.3, plus `description` and `closed`; owners also see `settings` and the timestamps. */
export const WidgetView = z.object({
  id: z.string(),
  title: stored.title,
  description: stored.description,
  theme: stored.theme,
  thank_you_title: stored.thank_you_title,
  thank_you_message: stored.thank_you_message,
  widget_type: stored.widget_type,
  questions: stored.questions,
  hidden_fields: stored.hidden_fields,
  redirect_url: stored.redirect_url,
  trigger_config: stored.trigger_config,
  pages: stored.pages,
  logic: stored.logic,
  endings: stored.endings,
  language: stored.language,
  translations: stored.translations,
  published: z.boolean(),
  closed: z.boolean(),
  settings: stored.settings.optional(),
  created_at: z.string().optional().describe('To the owner only, as `settings`'),
  updated_at: z.string().optional().describe('To the owner only, as `settings`'),
});

/** A widget as GET shows it: to its owner with its settings and timestamps. */
export function widgetView(doc: WidgetDoc, owner: boolean, now: Date): z.output<typeof WidgetView> {
  const base = {
    id: doc.id,
    title: doc.title,
    description: doc.description,
    widget_type: doc.widget_type,
    questions: doc.questions,
    hidden_fields: doc.hidden_fields,
    redirect_url: doc.redirect_url,
    trigger_config: doc.trigger_config,
    pages: doc.pages,
    logic: doc.logic,
    endings: doc.endings,
    // Widgets stored before languages were written in English, untranslated.
    language: doc.language ?? 'en',
    translations: doc.translations ?? {},
    theme: doc.theme,
    thank_you_title: doc.thank_you_title,
    thank_you_message: doc.thank_you_message,
    published: doc.published,
    closed: isClosed(doc, now),
  };
  return owner ? { ...base, settings: shownSettings(doc.settings), created_at: doc.created_at, updated_at: doc.updated_at } : base;
}

/** Widgets: a plugin the app registers with its services. */
export const widgetRoutes: FastifyPluginAsyncZod<{ services: Context }> = async (app, { services }) => {
  const writeDefinitions = requireKey(services, { scope: 'forms:write' });

  const view = (doc: WidgetDoc, owner: boolean) => widgetView(doc, owner, services.clock());

  listRoute(app, services, WIDGET, WidgetListItem);

  app.post(
    '/api/widgets',
    {
      onRequest: requireKey(services, { scope: 'forms:write', plans: ['business'] }),
      config: { errors: ['conflict'] },
      schema: {
        tags: ['widgets'],
        operationId: 'createWidget',
        summary: 'Create a widget',
        description: DEFINITION_LIMITS_TEXT,
        body: CreateWidgetBody,
        response: { 201: WidgetCreatedReply },
      },
    },
    async (request, reply) => {
      const { accountId, keyId } = callerOf(request);
      return reply.code(201).send(await createWidget(services, { accountId, actor: keyId, requestId: request.id }, request.body));
    },
  );

  publicRead(app, services, WIDGET, { schema: WidgetView, render: view });

  app.put(
    '/api/widgets/:id',
    {
      onRequest: writeDefinitions,
      config: { errors: ['widget_not_found', 'conflict', 'event_unreadable'] },
      schema: {
        tags: ['widgets'],
        operationId: 'updateWidget',
        summary: 'Update a widget (any subset of its configuration, and publish or unpublish it)',
        description: DEFINITION_LIMITS_TEXT,
        params: ParamsOf.widget,
        body: UpdateWidgetBody,
        response: { 200: WidgetUpdatedReply },
      },
    },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      return updateWidget(services, { accountId, actor: keyId, requestId: request.id }, request.params.id, request.body);
    },
  );

  deleteRoute(app, services, WIDGET, (id, author, at) => deleteWidget(services, id, author, at));

  tokenRoute(app, services, WIDGET);

  submitRoute(app, services, WIDGET, widget, (state) => {
    if (state.status !== 'active') return null;
    const w = state.widget;
    return {
      kind: 'widget',
      id: w.id,
      accountId: w.account_id,
      published: w.published,
      questions: w.questions,
      flow: { pages: w.pages, logic: w.logic, endings: w.endings },
      language: w.language,
      translations: w.translations,
      hiddenFields: w.hidden_fields,
      settings: w.settings,
    };
  });
  responsesRoute(app, services, WIDGET);
};

