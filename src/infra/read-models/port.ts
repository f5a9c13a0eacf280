/**
 * The read-model port: the few document operations projections and queries
 * need. Two adapters (embedded SQLite, MongoDB) and one contract suite
 * (test/contracts/read-models.ts).
 *
 * Documents are flat-ish JSON objects with a string `id`. Collection and field
 * names come from code, never from a request, and are checked against NAME.
 * Filter values are plain scalars, so nothing a client sends can become an
 * operator.
 */

export type Scalar = string | number | boolean | null;
export type Doc = { id: string; [field: string]: unknown };
/** Equality on top-level fields, all of which must match. */
export type Filter = Record<string, Scalar>;
export type SortSpec = Array<[field: string, direction: 1 | -1]>;

export interface CollectionSpec {
  name: string;
  /** Compound indexes as lists of top-level field names. */
  indexes: string[][];
  /**
   * Ranks the documents that share a value of this (string) field 1..n, in
   * the order they were first put, and keeps the ranks dense when documents
   * are deleted. `newestFirst` then reads any page by rank, so page 1000
   * costs what page 1 costs. The field cannot change once a document is in.
   */
  rankWithin?: string;
  /**
   * Keeps every field the indexes name in a column of its own beside the
   * document, where the store has columns (SQLite): a put then indexes the
   * values it was handed instead of reading them back out of the JSON, which
   * a collection filled by the million (responses, in a rebuild) pays for at
   * every put. A store of documents (MongoDB) has nothing to change for it.
   */
  indexedColumns?: boolean;
  /**
   * Documents of a kilobyte or more (responses, with their sealed content).
   * Where a store keeps rows in a tree ordered by their id (SQLite's tables
   * without a rowid), a row that large spills into an overflow page of its
   * own, so each document takes a page or more: such a collection's rows
   * are packed in the order they were put, with the id indexed beside them,
   * which took less than half the pages (a rebuild writes each one twice,
   * to the log and to the file). A store that made the
   * collection before keeps its layout until a rebuild makes it anew. The
   * order of documents found without a sort is not the ids' in such a
   * collection: its queries sort (and break ties by the id). A store of
   * documents (MongoDB) has nothing to change for it.
   */
  largeDocuments?: boolean;
  /**
   * For a collection of records that count in counters (responses, votes):
   * the ids of the counters a document counted in, worked out from the
   * document as stored, which a `retract` naming it takes back. A function of
   * the document, not a list kept in it: a million responses listing their
   * counters made a rebuild write a fifth more. The projection that puts the
   * documents and tallies the counters must use the same rule, and a change
   * to it is a new projection version (a rebuild).
   */
  counted?: (doc: Doc) => string[];
  /**
   * Holds what visitors sent in the clear (an analytics breakdown's campaign
   * or referring site), which an erasure must leave nowhere. A store whose
   * pages keep old copies of rows moved when a page split (SQLite leaves them
   * in the unused space of the page, which its secure_delete never
   * overwrites) rewrites every such collection's table, in the same
   * transaction, when a `delete` removes one of its documents: the old pages
   * are overwritten as they are freed, so no copy of the deleted document
   * is left. That costs a copy of those tables per erasure, not per write
   * (a counter tallied down to nothing is deleted without it). A store of
   * documents (MongoDB) has nothing to change for it.
   */
  plainValues?: boolean;
}

export type ReadModelOp =
  /**
   * Insert or replace the whole document. `json`, when given, is the
   * document as JSON text (its fields in any order), written already by
   * the caller (a projection that builds it from its event's stored text,
   * or a rebuild on another thread); `doc` then needs only the `id` and the
   * fields the collection indexes or ranks by. In a collection with
   * `indexedColumns`, the text may leave out the `id` and any of those
   * fields whose value in `doc` is a string: the document is then the text's
   * fields and those. (Where the store keeps them in columns, each is stored
   * once rather than twice.)
   */
  | { op: 'put'; collection: string; doc: Doc; json?: string }
  /** Set top-level fields on every matching document (none matching is fine). */
  | { op: 'patch'; collection: string; where: Filter; set: Record<string, unknown> }
  /** Add `by` to a numeric top-level field of one existing document; a missing document is left missing. */
  | { op: 'increment'; collection: string; id: string; field: string; by: number }
  /** Delete every matching document (in a ranked collection, the ranks above close up). */
  | { op: 'delete'; collection: string; where: Filter }
  /**
   * A counter: adds `by` to the numeric `field` of the document `doc.id`,
   * creating it as `doc` with `field` = `by` when it is missing; a document
   * whose `field` comes to 0 or below is deleted, so a counter taken back to
   * nothing is stored as one never counted. Not on a ranked collection.
   */
  | { op: 'tally'; collection: string; doc: Doc; field: string; by: number }
  /**
   * Takes back what a record counted: for the document `record.id` of
   * `record.collection`, that collection's `counted` names the counters of
   * `collection` whose `field` was tallied by 1 for it; each of those is
   * tallied by -1 (a missing one stays missing, one come to 0 is deleted).
   * A record collection without `counted` is refused.
   * The record itself is left as it is (its projection deletes it with an op
   * of its own), and a missing record changes nothing. This is how a pure
   * projection undoes a contribution an event names only by id (an erasure).
   * The record is read as the ops before it in the same write left it; a
   * patch, or a delete by anything but `{ id }`, of the record's collection
   * earlier in the same write is refused (MongoDB would have to send every
   * op before it first). `collection` is not a ranked one; the record's may be.
   */
  | { op: 'retract'; collection: string; field: string; record: { collection: string; id: string } };

/** Moves one projection's checkpoint from `expected` to `next` (compare-and-set). */
export interface CheckpointMove {
  name: string;
  expected: bigint;
  next: bigint;
}

/**
 * A claim on a named lease: `holder` asks to hold it until `now` + `ttlMs`.
 * `now` is the caller's clock (injected, so tests move time by hand); every
 * process claiming one lease must keep time within a fraction of `ttlMs` of
 * the others.
 */
export interface LeaseClaim {
  name: string;
  holder: string;
  now: Date;
  ttlMs: number;
  /** A holder the caller knows to be gone: its lease is taken at once, without waiting for it to expire. */
  replacing?: string;
}

/** Who holds a lease, and until when by their clock. */
export interface Lease {
  holder: string;
  expiresAt: Date;
}

/** Names the lease a write belongs to: it is applied only while `holder` holds the lease `name`. */
export interface Fence {
  name: string;
  holder: string;
  /**
   * Which of the holder's processes writes (the projections, the erasure, the
   * webhooks, the seals): a store may keep one fence per consumer, so that
   * their writes do not contend for one record. Fencing is the same either way.
   */
  consumer?: string;
}

/** A fenced write found its lease held by another: nothing of it was applied. */
export class LeaseLost extends Error {
  constructor(readonly lease: string) {
    super(`the lease ${lease} is held by another process now`);
    this.name = 'LeaseLost';
  }
}

/** Inclusive bounds on one top-level field; strings compare as stored, so ISO times compare in time order. */
export interface Range {
  field: string;
  gte?: string | number;
  lte?: string | number;
}

export interface FindOptions {
  sort?: SortSpec;
  offset?: number;
  limit?: number;
  range?: Range;
  /**
   * Keyset paging: only the documents strictly after this one in `sort`
   * order, named by its values of the sort's fields, in order (one per
   * field). With an index on the filter's fields then the sort's, a page
   * after any document costs what the first page costs.
   */
  after?: Scalar[];
}

/** A page of a ranked collection's group, and how many documents the group holds. */
export interface RankedPage {
  docs: Doc[];
  total: number;
}

export interface ReadModelStore {
  readonly kind: 'sqlite' | 'mongodb';
  /**
   * The most events a projection runner should hand one `write`, whose ops
   * and checkpoint moves form one transaction: set by a store whose
   * transactions have limits of time and size (MongoDB). Absent: no limit
   * beyond the runner's own batch sizes.
   */
  readonly maxEventsPerWrite?: number;
  /** Creates the collections and their indexes if missing (idempotent). */
  ensureCollections(specs: CollectionSpec[]): Promise<void>;
  /**
   * Applies the ops and moves the checkpoints in one transaction. When any
   * checkpoint is not at its `expected` value, nothing is applied and the
   * answer is false; the caller re-reads the checkpoints and retries.
   * With a fence, it is applied only while the fence's holder holds its
   * lease (whether or not the lease ran out: only a holder that took it
   * over stops the write), else nothing is and it throws LeaseLost.
   */
  write(ops: ReadModelOp[], checkpoints?: CheckpointMove[], fence?: Fence): Promise<boolean>;
  /** Every stored checkpoint by projection name; a projection never run is absent (read it as 0n). */
  checkpoints(): Promise<Map<string, bigint>>;
  get(collection: string, id: string): Promise<Doc | null>;
  find(collection: string, filter: Filter, options?: FindOptions): Promise<Doc[]>;
  count(collection: string, filter: Filter, range?: Range): Promise<number>;
  /**
   * The documents of one group of a ranked collection, highest rank (last
   * put) first, skipping `offset` and returning at most `limit`, read with the
   * group's size from one snapshot.
   */
  newestFirst(collection: string, group: string, window: { offset: number; limit: number }): Promise<RankedPage>;
  /**
   * Empties the collections and removes the named checkpoints (a projection
   * new to the store). A projection writer moving one of those checkpoints
   * is applied either wholly before the reset or after it, from no
   * checkpoint; a reader may see the collections emptied one after another.
   */
  reset(collections: string[], checkpointNames: string[]): Promise<void>;
  /**
   * Makes what was deleted unrecoverable from the store's files where the
   * store can do that at once; never fails because it could not (SQLite:
   * empties its write-ahead log; MongoDB: nothing, see its adapter).
   */
  expunge(): Promise<void>;

  /**
   * Starts a rebuild beside the live read models: drops whatever an
   * unfinished rebuild left, creates empty shadow copies of the collections,
   * and answers a store over them with checkpoints of its own. Everything
   * else, in this process and in others, keeps reading and writing the live
   * collections until `swap` puts the shadows in their place. One rebuild at
   * a time: starting another drops this one's shadows.
   */
  shadow(collections: CollectionSpec[], checkpointNames: string[]): Promise<ShadowReadModels>;
  /**
   * Takes the lease for `claim.holder` until `now` + `ttlMs` when it is free,
   * expired at `now`, held by `replacing`, or held by this holder already
   * (a renewal), and answers true; else changes nothing and answers false.
   * One step for every process: of claims racing for a free lease, one wins.
   */
  claimLease(claim: LeaseClaim): Promise<boolean>;
  /** Gives the lease up when `holder` holds it (a clean stop: nobody waits for it to expire). */
  releaseLease(name: string, holder: string): Promise<void>;
  /** Who holds the lease, or last held it, and until when (a time maybe past); null when never claimed or released. */
  lease(name: string): Promise<Lease | null>;
  /** Throws when the store cannot be reached. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The shadow copies of a rebuild, used as any store (a projection runner
 * fills it as it fills the live one), plus the swap. It has no shadow of its
 * own, and closing it drops it unless it was swapped in; closing a swapped
 * one drops what the swap replaced, where the swap left that to be dropped
 * (SQLite). The store it came from stays open either way.
 */
export interface ShadowReadModels extends ReadModelStore {
  /**
   * Puts the shadow collections in place of the live ones and the shadow's
   * checkpoints in place of the live ones named when it was made (a name the
   * shadow never moved is removed), as one step for every reader and
   * projection writer; the shadow is then gone. Refused, with false and
   * nothing changed, while a live checkpoint is ahead of the shadow's (a live
   * runner applied events the shadow has not yet): catch the shadow up and
   * swap again. With `behind`, it swaps anyway; the live runners then replay
   * what the shadow lacks, and the read models lack it until they have.
   */
  swap(options?: { behind?: boolean }): Promise<boolean>;
}

export const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;

export function assertName(kind: string, name: string): void {
  if (!NAME.test(name)) throw new Error(`invalid ${kind} name: ${JSON.stringify(name)}`);
}

/** A page window: a non-negative integer offset and limit (adapters check it before any query). */
export function assertWindow({ offset, limit }: { offset: number; limit: number }): void {
  if (!Number.isSafeInteger(offset) || offset < 0) throw new Error('offset must be a non-negative integer');
  if (!Number.isSafeInteger(limit) || limit < 0) throw new Error('limit must be a non-negative integer');
}
