import { z } from 'zod';
import { sameJson, type Aggregate } from '../kernel/aggregate.js';
import { checkReadOnly } from '../embeddables/read-only.js';
import { AppError, invalidBody } from '../kernel/errors.js';
import { checkTheme } from '../embeddables/theme.js';
import { checkTranslations, prunedTranslations } from '../embeddables/translations.js';
import type { PollEvent } from './events.js';
import { PollConfig, type CreatePollBody, type UpdatePollBody } from './schemas.js';

export type PollCommand =
  | { type: 'CreatePoll'; poll_id: string; account_id: string; body: CreatePollBody; option_ids: string[]; at: string }
  /** `closed`: what a GET shows now, when the body sends it back. */
  | { type: 'UpdatePoll'; account_id: string; body: UpdatePollBody; new_option_ids: string[]; closed?: boolean; at: string }
  | { type: 'DeletePoll'; account_id: string; at: string };

export interface Poll extends PollConfig {
  id: string;
  account_id: string;
  published: boolean;
  created_at: string;
  updated_at: string;
}

export type PollState = { status: 'none' } | { status: 'active'; poll: Poll } | { status: 'deleted' };

export function evolve(state: PollState, event: PollEvent): PollState {
  if (event.type === 'PollCreated') {
    const { poll_id, account_id, created_at, ...config } = event.data;
    return { status: 'active', poll: { ...config, id: poll_id, account_id, published: false, created_at, updated_at: created_at } };
  }
  if (event.type === 'PollDeleted') return { status: 'deleted' };
  if (state.status !== 'active') return state;
  switch (event.type) {
    case 'PollUpdated':
      return { status: 'active', poll: { ...state.poll, ...event.data.changes, updated_at: event.data.updated_at } };
    case 'PollPublished':
      return { status: 'active', poll: { ...state.poll, published: true, updated_at: event.data.published_at } };
    case 'PollUnpublished':
      return { status: 'active', poll: { ...state.poll, published: false, updated_at: event.data.unpublished_at } };
    default:
      return state;
  }
}

const invalid = (error: z.ZodError) => invalidBody(error, 'The poll is invalid');

function owned(state: PollState, accountId: string): Poll {
  if (state.status !== 'active' || state.poll.account_id !== accountId) throw new AppError('poll_not_found', 'Poll not found');
  return state.poll;
}

export function decide(command: PollCommand, state: PollState): PollEvent[] {
  switch (command.type) {
    case 'CreatePoll': {
      if (state.status !== 'none') throw new AppError('conflict', 'A poll with this id exists');
      const { body } = command;
      const config = PollConfig.safeParse({
        question: body.question,
        options: body.options.map((option, i) => ({ id: command.option_ids[i], text: option.text })),
        allow_multiple: body.allow_multiple ?? false,
        settings: body.settings ?? {},
        theme: body.theme ?? {},
        language: body.language ?? 'en',
        // Options get their ids here: a translation names an option by its position.
        translations: Object.fromEntries(
          Object.entries(body.translations ?? {}).map(([lang, tr]) => [
            lang,
            tr.options ? { ...tr, options: Object.fromEntries(Object.entries(tr.options).map(([at, text]) => [command.option_ids[Number(at)] && /^\d+$/.test(at) ? command.option_ids[Number(at)]! : at, text])) } : tr,
          ]),
        ),
      });
      if (!config.success) throw invalid(config.error);
      checkTheme(config.data.theme);
      checkTranslations({ kind: 'poll', ...config.data }, config.data.translations);
      return [{ type: 'PollCreated', data: { ...config.data, poll_id: command.poll_id, account_id: command.account_id, created_at: command.at } }];
    }
    case 'UpdatePoll': {
      const poll = owned(state, command.account_id);
      const { published, options, id, created_at, updated_at, closed, ...fields } = command.body;
      checkReadOnly({ id, created_at, updated_at, closed }, { ...poll, closed: command.closed });
      const known = new Set(poll.options.map((o) => o.id));
      let fresh = 0;
      const unknown = options?.findIndex((o) => o.id !== undefined && !known.has(o.id)) ?? -1;
      if (unknown >= 0) {
        throw new AppError('validation_error', 'The poll is invalid', [{ path: `body.options.${unknown}.id`, message: 'is not an option of this poll' }]);
      }
      // The body met today's limits when it was parsed. Stored values met the limits of
      // their day and are not checked again: a tightened limit must not block every change.
      const merged: PollConfig = {
        ...poll,
        ...fields,
        settings: { ...poll.settings, ...fields.settings },
        theme: { ...poll.theme, ...fields.theme },
        options: options ? options.map((o) => ({ id: o.id ?? command.new_option_ids[fresh++]!, text: o.text })) : poll.options,
      };
      if (fields.theme && !sameJson(merged.theme, poll.theme)) checkTheme(merged.theme);
      if (new Set(merged.options.map((o) => o.id)).size !== merged.options.length) {
        throw new AppError('validation_error', 'The poll is invalid', [{ path: 'body.options', message: 'option ids must be unique' }]);
      }
      // Translations sent are checked; those stored lose the options the poll no longer has.
      if (fields.translations || fields.language) checkTranslations({ kind: 'poll', ...merged }, merged.translations);
      else if (options) merged.translations = prunedTranslations({ kind: 'poll', ...merged }, merged.translations);
      const changes: Record<string, unknown> = {};
      for (const key of ['question', 'options', 'allow_multiple', 'settings', 'theme', 'language', 'translations'] as const) {
        if (!sameJson(merged[key], poll[key])) changes[key] = merged[key];
      }
      const events: PollEvent[] = [];
      if (Object.keys(changes).length > 0) events.push({ type: 'PollUpdated', data: { poll_id: poll.id, changes, updated_at: command.at } });
      if (published === true && !poll.published) events.push({ type: 'PollPublished', data: { poll_id: poll.id, published_at: command.at } });
      if (published === false && poll.published) events.push({ type: 'PollUnpublished', data: { poll_id: poll.id, unpublished_at: command.at } });
      return events;
    }
    case 'DeletePoll': {
      const poll = owned(state, command.account_id);
      return [{ type: 'PollDeleted', data: { poll_id: poll.id, account_id: poll.account_id, deleted_at: command.at } }];
    }
  }
}

export const poll: Aggregate<PollState, PollEvent, PollCommand> = {
  streamId: (id) => `poll-${id}`,
  initial: () => ({ status: 'none' }),
  evolve,
  decide,
};
