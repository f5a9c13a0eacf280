import type { DomainEvent } from '../domain-events.js';
import type { Recorded } from '../kernel/event-catalog.js';
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

/** What an event adds to the erasure's state: a submission and where it lives, or nothing. */
export function targetOf(event: Recorded<DomainEvent>): ErasureTarget | undefined {
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
export function deletedParent(event: Recorded<DomainEvent>): { parent: Parent; id: string; accountId: string } | undefined {
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
