import type { DomainEvent } from '../src/domain-events.js';
import type { ReadModelOp } from '../src/infra/read-models/port.js';
import type { Projection } from '../src/kernel/feed/projection.js';

/**
 * The document of a widget, form or poll: its configuration as its
 * `*Created` event stored it, with its id, and its state.
 */
export type EmbeddableDocOf<Created, IdField extends keyof Created> = Omit<Created, IdField | 'created_at'> & {
  id: string;
  published: boolean;
  /** Submissions accepted under `max_responses` (slots, never erased). */
  slots_taken: number;
  created_at: string;
  updated_at: string;
};

/**
 * An embeddable's small fields, kept in a collection of their own beside the
 * whole document: lists and the cheap checks of public endpoints read these,
 * so a definition of half a megabyte is never parsed to answer them. The
 * fields are those of `fields`; `settings` is among them (bounded by the
 * API's limits), for the gates of public requests.
 */
export interface Summaries {
  collection: string;
  fields: readonly string[];
}

const pick = (source: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(fields.filter((field) => Object.hasOwn(source, field)).map((field) => [field, source[field]]));

/**
 * The projection of an embeddable's whole documents in `collection`, which
 * also keeps their summaries: every operation on a whole document is
 * mirrored onto its summary, a put or a patch with the summary's fields only
 * and the `revision` of the event, a delete and an increment as they are.
 * The summaries are indexed for the lists.
 */
export function withSummaries(summaries: Summaries, collection: string, projection: Projection<DomainEvent>): Projection<DomainEvent> {
  // Puts and patches of a whole document come from events of the object's own stream, whose
  // revision the summary keeps: a version of what the object shows, finer than `updated_at`.
  const mirror = (op: ReadModelOp, revision: number): ReadModelOp[] => {
    if (op.collection !== collection) return [op];
    switch (op.op) {
      case 'put':
        return [op, { op: 'put', collection: summaries.collection, doc: { ...pick(op.doc, summaries.fields), revision, id: op.doc.id } }];
      case 'patch':
        return [op, { ...op, collection: summaries.collection, set: { ...pick(op.set, summaries.fields), revision } }];
      case 'delete':
      case 'increment':
        return [op, { ...op, collection: summaries.collection }];
      case 'tally':
      case 'retract':
        // Counters live in collections of their own; a whole document is never one.
        return [op];
    }
  };
  return {
    ...projection,
    collections: [...projection.collections, { name: summaries.collection, indexes: [['account_id', 'created_at']] }],
    project: (event) => {
      const ops = projection.project(event);
      // Most events (responses) are not this projection's: nothing to mirror, nothing to allocate.
      if (ops.length === 0) return ops;
      const revision = Number(event.revision);
      const out: ReadModelOp[] = [];
      for (const op of ops) out.push(...mirror(op, revision));
      return out;
    },
  };
}
