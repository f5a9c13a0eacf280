import type { Recorded } from '../kernel/event-catalog.js';
import type { FeedEvent } from '../kernel/feed/projection.js';
import type { FormEvent } from '../forms/events.js';
import type { PollEvent } from '../polls/events.js';
import type { SubmissionEvent } from '../submissions/events.js';
import type { WidgetEvent } from '../widgets/events.js';
import type { ErasureEvent } from './events.js';
import type { CollectionSpec, Doc } from '../infra/read-models/port.js';

/**
 * The erasure process's own state: which streams hold each submission of a
 * parent, and which parents were deleted. The process builds it from the
 * feed in order, in the transaction that moves its checkpoint, so when it
 * meets a deletion at position P it knows every submission recorded before P,
 * however far behind the API's read models are.
 */
export const ERASURE_TARGETS = 'erasure_targets';
export const DELETED_PARENTS = 'deleted_parents';

export type Parent = 'widget' | 'form' | 'poll';

export interface ErasureTarget extends Doc {
  parent: Parent;
  parent_id: string;
  account_id: string;
  /** Every stream that holds something of this submission: its own, and a duplicate guard. */
  streams: string[];
}

export const erasureState = {
  name: 'erasure',
  version: 1,
  collections: [
    { name: ERASURE_TARGETS, indexes: [['parent_id']] },
    { name: DELETED_PARENTS, indexes: [] },
  ] satisfies CollectionSpec[],
};

/** The key of a parent in DELETED_PARENTS. */
export const parentKey = (parent: Parent, id: string): string => `${parent}:${id}`;

/**
 * The events the erasure reads: its own, the submissions it erases and the
 * deletions of their parents. The feed holds every feature's events; those of
 * other types pass through each reader's default branch.
 */
export type ErasureReads = ErasureEvent | SubmissionEvent | PollEvent | WidgetEvent | FormEvent;

// The two readers below are given any event of the feed (the webhooks, the
// notifier and the sealer call them too) and name the types they read; an
// event of another type goes to their default branch.

/** What an event adds to the erasure's state: a submission and where it lives, or nothing. */
export function targetOf(recorded: Recorded<FeedEvent>): ErasureTarget | undefined {
  const event = recorded as Recorded<SubmissionEvent | PollEvent>;
  switch (event.type) {
    case 'ResponseSubmitted': {
      const { response_id, widget_id, form_id, account_id, duplicate_guard } = event.data;
      const [parent, parent_id] = widget_id !== undefined ? (['widget', widget_id] as const) : (['form', form_id!] as const);
      return { id: response_id, parent, parent_id, account_id, streams: [event.streamId, ...(duplicate_guard ? [duplicate_guard] : [])] };
    }
    case 'ResponseProgressed':
      // A partial response: its stream is the one the submission completing it appends to.
      return { id: event.data.response_id, parent: 'form', parent_id: event.data.form_id, account_id: event.data.account_id, streams: [event.streamId] };
    case 'VoteCast':
      return { id: event.data.vote_id, parent: 'poll', parent_id: event.data.poll_id, account_id: event.data.account_id, streams: [event.streamId] };
    default:
      return undefined;
  }
}

/** The parent an event deletes, if it deletes one. */
export function deletedParent(recorded: Recorded<FeedEvent>): { parent: Parent; id: string; accountId: string } | undefined {
  const event = recorded as Recorded<WidgetEvent | FormEvent | PollEvent>;
  switch (event.type) {
    case 'WidgetDeleted':
      return { parent: 'widget', id: event.data.widget_id, accountId: event.data.account_id };
    case 'FormDeleted':
      return { parent: 'form', id: event.data.form_id, accountId: event.data.account_id };
    case 'PollDeleted':
      return { parent: 'poll', id: event.data.poll_id, accountId: event.data.account_id };
    default:
      return undefined;
  }
}
