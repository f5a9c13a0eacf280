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
