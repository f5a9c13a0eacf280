import { z } from 'zod';
import { sameJson, type Aggregate } from '../kernel/aggregate.js';
import { checkTheme } from '../embeddables/theme.js';
import { checkReadOnly } from '../embeddables/read-only.js';
import { definitionOverLimits } from '../embeddables/definition-limits.js';
import { AppError, invalidBody, type ErrorDetail } from '../kernel/errors.js';
import { DEFAULT_THANK_YOU } from '../widgets/defaults.js';
import { checkFlow } from '../embeddables/logic.js';
import { checkTranslations, prunedTranslations } from '../embeddables/translations.js';
import type { FormEvent } from './events.js';
import { FormConfig, type CreateFormBody, type UpdateFormBody } from './schemas.js';

export type FormCommand =
  | { type: 'CreateForm'; form_id: string; account_id: string; body: CreateFormBody; at: string }
  /** `closed`: what a GET shows now, when the body sends it back. */
  | { type: 'UpdateForm'; account_id: string; body: UpdateFormBody; closed?: boolean; at: string }
  | { type: 'DeleteForm'; account_id: string; at: string };

export interface Form extends FormConfig {
  id: string;
  account_id: string;
  published: boolean;
  version: number;
  created_at: string;
  updated_at: string;
}

export type FormState = { status: 'none' } | { status: 'active'; form: Form } | { status: 'deleted' };

export function evolve(state: FormState, event: FormEvent): FormState {
  if (event.type === 'FormCreated') {
    const { form_id, account_id, created_at, ...config } = event.data;
    return { status: 'active', form: { ...config, id: form_id, account_id, published: false, created_at, updated_at: created_at } };
  }
  if (event.type === 'FormDeleted') return { status: 'deleted' };
  if (state.status !== 'active') return state;
  switch (event.type) {
    case 'FormUpdated':
      return { status: 'active', form: { ...state.form, ...event.data.changes, version: event.data.version, updated_at: event.data.updated_at } };
    case 'FormPublished':
      return { status: 'active', form: { ...state.form, published: true, updated_at: event.data.published_at } };
    case 'FormUnpublished':
      return { status: 'active', form: { ...state.form, published: false, updated_at: event.data.unpublished_at } };
  }
}

/** Past DEFINITION_LIMITS: 400 with what is over. */
function tooLarge(details: ErrorDetail[]): void {
  if (details.length > 0) throw new AppError('validation_error', 'The form is too large', details);
}

const invalid = (error: z.ZodError) => invalidBody(error, 'The form is invalid');

function owned(state: FormState, accountId: string): Form {
  if (state.status !== 'active' || state.form.account_id !== accountId) throw new AppError('form_not_found', 'Form not found');
  return state.form;
}

export function decide(command: FormCommand, state: FormState): FormEvent[] {
  switch (command.type) {
    case 'CreateForm': {
      if (state.status !== 'none') throw new AppError('conflict', 'A form with this id exists');
      const { body } = command;
      const config = FormConfig.safeParse({
        title: body.title,
        description: body.description ?? '',
        questions: body.questions ?? [],
        theme: body.theme ?? {},
        thank_you_title: body.thank_you_title ?? DEFAULT_THANK_YOU.title,
        thank_you_message: body.thank_you_message ?? DEFAULT_THANK_YOU.message,
        settings: body.settings ?? {},
        hidden_fields: body.hidden_fields ?? [],
        redirect_url: body.redirect_url ?? null,
        pages: body.pages ?? [],
        logic: body.logic ?? [],
        endings: body.endings ?? [],
        presentation: body.presentation ?? 'all',
        language: body.language ?? 'en',
        translations: body.translations ?? {},
      });
      if (!config.success) throw invalid(config.error);
      checkTheme(config.data.theme);
      checkFlow(config.data, 'form');
      checkTranslations({ kind: 'form', ...config.data }, config.data.translations);
      tooLarge(definitionOverLimits(config.data));
      return [{ type: 'FormCreated', data: { ...config.data, form_id: command.form_id, account_id: command.account_id, version: 1, created_at: command.at } }];
    }
    case 'UpdateForm': {
      const form = owned(state, command.account_id);
      // The body met today's limits when it was parsed. Stored values met the limits of
      // their day and are not checked again: a tightened limit must not block every change.
      const { published, id, version, created_at, updated_at, closed, keep_partial, ...fields } = command.body;
      checkReadOnly({ id, version, created_at, updated_at, closed, keep_partial }, { ...form, closed: command.closed, keep_partial: Boolean(form.settings.keep_partial) });
      const merged: FormConfig = {
        ...form,
        ...fields,
        theme: { ...form.theme, ...fields.theme },
        settings: { ...form.settings, ...fields.settings },
      };
      if (fields.theme && !sameJson(merged.theme, form.theme)) checkTheme(merged.theme);
      if (fields.questions || fields.pages || fields.logic || fields.endings) checkFlow(merged, 'form');
      // Translations sent are checked; those stored lose what the new questions and endings no longer have.
      if (fields.translations || fields.language) checkTranslations({ kind: 'form', ...merged }, merged.translations);
      else if (fields.questions || fields.endings) {
        merged.translations = prunedTranslations({ kind: 'form', ...merged }, merged.translations);
        fields.translations = merged.translations;
      }
      tooLarge(definitionOverLimits(merged, form));
      const changes: Record<string, unknown> = {};
      for (const key of Object.keys(fields) as Array<keyof typeof fields>) {
        if (!sameJson(merged[key], form[key])) changes[key] = merged[key];
      }
      const events: FormEvent[] = [];
      if (Object.keys(changes).length > 0) {
        // D7: the version counts changes to the questions, which consent records point at.
        const version = 'questions' in changes ? form.version + 1 : form.version;
        events.push({ type: 'FormUpdated', data: { form_id: form.id, changes, version, updated_at: command.at } });
      }
      if ((published ?? form.published) && merged.questions.length === 0) {
        throw new AppError('validation_error', 'A published form needs at least one question', [{ path: 'body.questions', message: 'must not be empty while the form is published' }]);
      }
      if (published === true && !form.published) {
        events.push({ type: 'FormPublished', data: { form_id: form.id, published_at: command.at } });
      }
      if (published === false && form.published) events.push({ type: 'FormUnpublished', data: { form_id: form.id, unpublished_at: command.at } });
      return events;
    }
    case 'DeleteForm': {
      const form = owned(state, command.account_id);
      return [{ type: 'FormDeleted', data: { form_id: form.id, account_id: form.account_id, deleted_at: command.at } }];
    }
  }
}

export const form: Aggregate<FormState, FormEvent, FormCommand> = {
  streamId: (id) => `form-${id}`,
  initial: () => ({ status: 'none' }),
  evolve,
  decide,
};
