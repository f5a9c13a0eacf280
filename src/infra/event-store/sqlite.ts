import { EventEmitter } from 'node:events';
import { statfsSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Statement } from 'better-sqlite3';
import { createEventIdGenerator } from '../ids.js';
import { pause } from './linger.js';
import { openDatabase, truncateWriteAheadLog, type SqliteDatabase, type StoreLogger } from '../sqlite.js';
import {
  AppendTooLarge,
  MAX_APPEND_BYTES,
  RevisionLimitReached,
  WrongExpectedRevision,
  storedJson,
  storedWhole,
  encodedSize,
  type AppendResult,
  type EventStore,
  type EventSubscription,
  type ExpectedRevision,
  namedAccount,
  type FeedRecord,
  type NewEvent,
  type ReadAllOptions,
  type ReadStreamOptions,
  type StoredEvent,
  type StreamAppend,
  type StreamState,
  type SubscribeOptions,
} from './port.js';

/**
 * How often a live subscription looks for events appended by another
 * process: a command on an `api` process waits for the projector to find its
 * event here, so this is part of its reply time (an empty look costs a few
 * microseconds).
 */
const POLL_MS = 10;

interface EventRow {
  position: number;
  id: string;
  stream_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
  recorded_at: string;
}

const toStored = (row: EventRow): StoredEvent => ({
  id: row.id,
  streamId: row.stream_id,
  revision: storedWhole(row.revision, 'revision', row.position, row.stream_id),
  position: BigInt(row.position),
  type: row.type,
  data: storedJson(row.data, 'data', row.position, row.stream_id) as StoredEvent['data'],
  metadata: storedJson(row.metadata, 'metadata', row.position, row.stream_id) as StoredEvent['metadata'],
  recordedAt: row.recorded_at,
  dataText: row.data,
});

/** The columns of the feed's statements, in this order. */
type FeedRow = [position: number, id: string, streamId: string, revision: number, type: string, data: string, metadata: string, recordedAt: string];

const feedToStored = ([position, id, streamId, revision, type, data, metadata, recordedAt]: FeedRow): StoredEvent => ({
  id,
  streamId,
  revision: storedWhole(revision, 'revision', position, streamId),
  position: BigInt(position),
  type,
  data: storedJson(data, 'data', position, streamId) as StoredEvent['data'],
  metadata: storedJson(metadata, 'metadata', position, streamId) as StoredEvent['metadata'],
  recordedAt,
  dataText: data,
});

/** An event to append with its data and metadata as JSON, written once for the size check and the row. */
interface EncodedEvent {
  type: string;
  data: string;
  metadata: string;
  /** The account the data names (see readAccount). */
  account: string | undefined;
}

/** A row this connection committed, kept for the live feed (see `tail`); parsed on first read. */
interface TailEntry {
  row: FeedRow;
  stored?: StoredEvent;
}

/** The feed after a position, in order; `limited` writes its LIMIT in. */
const FEED_PAGE = 'SELECT position, id, stream_id, revision, type, data, metadata, recorded_at FROM events WHERE position > ? ORDER BY position';

/** One account's events after a position, in order, by the index; `limited` writes its LIMIT in. */
const ACCOUNT_PAGE =
  'SELECT e.position, e.id, e.stream_id, e.revision, e.type, e.data, e.metadata, e.recorded_at FROM account_events a JOIN events e ON e.position = a.position WHERE a.account_id = ? AND a.position > ? ORDER BY a.position';

/** The account a row's data names, in SQL: a hand-edited row that is no JSON names none rather than failing the statement. */
const namedIn = (data: string) => `CASE WHEN json_valid(${data}) THEN CASE WHEN json_type(${data}, '$.account_id') = 'text' THEN nullif(json_extract(${data}, '$.account_id'), '') END END`;

/**
 * Indexes the events between two positions (inclusive) by account, by the
 * rule readAccount states: what was stored before the index existed, and
 * what importFeed copies in.
 */
const INDEX_RANGE = `INSERT OR IGNORE INTO account_events (account_id, position)
  SELECT account_id, position FROM (
    SELECT e.position AS position, coalesce(${namedIn('e.data')}, (SELECT ${namedIn('f.data')} FROM events f WHERE f.stream_id = e.stream_id AND f.revision = 0)) AS account_id
    FROM events e WHERE e.position BETWEEN ? AND ?
  ) WHERE account_id IS NOT NULL`;

/** Streams whose first event's account this connection keeps (it never changes), before the map is emptied. */
const STREAM_ACCOUNTS = 10_000;

/** Events of the live feed kept in memory, newest last. */
const TAIL_EVENTS = 4096;

/** One stream's part of an append, encoded. */
interface EncodedPart {
  streamId: string;
  events: EncodedEvent[];
  expected: ExpectedRevision;
  below?: bigint | undefined;
}

interface PendingAppend {
  parts: EncodedPart[];
  resolve(result: AppendResult): void;
  reject(error: unknown): void;
}

export interface SqliteEventStoreOptions {
  /** The most one append may carry (appendSize); KurrentDB's default unless a test needs less. */
  maxAppendBytes?: number;
  /** SQLite's max_page_count on this connection: a file that cannot grow past it, as on a full disk (tests). */
  maxPageCount?: number;
  /** How long a write waits for another writer's lock before it fails as unavailable (STORE_TIMEOUT_MS). */
  waitMs?: number;
}

/**
 * Positions start at 1 and only grow: a row below that was put there by
 * hand. The feed reads after a position (0 for the start), so no
 * projection, seal or verify would see it, while the stream's commands
 * would load it: such a store is not opened, and the message names it.
 * Nor is one holding a position past 2^53 - 1, or whose counter of
 * positions given is there: JavaScript numbers round such a position, and a
 * read after the rounded one meets the same event again, for ever.
 */
function refuseHiddenEvents(db: SqliteDatabase): void {
  const hidden = db.prepare('SELECT position, stream_id, type FROM events WHERE position < 1 ORDER BY position LIMIT 1').get() as
    | { position: number; stream_id: string; type: string }
    | undefined;
  if (hidden) {
    throw new Error(
      `the event store holds an event at position ${hidden.position} (stream ${hidden.stream_id}, ${hidden.type}), below the first position it gives (1): the file was edited, and no feed or seal covers it`,
    );
  }
  const beyond = db.prepare(`SELECT CAST(position AS TEXT) AS position, stream_id, type FROM events WHERE position > ${Number.MAX_SAFE_INTEGER} ORDER BY position LIMIT 1`).get() as
    | { position: string; stream_id: string; type: string }
    | undefined;
  if (beyond) {
    throw new Error(
      `the event store holds an event at position ${beyond.position} (stream ${beyond.stream_id}, ${beyond.type}), past the last position it can give (${Number.MAX_SAFE_INTEGER}): the file was edited`,
    );
  }
  const counter = db.prepare(`SELECT CAST(seq AS TEXT) AS seq FROM sqlite_sequence WHERE name = 'events' AND seq >= ${Number.MAX_SAFE_INTEGER}`).get() as { seq: string } | undefined;
  if (counter) throw new Error(`the event store's counter of positions given stands at ${counter.seq}, where the next position would pass the last it can give (${Number.MAX_SAFE_INTEGER}): the file was edited`);
}

/**
 * The index of events by account (readAccount): made, and filled from the
 * events already stored, the first time a store of this version opens the
 * file, in one transaction that holds the write lock, so that a second
 * process opening it meanwhile finds it whole. One read of the history
 * (about a second for a million events); from then on every append indexes
 * its own events in its transaction.
 */
function indexAccounts(db: SqliteDatabase): void {
  const made = () => db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'account_events'").get() !== undefined;
  if (made()) return;
  db.transaction(() => {
    if (made()) return;
    db.exec('CREATE TABLE account_events (account_id TEXT NOT NULL, position INTEGER NOT NULL, PRIMARY KEY (account_id, position)) WITHOUT ROWID');
    db.prepare(INDEX_RANGE).run(0, Number.MAX_SAFE_INTEGER);
  }).immediate();
}

/** Free space below this on the data directory's file system counts as full: SQLite needs room for its log and its pages. */
const MIN_FREE_BYTES = 4 * 1024 * 1024;

/**
 * The embedded event store: one table in the shared SQLite file, written with
 * synchronous=FULL so an acknowledged append is on disk. AUTOINCREMENT keeps
 * positions from ever being reused after a stream is deleted, and the names
 * of deleted streams are kept so that they refuse appends, as KurrentDB's
 * tombstones do (streams deleted before that table existed are not known).
 *
 * Group commit: appends that arrive in the same turn of the event loop are
 * written in one transaction, so they share one fsync; each runs in its own
 * savepoint, so one that fails its revision check leaves the others alone.
 * An append to several streams is one of them: all its parts or none.
 * None is acknowledged before the commit is on disk.
 */
export class SqliteEventStore implements EventStore {
  readonly kind = 'sqlite' as const;
  private readonly appended = new EventEmitter();
  private pending: PendingAppend[] = [];
  /**
   * The rows this connection committed last, at consecutive positions with
   * nothing of another writer between them: the live subscriptions (the
   * projections, erasure, webhooks) each take the events they were woken for
   * from here, parsed once, rather than each read and parse them again.
   * Emptied when another writer's events come between, and by any delete.
   */
  private tail: TailEntry[] = [];
  /** One append, all its parts, in a savepoint of the batch's transaction. */
  private readonly appendOne: (parts: EncodedPart[]) => AppendResult & { rows: FeedRow[] };
  private readonly statements: {
    lastRevision: Statement<[string], { revision: number | null }>;
    streamNow: Statement<{ stream: string }, { deleted: number | null; revision: number | null }>;
    deleted: Statement<[string], { stream_id: string }>;
    markDeleted: Statement<[string]>;
    end: Statement<[], { seq: number }>;
    insert: Statement<[string, string, number, string, string, string, string]>;
    indexEvent: Statement<[string, number]>;
    firstAccount: Statement<[string], { account: string | null }>;
    unindexStream: Statement<[string]>;
    deleteStream: Statement<[string]>;
    head: Statement<[], { position: number | null }>;
  };

  private readonly maxAppendBytes: number;
  private readonly eventId = createEventIdGenerator();
  /** Reads by their LIMIT, see `limited`. */
  private readonly byLimit = new Map<string, Statement>();
  /** Each stream's account as its first event names it (null: none), for the events of it that name none. */
  private streamAccounts = new Map<string, string | null>();

  constructor(
    private readonly db: SqliteDatabase,
    private readonly logger?: StoreLogger,
    options: SqliteEventStoreOptions = {},
  ) {
    this.maxAppendBytes = options.maxAppendBytes ?? MAX_APPEND_BYTES;
    if (options.maxPageCount !== undefined) db.pragma(`max_page_count = ${Math.trunc(options.maxPageCount)}`);
    db.exec(`
      CREATE TABLE IF NOT EXISTS events (
        position INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        stream_id TEXT NOT NULL,
        revision INTEGER NOT NULL,
        type TEXT NOT NULL,
        data TEXT NOT NULL,
        metadata TEXT NOT NULL,
        recorded_at TEXT NOT NULL,
        UNIQUE (stream_id, revision)
      );
      CREATE TABLE IF NOT EXISTS deleted_streams (stream_id TEXT PRIMARY KEY)`);
    indexAccounts(db);
    this.statements = {
      lastRevision: db.prepare('SELECT max(revision) AS revision FROM events WHERE stream_id = ?'),
      // Both facts an append checks, in one step: every append runs it under the write lock.
      streamNow: db.prepare(
        'SELECT (SELECT 1 FROM deleted_streams WHERE stream_id = :stream) AS deleted, (SELECT max(revision) FROM events WHERE stream_id = :stream) AS revision',
      ),
      deleted: db.prepare('SELECT stream_id FROM deleted_streams WHERE stream_id = ?'),
      markDeleted: db.prepare('INSERT OR IGNORE INTO deleted_streams (stream_id) VALUES (?)'),
      end: db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'events'"),
      insert: db.prepare(
        'INSERT INTO events (id, stream_id, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      ),
      indexEvent: db.prepare('INSERT OR IGNORE INTO account_events (account_id, position) VALUES (?, ?)'),
      firstAccount: db.prepare(`SELECT ${namedIn('data')} AS account FROM events WHERE stream_id = ? AND revision = 0`),
      unindexStream: db.prepare('DELETE FROM account_events WHERE position IN (SELECT position FROM events WHERE stream_id = ?)'),
      deleteStream: db.prepare('DELETE FROM events WHERE stream_id = ?'),
      head: db.prepare('SELECT max(position) AS position FROM events'),
    };
    this.appended.setMaxListeners(0);
    this.appendOne = db.transaction(this.appendTransaction);
    refuseHiddenEvents(db);
  }

  async hasRoom(): Promise<boolean> {
    const { bavail, bsize } = statfsSync(dirname(this.db.name));
    if (bavail * bsize < MIN_FREE_BYTES) return false;
    // A write that needs new pages, rolled back: refused as an append would be while the file cannot grow.
    if (this.db.inTransaction) return true;
    try {
      this.db.exec('SAVEPOINT room_probe; CREATE TABLE room_probe (filler BLOB); INSERT INTO room_probe VALUES (zeroblob(65536)); ROLLBACK TO room_probe; RELEASE room_probe');
      return true;
    } catch (error) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK TO room_probe; RELEASE room_probe');
      if ((error as { code?: string }).code === 'SQLITE_FULL') return false;
      throw error;
    }
  }

  private readonly appendTransaction = (parts: EncodedPart[]) => {
    const recordedAt = new Date().toISOString();
    let revision = -1;
    let position = 0;
    const rows: FeedRow[] = [];
    for (const { streamId, events, expected, below } of parts) {
      const now = this.statements.streamNow.get({ stream: streamId });
      if (now?.deleted) throw new WrongExpectedRevision(streamId, expected, 'deleted');
      const last = now?.revision ?? null;
      const actual = last === null ? ('no_stream' as const) : BigInt(last);
      if (expected === 'no_stream' ? actual !== 'no_stream' : expected !== 'any' && actual !== expected) {
        throw new WrongExpectedRevision(streamId, expected, actual);
      }
      // A condition only: checked, nothing stored, and not what the append answers.
      if (events.length === 0) continue;
      revision = last ?? -1;
      if (below !== undefined && BigInt(revision + events.length) >= below) throw new RevisionLimitReached(streamId, below);
      const first = last === null ? (events[0]!.account ?? null) : undefined;
      for (const event of events) {
        revision += 1;
        const id = this.eventId();
        const info = this.statements.insert.run(id, streamId, revision, event.type, event.data, event.metadata, recordedAt);
        position = Number(info.lastInsertRowid);
        const account = event.account ?? (first !== undefined ? first : this.streamAccount(streamId));
        if (account !== null) this.statements.indexEvent.run(account, position);
        rows.push([position, id, streamId, revision, event.type, event.data, event.metadata, recordedAt]);
      }
    }
    return { nextRevision: BigInt(revision), position: BigInt(position), rows };
  };

  readonly atomicAcrossStreams = true;

  append(streamId: string, events: NewEvent[], expectedRevision: ExpectedRevision): Promise<AppendResult> {
    return this.appendToStreams([{ streamId, events, expected: expectedRevision }]);
  }

  appendToStreams(parts: StreamAppend[]): Promise<AppendResult> {
    if (parts.length === 0) return Promise.reject(new Error('appendToStreams needs at least one part'));
    // A part without events is a condition on its stream (see StreamAppend); some part must append.
    if (parts.every((part) => part.events.length === 0)) return Promise.reject(new Error('append needs at least one event'));
    const encoded: EncodedPart[] = [];
    for (const { streamId, events, expected, below } of parts) {
      const rows: EncodedEvent[] = [];
      let size = 0;
      for (const event of events) {
        const row = { type: event.type, data: JSON.stringify(event.data), metadata: JSON.stringify(event.metadata), account: namedAccount(event.data) };
        size += encodedSize(row);
        rows.push(row);
      }
      if (size > this.maxAppendBytes) return Promise.reject(new AppendTooLarge(streamId, this.maxAppendBytes));
      encoded.push({ streamId, events: rows, expected, below });
    }
    return new Promise((resolve, reject) => {
      if (this.pending.push({ parts: encoded, resolve, reject }) === 1) setImmediate(this.flush);
    });
  }

  private readonly flush = () => {
    const batch = this.pending;
    this.pending = [];
    const outcomes: Array<{ result: AppendResult & { rows: FeedRow[] } } | { error: unknown }> = [];
    /**
     * An error after which SQLite rolled back the whole transaction, not just
     * the savepoint (SQLITE_FULL, an I/O error): the appends before it are
     * gone, and those after it would each commit on their own, stored while
     * their callers are told they failed. None is tried; all get this error.
     */
    let fatal: unknown;
    try {
      // IMMEDIATE takes the write lock before the revision checks, so another
      // process cannot slip an event in between a check and its insert.
      this.db.transaction(() => {
        for (const item of batch) {
          try {
            // Nested: a savepoint, rolled back alone when this append fails.
            outcomes.push({ result: this.appendOne(item.parts) });
          } catch (error) {
            outcomes.push({ error });
            if (!this.db.inTransaction) {
              fatal = error;
              break;
            }
          }
        }
      }).immediate();
    } catch (error) {
      // Streams this batch began are gone again: what was kept of their first events goes too.
      this.streamAccounts = new Map();
      for (const item of batch) item.reject(fatal ?? error);
      return;
    }
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if ('result' in outcome) {
        const { nextRevision, position, rows } = outcome.result;
        this.keep(rows);
        item.resolve({ nextRevision, position });
      } else item.reject(outcome.error);
    });
    this.appended.emit('append');
  };

  /** The account a stream's first event names, kept once read (a rolled-back append may leave one for a stream that never came to be: no reader asks for it). */
  private streamAccount(streamId: string): string | null {
    let account = this.streamAccounts.get(streamId);
    if (account === undefined) {
      account = this.statements.firstAccount.get(streamId)?.account ?? null;
      if (this.streamAccounts.size >= STREAM_ACCOUNTS) this.streamAccounts = new Map();
      this.streamAccounts.set(streamId, account);
    }
    return account;
  }

  /** Adds committed rows to the tail; a gap before them (another writer, a rolled-back append) starts it anew. */
  private keep(rows: FeedRow[]): void {
    for (const row of rows) {
      const last = this.tail[this.tail.length - 1];
      if (last && last.row[0] + 1 !== row[0]) this.tail = [];
      this.tail.push({ row });
    }
    if (this.tail.length > TAIL_EVENTS) this.tail = this.tail.slice(this.tail.length - TAIL_EVENTS / 2);
  }

  /**
   * The events after `after` from the tail, when it holds the one right after
   * it: every position from there to its end is then in it, as none of
   * another writer can fall between positions one commit of this connection
   * took. Undefined when the store must be read.
   */
  private fromTail(after: number, limit: number): StoredEvent[] | undefined {
    const first = this.tail[0];
    if (!first) return undefined;
    const start = after + 1 - first.row[0];
    if (start < 0 || start >= this.tail.length) return undefined;
    const end = Math.min(this.tail.length, start + limit);
    const out: StoredEvent[] = new Array(end - start);
    for (let i = start; i < end; i++) {
      const entry = this.tail[i]!;
      // Frozen: the one object goes to every live subscription (see EventCatalog.parse).
      out[i - start] = entry.stored ??= Object.freeze(feedToStored(entry.row));
    }
    return out;
  }

  /**
   * The statement with its LIMIT written in: SQLite plans a statement anew
   * at every run whose LIMIT is a bound parameter, which costs several times
   * the read itself, and every submission reads its object's stream. The
   * limits the code asks for are few; the map is emptied should they not be.
   */
  private limited<P extends unknown[]>(sql: string, limit: number | undefined): Statement<P, EventRow> {
    const n = limit !== undefined && Number.isSafeInteger(limit) && limit >= 0 ? limit : -1;
    const key = `${sql} LIMIT ${n}`;
    let statement = this.byLimit.get(key);
    if (!statement) {
      if (this.byLimit.size >= 64) this.byLimit.clear();
      statement = this.db.prepare(key);
      this.byLimit.set(key, statement);
    }
    return statement as Statement<P, EventRow>;
  }

  /**
   * A page of the feed, as arrays (the projections and verify read the whole
   * history through here, and named rows cost a third of the read), by
   * `limited` as streams are read: the live
   * subscriptions read a page after every commit, and most of those reads
   * find nothing, where planning anew would be most of the cost.
   */
  private feedPage(after: bigint, limit: number): FeedRow[] {
    const page = this.limited<[number]>(FEED_PAGE, limit) as unknown as Statement<[number], FeedRow>;
    return page.raw(true).all(Number(after));
  }

  async readStream(streamId: string, options: ReadStreamOptions = {}): Promise<StoredEvent[]> {
    const from = Number(options.fromRevision ?? 0n);
    return this.limited<[string, number]>('SELECT * FROM events WHERE stream_id = ? AND revision >= ? ORDER BY revision', options.maxCount).all(streamId, from).map(toStored);
  }

  async streamState(streamId: string): Promise<StreamState> {
    // One snapshot for both reads: a delete cannot fall between them.
    return this.db.transaction((): StreamState => {
      if (this.statements.deleted.get(streamId)) return 'deleted';
      const last = this.statements.lastRevision.get(streamId)?.revision ?? null;
      return last === null ? 'no_stream' : BigInt(last);
    })();
  }

  async readFeed(options: ReadAllOptions): Promise<FeedRecord[]> {
    const rows = this.feedPage(options.after ?? 0n, options.limit);
    const out: FeedRecord[] = new Array(rows.length);
    for (let i = 0; i < rows.length; i++) {
      const [position, id, streamId, revision, type, data, metadata, recordedAt] = rows[i]!;
      out[i] = { id, streamId, revision: storedWhole(revision, 'revision', position, streamId), position: BigInt(position), type, data, metadata, recordedAt };
    }
    return out;
  }

  async readAll(options: ReadAllOptions): Promise<StoredEvent[]> {
    return this.readAllNow(options.after ?? 0n, options.limit);
  }

  async readAccount(accountId: string, options: ReadAllOptions): Promise<StoredEvent[]> {
    const page = this.limited<[string, number]>(ACCOUNT_PAGE, options.limit) as unknown as Statement<[string, number], FeedRow>;
    return page.raw(true).all(accountId, Number(options.after ?? 0n)).map(feedToStored);
  }

  private readAllNow(after: bigint, limit: number): StoredEvent[] {
    return this.feedPage(after, limit).map(feedToStored);
  }

  subscribe({ after, batchSize }: SubscribeOptions): EventSubscription {
    let closed = false;
    let wake: (() => void) | undefined;
    const onAppend = () => wake?.();
    const store = this;
    async function* batches(): AsyncGenerator<StoredEvent[]> {
      store.appended.on('append', onAppend);
      let from = after;
      try {
        while (!closed) {
          const batch = store.fromTail(Number(from), batchSize) ?? store.readAllNow(from, batchSize);
          if (batch.length > 0) {
            from = batch[batch.length - 1]!.position;
            yield batch;
            continue;
          }
          const rest = pause(POLL_MS);
          wake = rest.wake;
          await rest.done;
          wake = undefined;
        }
      } finally {
        store.appended.off('append', onAppend);
      }
    }
    const iterator = batches();
    return {
      [Symbol.asyncIterator]: () => iterator,
      close: async () => {
        closed = true;
        wake?.();
      },
    };
  }

  /**
   * Copies events as another store holds them, positions, ids and times
   * kept, in one transaction: a point-in-time copy (`admin rebuild --until`)
   * whose seals still verify. Not part of the port: only this store is made
   * that way.
   */
  importFeed(records: FeedRecord[]): void {
    this.tail = [];
    const insert = this.db.prepare(
      'INSERT INTO events (position, id, stream_id, revision, type, data, metadata, recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    const index = this.db.prepare(INDEX_RANGE);
    this.db.transaction(() => {
      for (const r of records) insert.run(r.position, r.id, r.streamId, r.revision, r.type, r.data, r.metadata, r.recordedAt);
      if (records.length > 0) index.run(Number(records[0]!.position), Number(records.at(-1)!.position));
    })();
  }

  /**
   * Replaces the data of stored events, each only if it still holds what it
   * held when read (an erasure may have deleted it since), and moves the
   * named checkpoint to `through`, in one transaction: a process that
   * rewrites the history in pages (`admin encrypt-existing`) resumes after
   * the last page it committed. The old text's bytes are zeroed in their
   * pages (secure_delete); `expunge` clears the log of them. Not part of the
   * port: only this store can change what it holds.
   */
  rewrite(name: string, updates: ReadonlyArray<{ position: bigint; before: string; data: string }>, through: bigint): number {
    this.tail = [];
    this.db.exec('CREATE TABLE IF NOT EXISTS rewrite_checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL)');
    const update = this.db.prepare('UPDATE events SET data = ? WHERE position = ? AND data = ?');
    const mark = this.db.prepare('INSERT INTO rewrite_checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position');
    return this.db
      .transaction(() => {
        let changed = 0;
        for (const { position, before, data } of updates) changed += update.run(data, position, before).changes;
        mark.run(name, through);
        return changed;
      })
      .immediate();
  }

  /** Where `rewrite` of that name stopped: 0 before it began. */
  rewriteCheckpoint(name: string): bigint {
    this.db.exec('CREATE TABLE IF NOT EXISTS rewrite_checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL)');
    const row = this.db.prepare('SELECT position FROM rewrite_checkpoints WHERE name = ?').get(name) as { position: number } | undefined;
    return BigInt(row?.position ?? 0);
  }

  /** In one transaction: one fsync for the lot, rather than one per stream. */
  async deleteStreams(streamIds: string[]): Promise<void> {
    this.deleteMany(streamIds);
  }

  private readonly deleteMany = (streamIds: string[]) => {
    this.tail = [];
    this.db.transaction(() => {
      for (const streamId of streamIds) {
        this.statements.unindexStream.run(streamId);
        this.statements.deleteStream.run(streamId);
        this.statements.markDeleted.run(streamId);
      }
    }).immediate();
  };

  /**
   * Deleted rows are zeroed in their pages (secure_delete), but the log still
   * holds the page versions from before the delete until it is checkpointed.
   */
  async expunge(): Promise<void> {
    if (!(await truncateWriteAheadLog(this.db))) {
      this.logger?.warn({ store: 'sqlite' }, 'another connection holds an older snapshot: erased events stay in the write-ahead log until the next checkpoint (run `admin scavenge` to retry)');
    }
  }

  /** How many events the store holds (not part of the port: verify plans its reading by it). */
  countEvents(): number {
    return (this.db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  }

  async headPosition(): Promise<bigint> {
    return BigInt(this.statements.head.get()?.position ?? 0);
  }

  async endPosition(): Promise<bigint> {
    return BigInt(this.statements.end.get()?.seq ?? 0);
  }

  async close(): Promise<void> {
    this.appended.removeAllListeners();
    if (this.db.open) this.db.close();
  }
}

export function openSqliteEventStore(dataDir: string, logger?: StoreLogger, options?: SqliteEventStoreOptions): SqliteEventStore {
  const db = openDatabase(dataDir, 'FULL', options?.waitMs);
  try {
    return new SqliteEventStore(db, logger, options);
  } catch (error) {
    db.close();
    throw error;
  }
}
