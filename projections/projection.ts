import type { DomainEvent } from '../src/domain-events.js';
import type { Recorded } from '../src/event-catalog.js';
import type { CollectionSpec, ReadModelOp } from '../src/infra/read-models/port.js';

/**
 * A projection turns each event into read-model operations. It is pure: the
 * runner applies the operations and the checkpoint in one transaction, which
 * is what makes redelivery harmless.
 */
export interface Projection {
  name: string;
  /** Raised when the read-model shape changes: the new version replays from zero. */
  version: number;
  collections: CollectionSpec[];
  project(event: Recorded<DomainEvent>): ReadModelOp[];
}

/**
 * The key the projection's checkpoint is stored under. Version 1 is the bare
 * name and later ones `<name>_v<version>`, the keys stores already hold.
 */
export const checkpointKey = (projection: Pick<Projection, 'name' | 'version'>): string =>
  projection.version === 1 ? projection.name : `${projection.name}_v${projection.version}`;

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
 * The operations on an embeddable's whole document, mirrored onto its
 * summary: a put or a patch carries the summary's fields only (a patch of
 * none of them changes nothing there), a delete and an increment carry over
 * as they are.
 */
export function withSummaries(summaries: Summaries, ops: ReadModelOp[], collection: string): ReadModelOp[] {
  return ops.flatMap((op): ReadModelOp[] => {
    if (op.collection !== collection) return [op];
    switch (op.op) {
      case 'put':
        return [op, { op: 'put', collection: summaries.collection, doc: { ...pick(op.doc, summaries.fields), id: op.doc.id } }];
      case 'patch': {
        const set = pick(op.set, summaries.fields);
        return Object.keys(set).length === 0 ? [op] : [op, { ...op, collection: summaries.collection, set }];
      }
      case 'delete':
      case 'increment':
        return [op, { ...op, collection: summaries.collection }];
    }
  });
}
