import type { DomainEvent } from '../src/domain-events.js';
import type { PollEvent } from '../src/polls/events.js';
import type { ReadModelOp } from '../src/infra/read-models/port.js';
import type { Projection } from '../src/kernel/feed/projection.js';
import { withSummaries, type EmbeddableDocOf, type Summaries } from './embeddables.js';
import { countersCollection, uncount, VOTE_SUMMARIES, voteCounted, voteCounters } from './response-summaries.js';

export const POLLS = 'polls';
/** The small fields of each poll, for lists and the cheap checks of public requests. */
export const POLL_SUMMARIES: Summaries = { collection: 'poll_summaries', fields: ['account_id', 'question', 'published', 'settings', 'slots_taken', 'created_at', 'updated_at'] };
/** One document per vote: who owns it, where it lives (for erasure), when it was cast, and the options it chose (what it counted in the summaries). */
export const POLL_VOTERS = 'poll_voters';
/** One document per chosen option of a vote: results count these. */
export const POLL_CHOICES = 'poll_choices';

type PollCreated = Extract<PollEvent, { type: 'PollCreated' }>['data'];

/** A poll as its read model holds it. */
export type PollDoc = EmbeddableDocOf<PollCreated, 'poll_id'>;

/**
 * Results are counts of documents, not counters: erased votes leave the
 * event store, so a counter could not be rebuilt to the same value, while
 * counting what is there gives the same answer live and after a rebuild.
 */
export const pollsProjection: Projection<DomainEvent> = withSummaries(POLL_SUMMARIES, POLLS, {
  name: 'polls',
  // 2: the summaries collection; 3: the dashboard's vote counters, each vote listing its own;
  // 4: each vote keeps the options it chose instead, from which an erasure works its counters out; 5: polls hold a theme; 6: the language and translations.
  version: 6,
  collections: [
    { name: POLLS, indexes: [] },
    // A poll's first and last vote, an account's latest.
    {
      name: POLL_VOTERS,
      indexes: [
        ['poll_id', 'cast_at', 'id'],
        ['account_id', 'cast_at', 'id'],
      ],
      indexedColumns: true,
      counted: voteCounters,
    },
    { name: POLL_CHOICES, indexes: [['poll_id', 'option_id'], ['vote_id']] },
    countersCollection(VOTE_SUMMARIES),
  ],
  project(event): ReadModelOp[] {
    switch (event.type) {
      case 'PollCreated': {
        const { poll_id, created_at, ...config } = event.data;
        return [{ op: 'put', collection: POLLS, doc: { id: poll_id, ...config, published: false, slots_taken: 0, created_at, updated_at: created_at } satisfies PollDoc }];
      }
      case 'PollUpdated':
        return [{ op: 'patch', collection: POLLS, where: { id: event.data.poll_id }, set: { ...event.data.changes, updated_at: event.data.updated_at } }];
      case 'PollPublished':
        return [{ op: 'patch', collection: POLLS, where: { id: event.data.poll_id }, set: { published: true, updated_at: event.data.published_at } }];
      case 'PollUnpublished':
        return [{ op: 'patch', collection: POLLS, where: { id: event.data.poll_id }, set: { published: false, updated_at: event.data.unpublished_at } }];
      case 'PollDeleted':
        return [{ op: 'delete', collection: POLLS, where: { id: event.data.poll_id } }];
      case 'VoteCast': {
        const { vote_id, poll_id, account_id, option_ids, cast_at } = event.data;
        const { ops } = voteCounted(event.data);
        return [
          { op: 'put', collection: POLL_VOTERS, doc: { id: vote_id, poll_id, account_id, stream: event.streamId, cast_at, option_ids } },
          ...ops,
          ...option_ids.map((option_id): ReadModelOp => ({ op: 'put', collection: POLL_CHOICES, doc: { id: `${vote_id}:${option_id}`, vote_id, poll_id, option_id } })),
        ];
      }
      case 'SubmissionSlotReserved':
        return event.data.target === 'poll' ? [{ op: 'increment', collection: POLLS, id: event.data.target_id, field: 'slots_taken', by: 1 }] : [];
      case 'ResponsesErased':
        return event.data.parent === 'poll'
          ? [
              ...uncount(VOTE_SUMMARIES, POLL_VOTERS, event.data.response_ids),
              ...event.data.response_ids.map((id): ReadModelOp => ({ op: 'delete', collection: POLL_CHOICES, where: { vote_id: id } })),
            ]
          : [];
      default:
        return [];
    }
  },
});
