import type { AccountEvent } from '../accounts/events.js';
import type { ErasureEvent } from '../erasure/events.js';
import type { FormEvent } from '../forms/events.js';
import type { Recorded } from '../kernel/event-catalog.js';
import type { PollEvent } from '../polls/events.js';
import type { SealEvent } from '../seals/events.js';
import type { SubmissionEvent } from '../submissions/events.js';
import type { WidgetEvent } from '../widgets/events.js';
import type { WebhookEvent } from './events.js';
import type { WebhookType } from './types.js';

/**
 * The events webhooks read: their own, the objects', submissions, votes and
 * erasures they send, accounts' plans and seals. The feed holds every
 * feature's events; those of other types pass through each reader's default.
 */
export type WebhookReads = WebhookEvent | AccountEvent | ErasureEvent | SealEvent | SubmissionEvent | PollEvent | WidgetEvent | FormEvent;

/** What one event of the feed sends to the endpoints of its account. */
export interface WebhookMessage {
  type: WebhookType;
  data: Record<string, unknown>;
  /** The account, when the event names it; else `object_id`'s owner is the account. */
  account_id?: string;
  object_id?: string;
  /** The response or vote carried, and its parent: what an erasure drops from the queue. */
  subject_id: string | null;
  parent_id: string | null;
}

const KINDS = { Widget: 'widget', Form: 'form', Poll: 'poll' } as const;
const CHANGES = { Created: 'created', Updated: 'updated', Published: 'published', Unpublished: 'unpublished', Deleted: 'deleted' } as const;
const DEFINITION = /^(Widget|Form|Poll)(Created|Updated|Published|Unpublished|Deleted)$/;

/**
 * The webhook message of an event, if it sends one. Payloads carry what the
 * API shows of the object, never the owner's account id, a visitor's
 * duplicate guard or anything else kept inside.
 */
export function messageOf(event: Recorded<WebhookReads>): WebhookMessage | undefined {
  switch (event.type) {
    case 'ResponseSubmitted': {
      const { response_id, account_id, duplicate_guard: _guard, ...record } = event.data;
      return { type: 'response.created', data: { id: response_id, ...record }, account_id, subject_id: response_id, parent_id: record.widget_id ?? record.form_id ?? null };
    }
    case 'ResponsesErased': {
      const { account_id, key_id: _key, ...erased } = event.data;
      return { type: 'response.erased', data: erased, account_id, subject_id: null, parent_id: null };
    }
    case 'VoteCast': {
      const { vote_id, account_id, ...vote } = event.data;
      return { type: 'vote.cast', data: { id: vote_id, ...vote }, account_id, subject_id: vote_id, parent_id: vote.poll_id };
    }
    default: {
      const match = DEFINITION.exec(event.type);
      if (!match) return undefined;
      const kind = KINDS[match[1] as keyof typeof KINDS];
      const change = CHANGES[match[2] as keyof typeof CHANGES];
      const data = { ...(event.data as Record<string, unknown>) };
      const id = String(data[`${kind}_id`]);
      const accountId = typeof data.account_id === 'string' ? data.account_id : undefined;
      delete data[`${kind}_id`];
      delete data.account_id;
      return { type: `${kind}.${change}`, data: { id, ...data }, ...(accountId ? { account_id: accountId } : { object_id: id }), subject_id: null, parent_id: null };
    }
  }
}

/** The id of the object an event creates, with its owner, so later events that name no account find it. */
export function createdObject(event: Recorded<WebhookReads>): { id: string; account_id: string } | undefined {
  switch (event.type) {
    case 'WidgetCreated':
      return { id: event.data.widget_id, account_id: event.data.account_id };
    case 'FormCreated':
      return { id: event.data.form_id, account_id: event.data.account_id };
    case 'PollCreated':
      return { id: event.data.poll_id, account_id: event.data.account_id };
    default:
      return undefined;
  }
}
