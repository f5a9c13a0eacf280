import { z } from 'zod';
import { sameJson, type Aggregate } from '../kernel/aggregate.js';
import { checkTheme } from '../embeddables/theme.js';
import { checkReadOnly } from '../embeddables/read-only.js';
import { definitionOverLimits } from '../embeddables/definition-limits.js';
import { AppError, invalidBody, type ErrorDetail } from '../kernel/errors.js';
import type { WidgetEvent } from './events.js';
import { DEFAULT_QUESTIONS, DEFAULT_THANK_YOU } from './defaults.js';
import { checkFlow, usesFlow } from '../embeddables/logic.js';
import { checkTranslations, prunedTranslations } from '../embeddables/translations.js';
import { WidgetConfig, type CreateWidgetBody, type UpdateWidgetBody } from './schemas.js';

export type WidgetCommand =
  | { type: 'CreateWidget'; widget_id: string; account_id: string; body: CreateWidgetBody; at: string }
  /** `closed`: what a GET shows now, when the body sends it back. */
  | { type: 'UpdateWidget'; account_id: string; body: UpdateWidgetBody; closed?: boolean; at: string }
  | { type: 'DeleteWidget'; account_id: string; at: string };

export interface Widget extends WidgetConfig {
  id: string;
  account_id: string;
  published: boolean;
  created_at: string;
  updated_at: string;
}

export type WidgetState = { status: 'none' } | { status: 'active'; widget: Widget } | { status: 'deleted' };

export function evolve(state: WidgetState, event: WidgetEvent): WidgetState {
  switch (event.type) {
    case 'WidgetCreated': {
      const { widget_id, account_id, created_at, ...config } = event.data;
      return { status: 'active', widget: { ...config, id: widget_id, account_id, published: false, created_at, updated_at: created_at } };
    }
    case 'WidgetUpdated':
      return state.status === 'active'
        ? { status: 'active', widget: { ...state.widget, ...event.data.changes, updated_at: event.data.updated_at } }
        : state;
    case 'WidgetPublished':
      return state.status === 'active' ? { status: 'active', widget: { ...state.widget, published: true, updated_at: event.data.published_at } } : state;
    case 'WidgetUnpublished':
      return state.status === 'active' ? { status: 'active', widget: { ...state.widget, published: false, updated_at: event.data.unpublished_at } } : state;
    case 'WidgetDeleted':
      return { status: 'deleted' };
  }
}

/** Past DEFINITION_LIMITS: 400 with what is over. */
function tooLarge(details: ErrorDetail[]): void {
  if (details.length > 0) throw new AppError('validation_error', 'The widget is too large', details);
}

/** Pages, conditions and endings are for custom widgets, whose questions the owner writes; then as on forms. */
function checkWidgetFlow(config: WidgetConfig): void {
  if (config.widget_type !== 'custom' && usesFlow(config)) {
    throw new AppError('validation_error', 'Only custom widgets take pages, conditions and endings', [
      { path: 'body.widget_type', message: 'must be custom for pages, logic, endings or show_if' },
    ]);
  }
  checkFlow(config, 'widget');
}

const invalid = (error: z.ZodError) => invalidBody(error, 'The widget configuration is invalid');

/** D5: another account's widget is answered exactly like a missing one. */
function owned(state: WidgetState, accountId: string): Widget {
  if (state.status !== 'active' || state.widget.account_id !== accountId) {
    throw new AppError('widget_not_found', 'Widget not found');
  }
  return state.widget;
}


export function decide(command: WidgetCommand, state: WidgetState): WidgetEvent[] {
  switch (command.type) {
    case 'CreateWidget': {
      if (state.status !== 'none') throw new AppError('conflict', 'A widget with this id exists');
      const { body } = command;
      const questions = body.questions?.length ? body.questions : DEFAULT_QUESTIONS[body.widget_type];
      if (questions.length === 0) {
        throw new AppError('validation_error', 'A custom widget needs at least one question', [
          { path: 'body.questions', message: 'must hold at least one question for a custom widget' },
        ]);
      }
      const config = WidgetConfig.safeParse({
        widget_type: body.widget_type,
        title: body.title,
        description: body.description ?? '',
        questions,
        trigger_config: body.trigger_config ?? {},
        theme: body.theme ?? {},
        thank_you_title: body.thank_you_title ?? DEFAULT_THANK_YOU.title,
        thank_you_message: body.thank_you_message ?? DEFAULT_THANK_YOU.message,
        settings: body.settings ?? {},
        hidden_fields: body.hidden_fields ?? [],
        redirect_url: body.redirect_url ?? null,
        pages: body.pages ?? [],
        logic: body.logic ?? [],
        endings: body.endings ?? [],
        language: body.language ?? 'en',
        translations: body.translations ?? {},
      });
      if (!config.success) throw invalid(config.error);
      checkTheme(config.data.theme);
      checkWidgetFlow(config.data);
      checkTranslations({ kind: 'widget', ...config.data }, config.data.translations);
      tooLarge(definitionOverLimits(config.data));
      return [{ type: 'WidgetCreated', data: { ...config.data, widget_id: command.widget_id, account_id: command.account_id, created_at: command.at } }];
    }
    case 'UpdateWidget': {
      const widget = owned(state, command.account_id);
      // The body met today's limits when it was parsed. Stored values met the limits of
      // their day and are not checked again: a tightened limit must not block every change.
      const { published, id, widget_type, created_at, updated_at, closed, ...fields } = command.body;
      checkReadOnly({ id, widget_type, created_at, updated_at, closed }, { ...widget, closed: command.closed });
      const merged: WidgetConfig = {
        ...widget,
        ...fields,
        trigger_config: { ...widget.trigger_config, ...fields.trigger_config },
        theme: { ...widget.theme, ...fields.theme },
        settings: { ...widget.settings, ...fields.settings },
      };
      if (fields.theme && !sameJson(merged.theme, widget.theme)) checkTheme(merged.theme);
      if (fields.questions || fields.pages || fields.logic || fields.endings) checkWidgetFlow(merged);
      // Translations sent are checked; those stored lose what the new questions and endings no longer have.
      if (fields.translations || fields.language) checkTranslations({ kind: 'widget', ...merged }, merged.translations);
      else if (fields.questions || fields.endings) {
        merged.translations = prunedTranslations({ kind: 'widget', ...merged }, merged.translations);
        fields.translations = merged.translations;
      }
      if (merged.questions.length === 0) {
        throw new AppError('validation_error', 'A widget needs at least one question', [{ path: 'body.questions', message: 'must not be empty' }]);
      }
      tooLarge(definitionOverLimits(merged, widget));
      const changes: Record<string, unknown> = {};
      for (const key of Object.keys(fields) as Array<keyof typeof fields>) {
        if (!sameJson(merged[key], widget[key])) changes[key] = merged[key];
      }
      const events: WidgetEvent[] = [];
      if (Object.keys(changes).length > 0) {
        events.push({ type: 'WidgetUpdated', data: { widget_id: widget.id, changes, updated_at: command.at } });
      }
      if (published === true && !widget.published) events.push({ type: 'WidgetPublished', data: { widget_id: widget.id, published_at: command.at } });
      if (published === false && widget.published) events.push({ type: 'WidgetUnpublished', data: { widget_id: widget.id, unpublished_at: command.at } });
      return events;
    }
    case 'DeleteWidget': {
      const widget = owned(state, command.account_id);
      return [{ type: 'WidgetDeleted', data: { widget_id: widget.id, account_id: widget.account_id, deleted_at: command.at } }];
    }
  }
}

export const widget: Aggregate<WidgetState, WidgetEvent, WidgetCommand> = {
  streamId: (id) => `widget-${id}`,
  initial: () => ({ status: 'none' }),
  evolve,
  decide,
};
