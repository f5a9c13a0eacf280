/**
 * Why a consumer of the feed (the projections, the erasure process) stopped.
 * It stays stopped, skipping nothing, until the cause is dealt with.
 */
export type Halt = UnreadableEventHalt | EventStoreChangedHalt;

/** The feed holds an event this code cannot read: stopped at the position before it. */
export interface UnreadableEventHalt {
  cause: 'unreadable_event';
  /** The position of the event it stopped before. */
  position: bigint;
  streamId: string;
  type: string;
  reason: string;
}

/**
 * The read models were not built from this event store (another one, or this
 * one before it was wiped or restored from an older backup): nothing of it is
 * applied until `admin rebuild` builds them from this one.
 */
export interface EventStoreChangedHalt {
  cause: 'event_store_changed';
  /** 0n: it stops before the whole feed. */
  position: bigint;
  reason: string;
}

/** One line saying why, for the logs, the admin CLI and /readyz. */
export function haltMessage(halt: Halt, consumer: 'projections' | 'erasure' = 'projections'): string {
  return halt.cause === 'unreadable_event'
    ? `${consumer} halted before event ${halt.position} (${halt.type} of ${halt.streamId}), which this version of the service cannot read: ${halt.reason}`
    : `${consumer} halted: ${halt.reason}; \`admin rebuild\` rebuilds the read models from this event store`;
}

/** The halt as JSON (positions as strings; what a cause does not have is null). */
export function haltView(halt: Halt): { cause: Halt['cause']; position: string | null; stream: string | null; type: string | null; reason: string } {
  return halt.cause === 'unreadable_event'
    ? { cause: halt.cause, position: String(halt.position), stream: halt.streamId, type: halt.type, reason: halt.reason }
    : { cause: halt.cause, position: null, stream: null, type: null, reason: halt.reason };
}
