/**
 * KurrentDB / EventStoreDB adapter of the event store port, on top of
 * `@kurrent/kurrentdb-client` (v1.3). The client takes two paths to the
 * server: appends, deletes and subscriptions use gRPC through grpc-js, while
 * readStream and readAll go through the Rust bridge (`@kurrent/bridge`). Both
 * are built from the same connection string.
 *
 * Positions: the port's position is the commit position. For events written
 * through gRPC (implicit transactions) the server reports commit == prepare
 * for every event (AllReader in KurrentDB builds the position of such an
 * event from its own log position), so one bigint identifies an event and
 * `{ commit: p, prepare: p }` points back at it.
 *
 * Appends: a tombstoned stream refuses every append (StreamDeleted), answered
 * as the port's WrongExpectedRevision with actual 'deleted'; an append over
 * the server's MaxAppendSize is AppendTooLarge; transient failures are tried
 * again a few times with the same event ids (kurrent-retry.ts).
 */
import { randomUUID } from 'node:crypto';
import {
  ANY,
  AppendRecordSizeExceededError,
  BACKWARDS,
  END,
  FORWARDS,
  KurrentDBClient,
  MaxAppendSizeExceededError,
  NO_STREAM,
  START,
  StreamDeletedError,
  StreamNotFoundError,
  StreamTombstonedError,
  UnavailableError,
  WrongExpectedVersionError,
  binaryEvent,
  excludeSystemEvents,
  jsonEvent,
} from '@kurrent/kurrentdb-client';
import type {
  AllStreamResolvedEvent,
  AllStreamSubscription,
  AppendStreamState,
  EventData,
  Position,
  ReadPosition,
} from '@kurrent/kurrentdb-client';
import { appendRetryWait } from './kurrent-retry.js';
import {
  AppendTooLarge,
  appendInOrder,
  namedAccount,
  WrongExpectedRevision,
  type AppendResult,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  type FeedRecord,
  type JsonObject,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StoredEvent,
  type StreamAppend,
  type StreamState,
  type SubscribeOptions,
} from './port.js';

/** How long opening may take before we give up on the server. */
const OPEN_TIMEOUT_MS = 30_000;
/** Page size of the backwards scan that finds the head of the feed. */
const HEAD_PAGE = 32;
/** How long close() waits for the client to cancel a subscription call. */
const UNSUBSCRIBE_WAIT_MS = 2_000;
/** Tombstones requested at once when erasing many streams. */
const DELETE_CONCURRENCY = 8;
/** The server reports this commit position when it does not know it (stream reads before 22.6). */
const UNKNOWN_POSITION = 0xffff_ffff_ffff_ffffn;

/*
 * The index by account (readAccount), kept without server-side projections:
 * per account a stream of link events (`$>`, data `<revision>@<stream>`, the
 * server's own link format, resolved by reads with resolveLinkTos), and one
 * stream recording how far in $all the links reach. Links and checkpoints
 * have types starting with `$`, which the feed leaves out as system events.
 */
/** The stream of an account's links. */
export const accountIndexStream = (accountId: string): string => `account-index-${accountId}`;
/** Its checkpoint: each event holds `{position}`, the last event of $all linked. */
export const ACCOUNT_INDEX_CHECKPOINT = 'account-index';
const CHECKPOINT_TYPE = '$account-indexed';
const LINK_TYPE = '$>';
/** Events of $all indexed per step (a step's links, then its checkpoint). */
const INDEX_PAGE = 500;
/** Links read at once from an account's stream. */
const LINK_PAGE = 500;
/** Streams whose first event's account is kept (it never changes), before the map is emptied. */
const STREAM_ACCOUNTS = 10_000;

/**
 * Opens the adapter and checks at once that the server answers (one read of
 * the newest record of $all, which also needs the $all read permission every
 * feed operation needs). Fails with an error that names the server without
 * its credentials.
 */
export async function openKurrentEventStore(url: string, options: ConnectionDefaults = {}): Promise<EventStore> {
  const conn = prepareConnectionString(url, options);
  let client: KurrentDBClient;
  try {
    client = KurrentDBClient.connectionString(conn.connectionString);
  } catch (err) {
    throw new Error(`KurrentDB: invalid connection string ${conn.redacted}: ${conn.redact(describe(err))}`);
  }
  try {
    await withTimeout(
      (async () => {
        for await (const _ of client.readAll(leader({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }))) {
          // one record (or none on an empty database) is enough
        }
      })(),
      OPEN_TIMEOUT_MS,
      `no answer within ${OPEN_TIMEOUT_MS / 1000} s`,
    );
  } catch (err) {
    await client.dispose().catch(() => undefined);
    throw new Error(`KurrentDB: cannot read from ${conn.redacted}: ${conn.redact(describe(err))}`);
  }
  return new KurrentEventStore(client);
}

export class KurrentEventStore implements EventStore {
  readonly kind = 'kurrentdb' as const;
  readonly #client: KurrentDBClient;
  readonly #subscriptions = new Set<KurrentSubscription>();
  #closed = false;
  /** Index steps run one after the other in this process (another process's are told apart by the checkpoint's revision). */
  #indexing: Promise<void> = Promise.resolve();
  #streamAccounts = new Map<string, string | null>();
  /** Per account, where its last page ended in its link stream: the next page starts there rather than at the stream's start. */
  readonly #linkHints = new Map<string, { position: bigint; next: bigint }>();

  constructor(client: KurrentDBClient) {
    this.#client = client;
  }

  /**
   * Part by part: KurrentDB 25.1's multiStreamAppend takes metadata of
   * string values only (our events' metadata holds numbers), and servers
   * before 25.1 have no such call.
   */
  readonly atomicAcrossStreams = false;

  appendToStreams(parts: StreamAppend[]): Promise<AppendResult> {
    return appendInOrder(this, parts);
  }

  async append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    this.#assertOpen();
    if (events.length === 0) throw new Error(`append to ${streamId}: no events given`);
    // appendToStream (gRPC v1 Append / BatchAppend) stores custom metadata as
    // opaque JSON bytes, so any JSON object is fine. Only multiStreamAppend
    // (v2 API) restricts metadata to string values; it is not used here.
    // The ids are made once: every attempt below sends the same events.
    const proposed: EventData[] = events.map((e) =>
      jsonEvent({ id: randomUUID(), type: e.type, data: e.data, metadata: e.metadata }),
    );
    let result;
    for (let attempt = 1; ; attempt++) {
      try {
        result = await this.#client.appendToStream(streamId, proposed, {
          streamState: toStreamState(expectedRevision),
        });
        break;
      } catch (err) {
        if (isWrongExpectedVersion(err)) {
          throw new WrongExpectedRevision(streamId, expectedRevision, toActual(err.actualState));
        }
        if (isDeletedStream(err)) throw new WrongExpectedRevision(streamId, expectedRevision, 'deleted');
        const limit = appendLimit(err);
        if (limit !== undefined) throw new AppendTooLarge(streamId, limit);
        const wait = appendRetryWait(err, attempt);
        if (wait === undefined || this.#closed) throw err;
        await delay(wait);
      }
    }
    if (!result.success) {
      // Only reachable with throwOnAppendFailure=false, which
      // prepareConnectionString removes; kept so a failed check never passes.
      throw new WrongExpectedRevision(streamId, expectedRevision, toActual(result.nextExpectedRevision));
    }
    // A repeated attempt the server recognised may come back without a
    // position (a server that does not keep the first one's reports none):
    // the stream's last event is then at or after ours, which is all a
    // caller waits for.
    const position = result.position?.commit ?? (await this.#lastPosition(streamId));
    return { nextRevision: result.nextExpectedRevision, position };
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    this.#assertOpen();
    const maxCount = options.maxCount ?? Number.MAX_SAFE_INTEGER;
    if (maxCount <= 0) return [];
    const out: StoredEvent[] = [];
    try {
      for await (const resolved of this.#client.readStream(streamId, leader({
        direction: FORWARDS,
        fromRevision: options.fromRevision ?? START,
        maxCount,
      }))) {
        const event = toStoredEvent(resolved);
        if (event) out.push(event);
      }
    } catch (err) {
      // Missing, soft-deleted (StreamNotFound) and tombstoned (StreamDeleted) streams read as empty.
      if (isMissingStream(err)) return [];
      throw err;
    }
    return out;
  }

  async streamState(streamId: string): Promise<StreamState> {
    this.#assertOpen();
    try {
      for await (const resolved of this.#client.readStream(streamId, leader({ direction: BACKWARDS, fromRevision: END, maxCount: 1 }))) {
        if (resolved.event) return resolved.event.revision;
      }
      return 'no_stream';
    } catch (err) {
      if (isDeletedStream(err)) return 'deleted';
      // Soft-deleted streams (never made here) read as not found and take appends again.
      if (isMissingStream(err)) return 'no_stream';
      throw err;
    }
  }

  async readAll({ after = 0n, limit }: ReadAllOptions): Promise<StoredEvent[]> {
    this.#assertOpen();
    if (limit <= 0) return [];
    const out: StoredEvent[] = [];
    // A forward read of $all from a position includes the event at that
    // position (KurrentDB AllReader: `new TFPos(p, p) >= pos`; the client's
    // own readAll test reads an event back from its position), so the event at
    // the cursor is dropped. The server filter drops system event types; events
    // in $-streams with other types are dropped here, and the loop reads on
    // until `limit` events are found or the log ends.
    let cursor = after;
    for (;;) {
      const want = limit - out.length + 1;
      let got = 0;
      let last: bigint | undefined;
      for await (const resolved of this.#client.readAll(leader({
        direction: FORWARDS,
        fromPosition: positionOf(cursor),
        maxCount: want,
        filter: excludeSystemEvents(),
      }))) {
        got++;
        const event = toStoredEvent(resolved);
        if (!event) continue;
        last = event.position;
        if (event.position <= cursor || isSystemEvent(event)) continue;
        out.push(event);
      }
      if (out.length >= limit || got < want || last === undefined || last <= cursor) break;
      cursor = last;
    }
    return out.slice(0, limit);
  }

  /**
   * The index is brought up to the end of $all first (in this process,
   * one step after another; what it covered once is not read again), then
   * the account's links are read, resolved by the server: a link to a
   * deleted stream's event resolves to nothing and is passed over.
   */
  async readAccount(accountId: string, { after = 0n, limit }: ReadAllOptions): Promise<StoredEvent[]> {
    this.#assertOpen();
    if (limit <= 0) return [];
    const step = this.#indexing.then(() => this.#indexToEnd());
    this.#indexing = step.catch(() => undefined);
    await step;
    const stream = accountIndexStream(accountId);
    const hint = this.#linkHints.get(accountId);
    let from = hint !== undefined && hint.position <= after ? hint.next : 0n;
    const out: StoredEvent[] = [];
    // Links are in feed order, save that two processes indexing at once may both link a stretch: each
    // writes its links in feed order after every link of the stretches before, so one already passed is a repeat.
    let last = after;
    for (;;) {
      let got = 0;
      try {
        for await (const resolved of this.#client.readStream(stream, leader({ direction: FORWARDS, fromRevision: from, maxCount: LINK_PAGE, resolveLinkTos: true }))) {
          got++;
          from = (resolved.link?.revision ?? resolved.event?.revision ?? from) + 1n;
          const event = resolved.event && resolved.event.type !== LINK_TYPE ? toStoredEvent({ event: resolved.event }) : undefined;
          if (!event) continue;
          const linked = (resolved.link?.metadata as { position?: unknown } | undefined)?.position;
          if (event.position < 0n && typeof linked === 'string' && /^\d+$/.test(linked)) event.position = BigInt(linked);
          if (event.position <= last || isSystemEvent(event)) continue;
          last = event.position;
          out.push(event);
          if (out.length >= limit) break;
        }
      } catch (err) {
        if (isMissingStream(err)) return [];
        throw err;
      }
      if (out.length >= limit || got < LINK_PAGE) break;
    }
    if (out.length > 0) this.#linkHints.set(accountId, { position: out.at(-1)!.position, next: from });
    return out;
  }

  /** Links every event of $all after the index's checkpoint to its account's stream, step by step, to the end. */
  async #indexToEnd(): Promise<void> {
    let { position, revision } = await this.#indexCheckpoint();
    for (;;) {
      const page = await this.readAll({ after: position, limit: INDEX_PAGE });
      if (page.length === 0) return;
      const links = new Map<string, EventData[]>();
      for (const event of page) {
        const account = namedAccount(event.data) ?? (event.revision === 0n ? null : await this.#streamAccount(event.streamId));
        if (!account) continue;
        let list = links.get(account);
        if (!list) links.set(account, (list = []));
        list.push(binaryEvent({ type: LINK_TYPE, data: Buffer.from(`${event.revision}@${event.streamId}`), metadata: { position: String(event.position) } }));
      }
      for (const [account, events] of links) await this.#appendRaw(accountIndexStream(account), events, ANY);
      const reached = page.at(-1)!.position;
      // Another process may have moved the checkpoint meanwhile: what both linked is linked twice, which readers pass over.
      for (;;) {
        try {
          const result = await this.#appendRaw(ACCOUNT_INDEX_CHECKPOINT, [jsonEvent({ type: CHECKPOINT_TYPE, data: { position: String(reached) } })], revision);
          revision = result.nextExpectedRevision;
          position = reached;
          break;
        } catch (err) {
          if (!isWrongExpectedVersion(err)) throw err;
          const now = await this.#indexCheckpoint();
          revision = now.revision;
          if (now.position >= reached) {
            position = now.position;
            break;
          }
        }
      }
    }
  }

  /** How far the index reaches, and the checkpoint stream's revision (to append the next one after it). */
  async #indexCheckpoint(): Promise<{ position: bigint; revision: AppendStreamState }> {
    try {
      for await (const resolved of this.#client.readStream(ACCOUNT_INDEX_CHECKPOINT, leader({ direction: BACKWARDS, fromRevision: END, maxCount: 1 }))) {
        const event = resolved.event;
        if (!event) continue;
        const position = (event.data as { position?: unknown } | undefined)?.position;
        return { position: typeof position === 'string' && /^\d+$/.test(position) ? BigInt(position) : 0n, revision: event.revision };
      }
    } catch (err) {
      if (!isMissingStream(err)) throw err;
    }
    return { position: 0n, revision: NO_STREAM };
  }

  /** The account the first event of a stream names; null when it names none or the stream is gone. */
  async #streamAccount(streamId: string): Promise<string | null> {
    let account = this.#streamAccounts.get(streamId);
    if (account === undefined) {
      const [first] = await this.readStream(streamId, { fromRevision: 0n, maxCount: 1 });
      account = (first?.revision === 0n ? namedAccount(first.data) : undefined) ?? null;
      if (this.#streamAccounts.size >= STREAM_ACCOUNTS) this.#streamAccounts = new Map();
      this.#streamAccounts.set(streamId, account);
    }
    return account;
  }

  /** An append of the index's own events, tried again after a transient failure as appends are. */
  async #appendRaw(streamId: string, events: EventData[], streamState: AppendStreamState) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#client.appendToStream(streamId, events, { streamState });
      } catch (err) {
        const wait = appendRetryWait(err, attempt);
        if (wait === undefined || this.#closed) throw err;
        await delay(wait);
      }
    }
  }

  async readFeed(options: ReadAllOptions): Promise<FeedRecord[]> {
    return (await this.readAll(options)).map(({ data, metadata, ...event }) => ({ ...event, data: JSON.stringify(data), metadata: JSON.stringify(metadata) }));
  }

  subscribe({ after, batchSize }: SubscribeOptions): EventSubscription {
    this.#assertOpen();
    const subscription = new KurrentSubscription(this.#client, after, batchSize, (s) => {
      this.#subscriptions.delete(s);
    });
    this.#subscriptions.add(subscription);
    return subscription;
  }

  /**
   * Hard delete (tombstone): the stream can never be written again and reads
   * of it fail as deleted (mapped to an empty read). That suits erasure of
   * personal data: a soft delete would keep the stream's last event through
   * a scavenge, to remember its revision, and a response's stream holds only
   * one. A stream that never existed is tombstoned too (the server
   * accepts ANY on a missing stream); tombstoning an already tombstoned stream
   * fails with StreamDeleted (or StreamTombstoned on newer servers), which is
   * ignored.
   *
   * KurrentDB keeps the events in $all until a scavenge runs: reads of $all
   * bypass the index and its deletion checks, so deleted events stay readable
   * there (and reach subscriptions to $all) until a scavenge removes them
   * (documented on the server's "Deleting streams and events" page). The
   * tombstone record itself ($streamDeleted, carrying the stream name) is
   * never scavenged, so stream names must not hold content (a visitor's
   * stream is named by a keyed hash, no more).
   */
  async deleteStreams(streamIds: string[]): Promise<void> {
    this.#assertOpen();
    // One request per stream (the protocol has no batch delete); a few in flight at once.
    const queue = [...streamIds];
    const worker = async () => {
      for (let streamId = queue.shift(); streamId !== undefined; streamId = queue.shift()) {
        try {
          await this.#client.tombstoneStream(streamId, { expectedRevision: ANY });
        } catch (err) {
          if (!isMissingStream(err)) throw err;
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(DELETE_CONCURRENCY, queue.length) }, worker));
  }

  /**
   * Nothing to do at once: a tombstoned stream's events stay in the chunk
   * files (and readable through $all) until a scavenge runs on each node,
   * which `admin scavenge` asks the server for.
   */
  async expunge(): Promise<void> {
    this.#assertOpen();
  }

  /** Commit position of the newest non-system event, 0n when there is none. */
  async headPosition(): Promise<bigint> {
    this.#assertOpen();
    let from: ReadPosition = END;
    for (;;) {
      let got = 0;
      let last: Position | undefined;
      // A backwards read from a position returns only events before it, so
      // paging on from the last seen event always makes progress.
      for await (const resolved of this.#client.readAll(leader({
        direction: BACKWARDS,
        fromPosition: from,
        maxCount: HEAD_PAGE,
        filter: excludeSystemEvents(),
      }))) {
        got++;
        const event = resolved.event;
        if (!event?.position) continue;
        if (!event.type.startsWith('$') && !event.streamId.startsWith('$')) return event.position.commit;
        last = event.position;
      }
      if (got < HEAD_PAGE || last === undefined) return 0n;
      from = last;
    }
  }

  /** The newest record of the log, whatever its stream or type (0n on an empty log). */
  async endPosition(): Promise<bigint> {
    this.#assertOpen();
    for await (const resolved of this.#client.readAll(leader({ direction: BACKWARDS, fromPosition: END, maxCount: 1 }))) {
      const position = resolved.event?.position?.commit;
      if (position !== undefined) return position;
    }
    return 0n;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await Promise.allSettled([...this.#subscriptions].map((s) => s.close()));
    await this.#client.dispose();
  }

  #assertOpen(): void {
    if (this.#closed) throw new Error('KurrentDB event store is closed');
  }

  /** Fallback when an append reply carries no position: the position of the stream's last event. */
  async #lastPosition(streamId: string): Promise<bigint> {
    for await (const resolved of this.#client.readStream(streamId, leader({
      direction: BACKWARDS,
      fromRevision: END,
      maxCount: 1,
    }))) {
      const event = toStoredEvent(resolved);
      if (event && event.position >= 0n) return event.position;
    }
    throw new Error(`append to ${streamId}: KurrentDB reported no position for the appended events`);
  }
}

/**
 * Catch-up-then-live subscription to $all. Events are buffered from the
 * client's readable stream ('data' events) and handed out in batches of what
 * is buffered, up to batchSize; the stream is paused while the buffer is full.
 */
class KurrentSubscription implements EventSubscription {
  readonly #stream: AllStreamSubscription;
  readonly #after: bigint;
  readonly #batchSize: number;
  readonly #highWater: number;
  readonly #onClosed: (s: KurrentSubscription) => void;
  readonly #buffer: StoredEvent[] = [];
  #waiters: Array<() => void> = [];
  #paused = false;
  #failure: { error: unknown } | undefined;
  #ended = false;
  #closed = false;

  constructor(
    client: KurrentDBClient,
    after: bigint,
    batchSize: number,
    onClosed: (s: KurrentSubscription) => void,
  ) {
    this.#after = after;
    this.#batchSize = Math.max(1, Math.floor(batchSize));
    this.#highWater = Math.max(this.#batchSize * 4, 256);
    this.#onClosed = onClosed;
    // fromPosition is exclusive for subscribeToAll (the client's own tests
    // subscribe from an append's position and do not receive that event);
    // the event at `after` is still dropped below in case a server differs.
    this.#stream = client.subscribeToAll(leader({
      fromPosition: positionOf(after),
      resolveLinkTos: false,
      filter: excludeSystemEvents(),
    }));
    this.#stream.on('data', (resolved: AllStreamResolvedEvent) => this.#onData(resolved));
    this.#stream.on('error', (err: Error) => {
      if (this.#closed || this.#failure) return;
      this.#failure = { error: err };
      this.#wake();
    });
    const onEnd = () => {
      if (this.#closed) return;
      this.#ended = true;
      this.#wake();
    };
    this.#stream.on('end', onEnd);
    this.#stream.on('close', onEnd);
  }

  [Symbol.asyncIterator](): AsyncIterator<StoredEvent[]> {
    return {
      next: () => this.#next(),
      return: async () => {
        await this.close();
        return { value: undefined, done: true };
      },
    };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#buffer.length = 0;
    this.#wake();
    this.#onClosed(this);
    // unsubscribe() cancels the gRPC call once the call exists; do not hang
    // if it never came to be (e.g. the server could not be reached).
    await Promise.race([this.#stream.unsubscribe().catch(() => undefined), delay(UNSUBSCRIBE_WAIT_MS)]);
    this.#stream.destroy();
  }

  #onData(resolved: AllStreamResolvedEvent): void {
    if (this.#closed) return;
    const event = toStoredEvent(resolved);
    if (!event || event.position <= this.#after || isSystemEvent(event)) return;
    this.#buffer.push(event);
    if (this.#buffer.length >= this.#highWater && !this.#paused) {
      this.#paused = true;
      this.#stream.pause();
    }
    this.#wake();
  }

  async #next(): Promise<IteratorResult<StoredEvent[]>> {
    for (;;) {
      if (this.#closed) return { value: undefined, done: true };
      if (this.#buffer.length > 0) {
        const batch = this.#buffer.splice(0, this.#batchSize);
        if (this.#paused && this.#buffer.length <= this.#highWater / 2) {
          this.#paused = false;
          this.#stream.resume();
        }
        return { value: batch, done: false };
      }
      if (this.#failure) {
        const { error } = this.#failure;
        await this.close();
        throw error;
      }
      if (this.#ended) {
        await this.close();
        throw new Error('KurrentDB subscription to $all ended unexpectedly');
      }
      await new Promise<void>((resolve) => this.#waiters.push(resolve));
    }
  }

  #wake(): void {
    const waiters = this.#waiters;
    this.#waiters = [];
    for (const wake of waiters) wake();
  }
}

// ---------------------------------------------------------------------------
// Mapping

interface RecordedLike {
  streamId: string;
  id: string;
  revision: bigint;
  type: string;
  created: Date;
  data: unknown;
  metadata: unknown;
  position?: Position | undefined;
}

function toStoredEvent(resolved: { event?: RecordedLike | undefined; commitPosition?: bigint | undefined }): StoredEvent | undefined {
  const e = resolved.event;
  if (!e) return undefined;
  let position = e.position?.commit ?? resolved.commitPosition;
  // Stream reads on servers before 22.6 carry no position: -1n marks it unknown.
  if (position === undefined || position === UNKNOWN_POSITION) position = -1n;
  const created = e.created instanceof Date && !Number.isNaN(e.created.getTime()) ? e.created : new Date(0);
  return {
    id: e.id,
    streamId: e.streamId,
    revision: e.revision,
    position,
    type: e.type,
    data: toJsonObject(e.data),
    metadata: toJsonObject(e.metadata),
    recordedAt: created.toISOString(),
  };
}

/**
 * Events written by this adapter always hold JSON objects. Events written by
 * others may not: binary payloads that are not JSON become `{ $binary: base64 }`
 * and JSON values that are not objects become `{ value }`, so the feed never
 * stops on a foreign event.
 */
function toJsonObject(value: unknown): JsonObject {
  if (value instanceof Uint8Array) {
    if (value.length === 0) return {};
    const bytes = Buffer.from(value.buffer, value.byteOffset, value.byteLength);
    try {
      value = JSON.parse(bytes.toString('utf8'));
    } catch {
      return { $binary: bytes.toString('base64') };
    }
  }
  if (value === undefined || value === null) return {};
  if (typeof value === 'object' && !Array.isArray(value)) return value as JsonObject;
  return { value };
}

function isSystemEvent(event: StoredEvent): boolean {
  return event.type.startsWith('$') || event.streamId.startsWith('$');
}

/**
 * Every read and subscription asks for the leader. The client sends reads
 * through its Rust bridge, which picks a node as the connection string's
 * node preference says (random unless told) and reads from a follower unless
 * `requiresLeader` is set (its default is false, dist/streams/readStream.js
 * and readAll.js); a follower behind the leader would show a stream without
 * its last append, a feed without its head (a webhook delivery would take its
 * event for erased, the runner at start the store for another), and stale
 * loads. A follower asked so answers NotLeader and the client moves on to
 * the leader it names.
 */
export function leader<const T extends object>(options: T): T & { requiresLeader: true } {
  return { ...options, requiresLeader: true };
}

function positionOf(after: bigint): ReadPosition {
  return after <= 0n ? START : { commit: after, prepare: after };
}

function toStreamState(expected: ExpectedRevision): AppendStreamState {
  if (expected === 'no_stream') return NO_STREAM;
  if (expected === 'any') return ANY;
  return expected;
}

/** The client reports 'no_stream' or a revision; negative revisions (no stream, deleted) mean no stream. */
function toActual(actual: bigint | 'no_stream' | string): bigint | 'no_stream' {
  return typeof actual === 'bigint' && actual >= 0n ? actual : 'no_stream';
}

function isWrongExpectedVersion(err: unknown): err is WrongExpectedVersionError {
  return err instanceof WrongExpectedVersionError || (err as { type?: unknown } | null)?.type === 'wrong-expected-version';
}

/** Tombstoned: StreamDeleted from the v1 API and the bridge, StreamTombstoned from the v2 API. */
function isDeletedStream(err: unknown): boolean {
  if (err instanceof StreamDeletedError || err instanceof StreamTombstonedError) return true;
  const type = (err as { type?: unknown } | null)?.type;
  return type === 'stream-deleted' || type === 'stream-tombstoned';
}

/** The server's limit when it refused an append as too large (the whole append, or one record of it). */
function appendLimit(err: unknown): number | undefined {
  if (err instanceof MaxAppendSizeExceededError) return err.maxAppendSize;
  if (err instanceof AppendRecordSizeExceededError) return Number(err.maxSize);
  return undefined;
}

function isMissingStream(err: unknown): boolean {
  if (
    err instanceof StreamNotFoundError ||
    err instanceof StreamDeletedError ||
    err instanceof StreamTombstonedError
  ) {
    return true;
  }
  const type = (err as { type?: unknown } | null)?.type;
  return type === 'stream-not-found' || type === 'stream-deleted' || type === 'stream-tombstoned';
}

// ---------------------------------------------------------------------------
// Connection string

/**
 * Query keys the client's connection string parser knows (compared the way it
 * compares them: case-insensitive, without '-' and '_'). An unknown key makes
 * the client print the whole connection string, credentials included, with
 * console.warn, so unknown keys are refused here instead.
 */
const KNOWN_KEYS = new Set([
  'usercertfile',
  'userkeyfile',
  'maxdiscoverattempts',
  'connectionname',
  'defaultdeadline',
  'discoveryinterval',
  'gossiptimeout',
  'nodepreference',
  'tls',
  'tlsverifycert',
  'tlscafile',
  'throwonappendfailure',
  'keepaliveinterval',
  'keepalivetimeout',
]);

/**
 * Schemes the client parses (dist/Client/parseConnectionString.js, and the
 * Rust bridge accepts them too). `esdb` works like `kurrentdb` but makes the
 * client print a deprecation warning, so it is rewritten.
 */
const SCHEMES: Record<string, string> = {
  esdb: 'kurrentdb',
  'esdb+discover': 'kurrentdb+discover',
  kurrentdb: 'kurrentdb',
  'kurrentdb+discover': 'kurrentdb+discover',
  kurrent: 'kurrent',
  'kurrent+discover': 'kurrent+discover',
  kdb: 'kdb',
  'kdb+discover': 'kdb+discover',
};

/** What the adapter sets when the connection string does not say. */
export interface ConnectionDefaults {
  /**
   * Every call but a subscription gives up after this long (the client's
   * `defaultDeadline`, 10 s unless told): a request waits on no node longer.
   */
  deadlineMs?: number;
}

/** The deadline of each call when neither the connection string nor the configuration names one. */
export const DEFAULT_DEADLINE_MS = 5_000;

interface PreparedConnection {
  connectionString: string;
  /** The connection string with its credentials masked. */
  redacted: string;
  /** Masks the credentials wherever they occur in a text. */
  redact: (text: string) => string;
}

/**
 * The connection string the client is given: the scheme the client prefers,
 * unknown options refused, the client's non-throwing append mode removed,
 * and, unless the string says otherwise, `nodePreference=leader` (so the
 * channel of appends and subscriptions and the bridge of reads both connect
 * to the leader of a cluster first) and `defaultDeadline` (see
 * ConnectionDefaults).
 */
export function prepareConnectionString(url: string, defaults: ConnectionDefaults = {}): PreparedConnection {
  const trimmed = url.trim().replace(/\/+$/, '');
  const scheme = /^([^:/?#]+):\/\//.exec(trimmed);
  // Credentials are matched with the client's own rule: `user:password@` right after the scheme.
  const rest = scheme ? trimmed.slice(scheme[0].length) : trimmed;
  const credentials = /^([^:]+):([^@]+)@/.exec(rest);
  const secrets = new Set<string>();
  if (credentials) {
    secrets.add(credentials[0]);
    for (const raw of [credentials[1]!, credentials[2]!]) {
      secrets.add(raw);
      try {
        secrets.add(decodeURIComponent(raw));
      } catch {
        // not percent-encoded
      }
    }
  }
  const redact = (text: string): string => {
    let out = text;
    for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
      if (secret.length >= 3) out = out.split(secret).join('***');
    }
    return out;
  };
  const afterCredentials = credentials ? rest.slice(credentials[0].length) : rest;
  const redacted = `${scheme ? scheme[0] : ''}${credentials ? '***:***@' : ''}${afterCredentials}`;

  const schemeName = scheme?.[1]?.toLowerCase();
  const mapped = schemeName === undefined ? undefined : SCHEMES[schemeName];
  if (mapped === undefined) {
    throw new Error(
      `KurrentDB: unsupported connection string ${redacted}: expected one of ${Object.keys(SCHEMES)
        .map((s) => `${s}://`)
        .join(', ')}`,
    );
  }

  const q = afterCredentials.indexOf('?');
  const hosts = q < 0 ? afterCredentials : afterCredentials.slice(0, q);
  const params = q < 0 ? [] : afterCredentials.slice(q + 1).split('&');
  const kept: string[] = [];
  const given = new Set<string>();
  for (const param of params) {
    const key = param.split('=', 1)[0]!;
    const flat = key.trim().toLowerCase().replace(/[_-]/g, '');
    if (!KNOWN_KEYS.has(flat) && key !== 'dnsDiscover') {
      throw new Error(`KurrentDB: unknown option "${redact(key)}" in connection string ${redacted}`);
    }
    // The adapter must throw on a failed expected-revision check, so the
    // client's non-throwing mode is never turned on.
    if (flat === 'throwonappendfailure') continue;
    given.add(flat);
    kept.push(param);
  }
  if (!given.has('nodepreference')) kept.push('nodePreference=leader');
  if (!given.has('defaultdeadline')) kept.push(`defaultDeadline=${defaults.deadlineMs ?? DEFAULT_DEADLINE_MS}`);
  const connectionString = `${mapped}://${credentials ? credentials[0] : ''}${hosts}${
    kept.length > 0 ? `?${kept.join('&')}` : ''
  }`;
  return { connectionString, redacted, redact };
}

// ---------------------------------------------------------------------------
// Small helpers

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  // The client's error classes keep name 'Error'; their class name says more.
  const name = err.name === 'Error' && err.constructor.name ? err.constructor.name : err.name;
  const text = err.message && err.message !== name ? `${name}: ${err.message}` : name;
  return err instanceof UnavailableError
    ? `${text} (is the server running and reachable, and does the tls setting match it?)`
    : text;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

async function withTimeout<T>(promise: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
