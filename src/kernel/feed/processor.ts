import type { Fence } from '../../infra/read-models/port.js';
import type { Halt } from './halt.js';

/**
 * A consumer of the event feed that keeps its checkpoint with its effects
 * (the projection runner, the erasure process, the webhook dispatcher, the
 * sealer): started with the fence its writes carry while this process holds
 * the projector lease, stopped when the lease is lost or the service stops.
 */
export interface FeedProcessor {
  start(fence: Fence): void;
  /** Resolves once what it was applying is written: after that it writes nothing. */
  stop(): Promise<void>;
}

/** A processor that prepares its state before it first starts, and may stop on its own at an event it cannot take. */
export interface HaltingFeedProcessor extends FeedProcessor {
  init(): Promise<void>;
  /** Why it stopped, skipping nothing, if it did. */
  readonly halted: Halt | undefined;
}
