/**
 * The event store port. Two adapters implement it (embedded SQLite, KurrentDB)
 * and one contract suite (test/contracts/event-store.ts) holds both to it.
 *
 * Positions in the global feed are bigints that only ever grow. SQLite uses its
 * row sequence; KurrentDB uses the commit position, which is the one to use
 * unless explicit transactions are involved (gRPC clients cannot make them).
 * 0n means "before the first event".
 */

export type ExpectedRevision =
  /** The stream must not exist yet. */
  | 'no_stream'
  /** No check at all. */
  | 'any'
  /** The stream's last event must have exactly this revision (0-based). */
  | bigint;

export type JsonObject = { [key: string]: unknown };

export interface NewEvent {
  type: string;
  data: JsonObject;
  metadata: JsonObject;
}

export interface StoredEvent {
  /** Unique id of the event (a UUID). */
  id: string;
  streamId: string;
  /** 0-based revision of the event inside its stream. */
  revision: bigint;
  /** Position in the global feed. */
  position: bigint;
  type: string;
  data: JsonObject;
  metadata: JsonObject;
  /** When the store recorded the event (ISO 8601). */
  recordedAt: string;
}

export interface AppendResult {
  /** Revision of the last appended event. */
  nextRevision: bigint;
  /** Global position of the last appended event. */
  position: bigint;
}

export interface ReadStreamOptions {
  /** First revision to return (inclusive); default 0. */
  fromRevision?: bigint;
  maxCount?: number;
}

export interface ReadAllOptions {
  /** Return events strictly after this position; default 0n (the start). */
  after?: bigint;
  /** At most this many events. */
  limit: number;
}

export interface SubscribeOptions {
  /** Deliver events strictly after this position. */
  after: bigint;
  /** Largest batch handed over at once. */
  batchSize: number;
}

/**
 * Catch-up-then-live subscription to the global feed: yields batches in feed
 * order, first everything already stored after the checkpoint, then new events
 * as they are appended (by this process or another one).
 */
export interface EventSubscription extends AsyncIterable<StoredEvent[]> {
  close(): Promise<void>;
}

export interface EventStore {
  readonly kind: 'sqlite' | 'kurrentdb';
  /** Appends atomically; throws WrongExpectedRevision when the check fails. */
  append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>;
  /** Events of one stream in order; an empty array when the stream does not exist. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  /** A page of the global feed in order (system events excluded). */
  readAll(options: ReadAllOptions): Promise<StoredEvent[]>;
  subscribe(options: SubscribeOptions): EventSubscription;
  /** Deletes the streams and their events; a missing stream is not an error. */
  deleteStreams(streamIds: string[]): Promise<void>;
  /**
   * Makes what was deleted unrecoverable from the store's files where the
   * store can do that at once; never fails because it could not (SQLite:
   * empties its write-ahead log; KurrentDB: nothing, its files keep deleted
   * events until a scavenge runs, see `admin scavenge`).
   */
  expunge(): Promise<void>;
  /** Position of the newest event in the global feed (0n when empty). */
  headPosition(): Promise<bigint>;
  close(): Promise<void>;
}

export class WrongExpectedRevision extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: bigint | 'no_stream',
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevision';
  }
}
