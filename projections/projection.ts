import type { DomainEvent } from '../src/domain-events.js';
import type { Recorded } from '../src/event-catalog.js';
import type { CollectionSpec, ReadModelOp } from '../src/infra/read-models/port.js';

/**
 * A projection turns each event into read-model operations. It is pure: the
 * runner applies the operations and the checkpoint in one transaction, which
 * is what makes redelivery harmless.
 */
export interface Projection {
  /** Checkpoint name; changing it replays the projection from zero. */
  name: string;
  collections: CollectionSpec[];
  project(event: Recorded<DomainEvent>): ReadModelOp[];
}
