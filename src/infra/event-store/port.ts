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
  /**
   * `data` as the store holds it, JSON text, where the store read it as
   * text (the embedded store): a reader that would write `data` out as
   * JSON again may copy this instead (see EventCatalog.parse).
   */
  dataText?: string;
  /** Where `data` was opened from a sealed envelope (kernel/personal.ts): the envelope as stored. */
  sealed?: { key: string; iv: string; box: string };
}

/**
 * An event as the store holds it, for sealing and verifying the history: its
 * data and metadata are the JSON text stored, unparsed, so a hash of them is a
 * hash of what is on disk and a byte changed there shows (even one that no
 * longer parses). SQLite hands over its columns as they are; KurrentDB's
 * client parses JSON events itself, so its adapter gives `JSON.stringify` of
 * what the client parsed, which is byte for byte what the client wrote on
 * append (it serialises with `JSON.stringify` too, and parsing then
 * serialising JSON text that `JSON.stringify` made gives it back unchanged).
 */
export interface FeedRecord {
  id: string;
  streamId: string;
  revision: bigint;
  position: bigint;
  type: string;
  data: string;
  metadata: string;
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

/**
 * Where a stream stands: the revision of its last event, no stream yet, or
 * deleted (for good: it takes no more events).
 */
export type StreamState = bigint | 'no_stream' | 'deleted';

/**
 * KurrentDB's default `MaxAppendSize`: the most one append may carry, counted
 * as the server counts it (appendSize). The SQLite adapter refuses beyond the
 * same figure, so the service behaves alike on both stores; the HTTP body
 * limit stays under it with room for what the service adds to a request.
 */
export const MAX_APPEND_BYTES = 1024 * 1024;

/**
 * The account an event names in its data (see readAccount), if any: a
 * string `account_id`.
 */
export function namedAccount(data: unknown): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const account = (data as { account_id?: unknown }).account_id;
  return typeof account === 'string' && account !== '' ? account : undefined;
}

/** The size of an append as KurrentDB counts it: data and metadata bytes, plus the type at two bytes a character. */
export function appendSize(events: NewEvent[]): number {
  let size = 0;
  for (const event of events) size += encodedSize({ type: event.type, data: JSON.stringify(event.data), metadata: JSON.stringify(event.metadata) });
  return size;
}

/** One event's share of appendSize, its data and metadata already JSON. */
export const encodedSize = (event: { type: string; data: string; metadata: string }): number =>
  Buffer.byteLength(event.data) + Buffer.byteLength(event.metadata) + event.type.length * 2;

export interface EventStore {
  readonly kind: 'sqlite' | 'kurrentdb';
  /**
   * Appends atomically. Throws WrongExpectedRevision when the check fails, and
   * for every append to a deleted stream whatever the expected revision
   * (`actual` is then 'deleted'); AppendTooLarge when the events exceed what
   * the store takes at once. Each event gets its id once, before the first
   * attempt, so an attempt the adapter repeats (KurrentDB, after a transient
   * error) is recognised by the store if an earlier one had in fact landed.
   */
  append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult>;
  /**
   * Appends to several streams, part after part in the order given, and
   * answers the revision and position of the last part's last event. Each
   * part is checked as `append` checks it (WrongExpectedRevision;
   * AppendTooLarge past the limit for one part), and a part whose last
   * event would take a revision at or past its `below` is refused with
   * RevisionLimitReached. With `atomicAcrossStreams` (SQLite) it is one
   * transaction: every part is stored or none is, at consecutive positions.
   * Without (KurrentDB, see appendInOrder) each part is an append of its
   * own: a WrongExpectedRevision leaves the parts before it stored, a
   * RevisionLimitReached leaves its own part stored too (it is found only
   * once stored), and any other failure after the first part was stored is
   * PartlyAppended.
   */
  appendToStreams(parts: StreamAppend[]): Promise<AppendResult>;
  /** Whether appendToStreams stores every part or none. */
  readonly atomicAcrossStreams: boolean;
  /** Events of one stream in order; an empty array when the stream does not exist or was deleted. */
  readStream(streamId: string, options?: ReadStreamOptions): Promise<StoredEvent[]>;
  /** Whether the stream has events (the last one's revision), never had any, or was deleted. */
  streamState(streamId: string): Promise<StreamState>;
  /** A page of the global feed in order (system events excluded). */
  readAll(options: ReadAllOptions): Promise<StoredEvent[]>;
  /** The same page as readAll, with each event's data and metadata as stored (see FeedRecord). */
  readFeed(options: ReadAllOptions): Promise<FeedRecord[]>;
  /**
   * A page of one account's events in feed order, from an index the store
   * keeps, so that reading them costs what the account holds, however much
   * other accounts hold. An event is the account's when its data's
   * `account_id` names it, or, naming none, when the first event of its
   * stream (revision 0) does: the service's streams of a form, widget or
   * poll start with the event that names its owner. Deleted streams'
   * events are not in it (on KurrentDB they drop out at once, as reads of
   * their stream do, not at the next scavenge).
   */
  readAccount(accountId: string, options: ReadAllOptions): Promise<StoredEvent[]>;
  subscribe(options: SubscribeOptions): EventSubscription;
  /**
   * Deletes the streams for good: their events leave the store (at once on
   * SQLite, at the next scavenge on KurrentDB, see expunge) and their names
   * stay taken, so every later append to one is refused (WrongExpectedRevision,
   * actual 'deleted') and reads of one answer nothing. A stream that never
   * existed is deleted too, and deleting one again changes nothing.
   *
   * One behaviour on both stores, set by what erasure needs: KurrentDB can
   * make events leave its files only by a hard delete (a soft-deleted
   * stream keeps its last event through a scavenge, to remember its
   * revision), and a hard-deleted stream refuses appends for ever; SQLite
   * keeps the names of the streams it deleted to refuse them the same way.
   * The names stay, the content goes: a stream name never holds content.
   */
  deleteStreams(streamIds: string[]): Promise<void>;
  /**
   * Whether an append of a few pages would find room now, without keeping
   * anything; for readiness after a write failed for lack of space. Only a
   * store on this machine's disk can tell (SQLite); the others leave it out.
   */
  hasRoom?(): Promise<boolean>;
  /**
   * Makes what was deleted unrecoverable from the store's files where the
   * store can do that at once; never fails because it could not (SQLite:
   * empties its write-ahead log; KurrentDB: nothing, its files keep deleted
   * events until a scavenge runs, see `admin scavenge`).
   */
  expunge(): Promise<void>;
  /** Position of the newest event in the global feed (0n when empty). */
  headPosition(): Promise<bigint>;
  /**
   * A position at or past every event the store ever held, deleted ones
   * included (0n when it never held one): a read-model checkpoint past it was
   * made from another store. Unlike the head it does not go back when the
   * newest events are deleted (SQLite: the last position it gave out;
   * KurrentDB: the newest record of its log, system records included, which
   * a scavenge keeps: a deleted stream's tombstone comes after its events and
   * is never scavenged).
   */
  endPosition(): Promise<bigint>;
  close(): Promise<void>;
}

export class WrongExpectedRevision extends Error {
  constructor(
    readonly streamId: string,
    readonly expected: ExpectedRevision,
    readonly actual: StreamState,
  ) {
    super(`stream ${streamId}: expected revision ${String(expected)}, actual ${String(actual)}`);
    this.name = 'WrongExpectedRevision';
  }
}

/** One stream's part of appendToStreams. */
export interface StreamAppend {
  streamId: string;
  /**
   * None: the part is a condition only, the stream found as `expected` says
   * or the whole append refused (WrongExpectedRevision). Only where
   * `atomicAcrossStreams`: part by part, the check would not hold until the
   * parts after it are stored.
   */
  events: NewEvent[];
  expected: ExpectedRevision;
  /** The part is refused (RevisionLimitReached) when its last event would take a revision at or past this. */
  below?: bigint;
}

/** A part of appendToStreams would have taken a revision at or past its `below`. */
export class RevisionLimitReached extends Error {
  constructor(
    readonly streamId: string,
    readonly below: bigint,
  ) {
    super(`stream ${streamId}: no revision at or past ${below} may be taken`);
    this.name = 'RevisionLimitReached';
  }
}

/** A store that appends part by part failed after some parts were stored: the caller cannot say nothing was. */
export class PartlyAppended extends Error {
  constructor(
    /** The parts stored before the failure. */
    readonly stored: number,
    cause: unknown,
  ) {
    super(`${stored} part(s) of an append to several streams were stored before it failed`, { cause });
    this.name = 'PartlyAppended';
  }
}

/**
 * appendToStreams on a store without appends across streams: each part an
 * append of its own. A part over its `below` is found only once stored: it
 * stays, as a slot or a count past its limit changes nothing for its readers.
 */
export async function appendInOrder(store: Pick<EventStore, 'append'>, parts: StreamAppend[]): Promise<AppendResult> {
  if (parts.length === 0) throw new Error('appendToStreams needs at least one part');
  let result: AppendResult | undefined;
  for (const [stored, part] of parts.entries()) {
    try {
      result = await store.append(part.streamId, part.events, part.expected);
    } catch (error) {
      if (stored === 0 || error instanceof WrongExpectedRevision) throw error;
      throw new PartlyAppended(stored, error);
    }
    if (part.below !== undefined && result.nextRevision >= part.below) throw new RevisionLimitReached(part.streamId, part.below);
  }
  return result!;
}

/** The events of one append exceed what the store takes at once (nothing was appended). */
export class AppendTooLarge extends Error {
  constructor(
    readonly streamId: string,
    /** The store's limit in bytes, as appendSize counts them. */
    readonly limit: number,
  ) {
    super(`append to ${streamId}: larger than the event store's maximum append size of ${limit} bytes`);
    this.name = 'AppendTooLarge';
  }
}

/** A stored event that cannot be read as an event at all (a hand edit of the file): where it is, and why. */
export class UnreadableRecord extends Error {
  constructor(
    readonly position: bigint,
    readonly streamId: string,
    readonly reason: string,
  ) {
    super(`the stored event at position ${position} (stream ${streamId}) ${reason}`);
    this.name = 'UnreadableRecord';
  }
}

/**
 * A stored event's revision: a column SQLite lets hold any value (a hand
 * edit) is named by its position and stream when it holds no revision.
 */
export function storedWhole(value: unknown, field: 'revision', position: bigint | number, streamId: string): bigint {
  if ((typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) || (typeof value === 'bigint' && value >= 0n)) return BigInt(value);
  throw new UnreadableRecord(BigInt(position), streamId, `holds a ${field} that is not a whole number from 0 up: ${JSON.stringify(typeof value === 'bigint' ? String(value) : value)}`);
}

/**
 * A stored event's data or metadata parsed; text that is no longer JSON (a
 * damaged file, a hand edit) is named by its position and stream rather
 * than by the parser's message alone.
 */
export function storedJson(text: string, field: 'data' | 'metadata', position: bigint | number, streamId: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new Error(`the stored event at position ${position} (stream ${streamId}) holds ${field} that is not JSON: ${(error as Error).message}`);
  }
}
