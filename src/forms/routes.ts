import { DEFINITION_LIMITS_TEXT } from '../embeddables/definition-limits.js';
import { FORM } from '../embeddables/queries.js';
import { deleteRoute, listRoute, publicRead, tokenRoute } from '../embeddables/routes.js';
import { isClosed } from '../embeddables/access.js';
import { ParamsOf } from '../embeddables/kinds.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import type { FormDoc } from '../../projections/forms.js';
import { createForm, deleteForm, updateForm } from './commands.js';
import { callerOf, requireKey } from '../http/auth.js';
import type { Context } from '../kernel/context.js';
import { shownSettings } from '../embeddables/settings.js';
import { progressRoute, responsesRoute, submitRoute } from '../submissions/routes.js';
import { FormCreated } from './events.js';
import { form, type FormState } from './form.js';
import type { SubmissionTarget } from '../submissions/submit.js';
import { CreateFormBody, FormCreatedReply, FormUpdatedReply, UpdateFormBody } from './schemas.js';

export const FormListItem = z.object({
  id: z.string(),
  title: z.string(),
  description: z.string(),
  published: z.boolean(),
  version: z.number().int(),
  created_at: z.string(),
  updated_at: z.string(),
});

/** A form shows what is stored, which met the limits of its day: those of today may be tighter. */
const stored = FormCreated.schema.shape;

/** D7: GET answers the whole form; the public view leaves out settings. */
export const FormView = z.object({
  id: z.string(),
  title: stored.title,
  description: stored.description,
  theme: stored.theme,
  thank_you_title: stored.thank_you_title,
  thank_you_message: stored.thank_you_message,
  questions: stored.questions,
  hidden_fields: stored.hidden_fields,
  redirect_url: stored.redirect_url,
  pages: stored.pages,
  logic: stored.logic,
  endings: stored.endings,
  presentation: stored.presentation,
  /** Public: a visitor (and the embed) may know that each page is kept as they leave it. */
  keep_partial: z.boolean().describe('Whether each page is kept as the visitor leaves it (`settings.keep_partial`), as a partial response until the submission completes it'),
  language: stored.language,
  translations: stored.translations,
  published: z.boolean(),
  closed: z.boolean(),
  version: z.number().int(),
  settings: stored.settings.optional(),
  created_at: z.string().optional().describe('To the owner only, as `settings`'),
  updated_at: z.string().optional().describe('To the owner only, as `settings`'),
});

/** A form as GET shows it: to its owner with its settings. */
export const formView = (doc: FormDoc, owner: boolean, now: Date): z.output<typeof FormView> => ({
  id: doc.id,
  title: doc.title,
  description: doc.description,
  questions: doc.questions,
  hidden_fields: doc.hidden_fields,
  redirect_url: doc.redirect_url,
  pages: doc.pages,
  logic: doc.logic,
  endings: doc.endings,
  presentation: doc.presentation,
  keep_partial: Boolean(doc.settings.keep_partial),
  // Forms stored before languages were written in English, untranslated.
  language: doc.language ?? 'en',
  translations: doc.translations ?? {},
  theme: doc.theme,
  thank_you_title: doc.thank_you_title,
  thank_you_message: doc.thank_you_message,
  published: doc.published,
  closed: isClosed(doc, now),
  version: doc.version,
  ...(owner ? { settings: shownSettings(doc.settings), created_at: doc.created_at, updated_at: doc.updated_at } : {}),
});

/** Forms: a plugin the app registers with its services. */
export const formRoutes: FastifyPluginAsyncZod<{ services: Context }> = async (app, { services }) => {
  const writeDefinitions = requireKey(services, { scope: 'forms:write' });

  listRoute(app, services, FORM, FormListItem);

  app.post(
    '/api/forms',
    {
      onRequest: writeDefinitions,
      config: { errors: ['conflict'] },
      schema: {
        tags: ['forms'],
        operationId: 'createForm',
        summary: 'Create a form',
        description: DEFINITION_LIMITS_TEXT,
        body: CreateFormBody,
        response: { 201: FormCreatedReply },
      },
    },
    async (request, reply) => {
      const { accountId, keyId } = callerOf(request);
      return reply.code(201).send(await createForm(services, { accountId, actor: keyId, requestId: request.id }, request.body));
    },
  );

  publicRead(app, services, FORM, { schema: FormView, render: (doc, owner) => formView(doc, owner, services.clock()) });

  app.put(
    '/api/forms/:id',
    {
      onRequest: writeDefinitions,
      config: { errors: ['form_not_found', 'conflict', 'event_unreadable'] },
      schema: {
        tags: ['forms'],
        operationId: 'updateForm',
        summary: 'Update a form (any subset; changing questions raises its version)',
        description: DEFINITION_LIMITS_TEXT,
        params: ParamsOf.form,
        body: UpdateFormBody,
        response: { 200: FormUpdatedReply },
      },
    },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      return updateForm(services, { accountId, actor: keyId, requestId: request.id }, request.params.id, request.body);
    },
  );

  deleteRoute(app, services, FORM, (id, author, at) => deleteForm(services, id, author, at));

  tokenRoute(app, services, FORM);
  /** What a visitor's submission or page is checked against; null once the form is deleted. */
  const targetOf = (state: FormState): SubmissionTarget | null => {
    if (state.status !== 'active') return null;
    const f = state.form;
    return {
      kind: 'form',
      id: f.id,
      accountId: f.account_id,
      published: f.published,
      questions: f.questions,
      flow: { pages: f.pages, logic: f.logic, endings: f.endings },
      language: f.language,
      translations: f.translations,
      hiddenFields: f.hidden_fields,
      settings: f.settings,
      version: f.version,
    };
  };
  submitRoute(app, services, FORM, form, targetOf);
  progressRoute(app, services, FORM, form, targetOf);
  responsesRoute(app, services, FORM);
};
