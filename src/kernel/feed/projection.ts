import type { Recorded } from '../event-catalog.js';
import type { CollectionSpec, ReadModelOp } from '../../infra/read-models/port.js';

/** What a consumer of the feed needs of an event: the catalog reads every event into this shape. */
export type FeedEvent = { type: string; data: unknown };

/**
 * A projection turns each event into read-model operations. It is pure: the
 * runner applies the operations and the checkpoint in one transaction, which
 * is what makes redelivery harmless.
 */
export interface Projection<E extends FeedEvent = FeedEvent> {
  name: string;
  /** Raised when the read-model shape changes: the new version replays from zero. */
  version: number;
  collections: CollectionSpec[];
  project(event: Recorded<E>): ReadModelOp[];
}

/**
 * The key the projection's checkpoint is stored under. Version 1 is the bare
 * name and later ones `<name>_v<version>`, the keys stores already hold.
 */
export const checkpointKey = (projection: Pick<Projection, 'name' | 'version'>): string =>
  projection.version === 1 ? projection.name : `${projection.name}_v${projection.version}`;
