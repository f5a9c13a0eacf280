/**
 * The MongoDB adapter of the read-model port (see ./port.ts and the contract
 * suite in test/contracts/read-models.ts).
 *
 * - Every document is stored with `_id` = its `id`, plus all of its fields
 *   (`id` included); `_id` is projected away on the way out. Documents of a
 *   ranked collection also carry `_rank`, projected away the same way.
 * - Filters are plain equality on top-level fields whose names pass
 *   `assertName` and whose values are runtime-checked scalars, so nothing a
 *   client sends can become an operator. `id` maps to `_id`.
 * - Every index ends with `_id`, the tie-break of every sort (./mongo-plan.ts),
 *   so a sort on an index's fields is read from the index.
 * - `write` runs in one multi-document transaction (`transact`, the driver's
 *   retry rules under a bound of this store's own) that first passes its
 *   fence (see FENCES) and compare-and-sets the projection checkpoints, kept in the
 *   `projection_checkpoints` collection as `{ _id: name, position: Int64 }`,
 *   then sends each collection's operations as one ordered `bulkWrite`: a
 *   handful of round trips whatever the number of operations. A transaction
 *   has limits a projection's catch-up could pass (see EVENTS_PER_WRITE), so
 *   the store asks runners for batches that stay well inside them.
 *   Transactions need a replica set (or a sharded cluster); a standalone
 *   server is refused at open.
 * - `reset` and a rebuild's swap put new collections in place of the live
 *   ones by renaming (`renameCollection` with `dropTarget`): the same cost
 *   whatever the size, where deleting every document in a transaction would
 *   outgrow it. See `MongoShadow` for how the renames stay safe without one
 *   transaction.
 * - Every majority write gives up after MAJORITY_WAIT_MS instead of waiting
 *   for a majority that is away; server selection, connecting, pool waits and
 *   each read give up after the store's `timeoutMs` (see MongoTimeouts).
 */
import { summed } from './pending-counts.js';
import { randomBytes } from 'node:crypto';
import {
  Long,
  MongoClient,
  MongoServerError,
  WriteConcern,
  type AnyBulkWriteOperation,
  type ClientSession,
  type Collection,
  type Db,
  type Document,
  type IndexDescription,
  type MongoClientOptions,
  type TransactionOptions,
} from 'mongodb';
import { transact } from './mongo-transaction.js';
import { indexKey, indexName, rankShifts, sortKey, storedField, type KeySpec } from './mongo-plan.js';
import {
  assertName,
  assertWindow,
  type CollectionSpec,
  type Doc,
  type Filter,
  type FindOptions,
  type ReadModelOp,
  type RankedPage,
  type Range,
  type ReadModelStore,
  type CheckpointMove,
  type Fence,
  type Lease,
  type LeaseClaim,
  LeaseLost,
  type ShadowReadModels,
} from './port.js';

const DEFAULT_DB = 'feedback';
const CHECKPOINTS = 'projection_checkpoints';
/** Leases by name: `{ _id: name, holder, expires_at: Date, fenced }` (the holder's clock; `fenced` counts the first fenced write of each consumer under a holder, which writes it so that a takeover conflicts with it). */
const LEASES = 'leases';
type LeaseDoc = { _id: string; holder: string; expires_at: Date; fenced?: number };
/**
 * One fence per consumer of a lease (the projection runner, the erasure
 * process, the webhook dispatcher, the sealer): `{ _id: lease/consumer, lease,
 * holder, writes }`. Each fenced write increments its own consumer's fence,
 * so the four processes' transactions do not all write one document (a
 * write conflict, and so a retried transaction, whenever two commit close
 * together); a takeover deletes the lease's fences in the transaction that
 * changes its holder, which conflicts with every fenced write in flight.
 */
const FENCES = 'lease_fences';
type FenceDoc = { _id: string; lease: string; holder: string; writes: number };

/** How long one call may take when the caller names no bound (see MongoTimeouts). */
export const DEFAULT_TIMEOUT_MS = 5_000;
/** A write transaction, its retries included, is given this many times the bound of one call. */
const TRANSACTION_BOUND_FACTOR = 4;

/** Server error codes (src/mongo/base/error_codes.yml in the server). */
const DUPLICATE_KEY = 11000;
const NAMESPACE_EXISTS = 48;
const COMMAND_NOT_FOUND = 59;
const NAMESPACE_NOT_FOUND = 26;
const INDEX_NOT_FOUND = 27;
/** What a rename does to a read running under it: its plan or cursor killed, its snapshot older than the collection. */
const RENAMED_UNDER_READ = new Set([43, 175, 237, 246]);
const READ_ATTEMPTS = 3;

/**
 * The most events a runner should hand one write. A write is one
 * transaction: MongoDB aborts a transaction older than
 * `transactionLifetimeLimitSeconds` (60 s unless the operator changed it),
 * keeps all it wrote in the WiredTiger cache until it commits, and before
 * 4.2 had to fit all of it in one 16 MB oplog entry. A projection turns an
 * event into a few small documents, so 500 events are a few thousand
 * documents at most: with one bulkWrite per collection, well under a second
 * and a few megabytes. A catch-up of 5000 events per write, as on SQLite,
 * would be ten times that for no gain worth the risk.
 */
const EVENTS_PER_WRITE = 500;

/**
 * How long a majority write waits for the majority to confirm it (the write
 * concern's `wtimeout`). Without one, a write waits as long as the majority
 * is away; with it, the write answers a write-concern error, while staying
 * applied on the primary (and kept or rolled back as the replica set
 * decides). A commit that times out so is committed again by `transact`
 * (UnknownTransactionCommitResult) within the write's bound before the error
 * reaches the caller (as a 503 on a request); a projection runner then learns from its next compare-and-set
 * whether the write landed.
 */
const MAJORITY_WAIT_MS = 10_000;

/** Ids per `$in` lookup: a query must fit a 16 MB BSON document. */
const IDS_PER_QUERY = 5000;

/** How long a swap may hold projection writes back before a writer takes it for abandoned and finishes it itself. */
const SWAP_LEASE_MS = 60_000;
const SWAP_POLL_MS = 50;
/** Refusals by another replacement under way before a reset gives up. */
const RESET_ATTEMPTS = 5;

const INT64_MAX = 2n ** 63n - 1n;

/**
 * Collections being replaced: each stored name in `collections` by the
 * collection `${from}${name}`, renamed over it. A rebuild's swap puts its
 * shadows in, a reset empty collections.
 */
interface Replacement {
  kind: 'swap' | 'reset';
  from: string;
  collections: string[];
}

/**
 * A checkpoint as stored. `swap` is set while a replacement is under way:
 * the position the checkpoint takes once it is done (null: it goes), and
 * enough to finish it from any process.
 */
type CheckpointDoc = { _id: string; position: unknown; swap?: SwapJournal };
interface SwapJournal extends Replacement {
  id: string;
  position: Long | null;
  at: Date;
}

/** Where a store's collections live: the live read models, or one rebuild's shadows. */
interface Layout {
  prefix: string;
  checkpoints: string;
}
const LIVE: Layout = { prefix: '', checkpoints: CHECKPOINTS };
const SHADOWS = 'rebuild.';
const shadowLayout = (id: string): Layout => ({ prefix: `${SHADOWS}${id}.`, checkpoints: `${SHADOWS}${id}.${CHECKPOINTS}` });
/**
 * A reset's empty collections, named so that no live or shadow collection can
 * be (NAME allows no dot). The time in the name says how old one is that a
 * process killed during a reset left behind (empty, and safe to drop once no
 * reset is running).
 */
const RESETS = 'reset.';
/** One document naming the rebuild that owns the shadows: only that one may swap them in. */
const OWNER = `${SHADOWS}owner`;
type OwnerDoc = { _id: 'owner'; id: string; swapping?: string };

/** A projection write met a checkpoint that a swap or a reset holds. */
class ReplacementUnderWay extends Error {
  constructor(readonly journal: SwapJournal) {
    super(`read-model ${journal.kind} ${journal.id} is under way`);
  }
}
/** A read-model document as stored: the port's document plus `_id` = its `id`. */
type StoredDoc = { _id: string; [field: string]: unknown };
const HIDDEN = { projection: { _id: 0, _rank: 0 } } as const;

/** One operation of a write, checked and translated before any transaction starts. */
type Planned =
  | { op: 'put'; id: string; doc: Doc; group: string | undefined }
  | { op: 'patch'; filter: Document; set: Document }
  | { op: 'increment'; id: string; inc: Document }
  /** `id` when the filter is the id alone, which a ranked collection answers from what it looked up at once. */
  | { op: 'delete'; filter: Document; id: string | undefined }
  | { op: 'tally'; id: string; insert: Document; field: string; by: number }
  /** `known`: the counters the record counted in, as a put earlier in the write left it (none when it deleted the record); undefined, read at the write's start. */
  | { op: 'retract'; field: string; record: { collection: string; id: string }; known: string[] | undefined };

/** A write's operations on one collection, in their order. */
interface CollectionWrite {
  name: string;
  coll: Collection<StoredDoc>;
  within: string | undefined;
  ops: Planned[];
}

/** Where a document of a ranked collection stands: its group and rank. */
interface Held {
  group: string;
  rank: number;
}

const MAJORITY = new WriteConcern('majority', MAJORITY_WAIT_MS);
const TXN: TransactionOptions = {
  readPreference: 'primary',
  readConcern: { level: 'snapshot' },
  writeConcern: MAJORITY,
};

/** Bounds on the waits of the store's calls. */
export interface MongoTimeouts {
  /**
   * Server selection, connecting, waiting for a pooled connection and the
   * server's time limit on each read (`maxTimeMS`); a write transaction gets
   * TRANSACTION_BOUND_FACTOR times this. The driver's own defaults wait 30 s
   * for a server and for ever for a connection or a read.
   */
  timeoutMs?: number;
}

/** Options of the client whose connection-string names the string does not set itself (the string's own value wins). */
const BOUNDED_OPTIONS = ['serverSelectionTimeoutMS', 'connectTimeoutMS', 'waitQueueTimeoutMS'] as const;

/**
 * The options the client is made with: undefined fields dropped rather than
 * stored as null, and each wait of BOUNDED_OPTIONS bounded by `timeoutMs`
 * unless the connection string sets it (compared case-insensitively, as the
 * driver reads its options).
 */
export function mongoClientOptions(url: string, timeoutMs: number = DEFAULT_TIMEOUT_MS): MongoClientOptions {
  const given = new Set(
    splitUrl(url)
      .query.replace(/^\?/, '')
      .split('&')
      .map((pair) => pair.split('=', 1)[0]!.toLowerCase())
      .filter((key) => key !== ''),
  );
  const options: MongoClientOptions = { ignoreUndefined: true };
  for (const key of BOUNDED_OPTIONS) if (!given.has(key.toLowerCase())) options[key] = timeoutMs;
  return options;
}

/**
 * Index builds wait for a majority of the voting members to have built them
 * (`commitQuorum: 'majority'`, the server's default is every data-bearing
 * member): one member down or far behind no longer holds a start of the
 * service, and the index is on a majority, which is what survives a failover.
 */
export const INDEX_BUILD = { commitQuorum: 'majority' } as const;

export async function openMongoReadModels(url: string, { timeoutMs = DEFAULT_TIMEOUT_MS }: MongoTimeouts = {}): Promise<ReadModelStore> {
  const where = describe(url);
  const fail = (what: string, err: unknown): Error => {
    const raw = err instanceof Error ? `${err.name}: ${err.message}` : String(err);
    const safe = redact(raw, url);
    // The driver's error is kept as the cause only when it holds no credential.
    return new Error(`MongoDB read models at ${where}: ${what}: ${safe}`, safe === raw ? { cause: err } : undefined);
  };

  let client: MongoClient;
  try {
    // ignoreUndefined: an undefined field is dropped (as JSON would), not stored as null.
    client = new MongoClient(url, mongoClientOptions(url, timeoutMs));
  } catch (err) {
    throw fail('invalid connection string', err);
  }
  try {
    await client.connect();
    const db = client.db(dbNameOf(url));
    await db.command({ ping: 1 });
    await requireReplicaSet(db, where);
    await createIfMissing(db, CHECKPOINTS);
    await createIfMissing(db, LEASES);
    await createIfMissing(db, FENCES);
    return new MongoReadModels(client, db, timeoutMs);
  } catch (err) {
    await client.close().catch(() => undefined);
    if (err instanceof NotReplicaSet) throw err;
    throw fail('cannot open', err);
  }
}

class NotReplicaSet extends Error {}

async function requireReplicaSet(db: Db, where: string): Promise<void> {
  let hello: Document;
  try {
    hello = await db.admin().command({ hello: 1 });
  } catch (err) {
    if (!hasCode(err, COMMAND_NOT_FOUND)) throw err;
    hello = await db.admin().command({ isMaster: 1 });
  }
  // A replica-set member reports setName; a mongos (sharded cluster, which
  // also supports transactions) reports msg 'isdbgrid'.
  if (typeof hello.setName === 'string' && hello.setName !== '') return;
  if (hello.msg === 'isdbgrid') return;
  const state =
    hello.isreplicaset === true
      ? 'was started with --replSet but its replica set is not initiated (run rs.initiate())'
      : 'is a standalone';
  throw new NotReplicaSet(
    `MongoDB read models at ${where}: the server ${state}; MongoDB must run as a replica set ` +
      '(a single-node one is enough: mongod --replSet rs0, then rs.initiate()) because writes use multi-document transactions',
  );
}

class MongoReadModels implements ReadModelStore {
  readonly kind = 'mongodb' as const;
  readonly maxEventsPerWrite = EVENTS_PER_WRITE;
  protected readonly checkpointsColl: Collection<CheckpointDoc>;
  /** One collection for the live store and its shadows: a lease is never a rebuild's. */
  private readonly leases: Collection<LeaseDoc>;
  private readonly fences: Collection<FenceDoc>;
  /** The server's time limit on each read. */
  protected readonly bounded: { maxTimeMS: number };
  /** Ranked collections by name, with the field that groups them. */
  private readonly ranked = new Map<string, string>();
  /** Per collection of records, what a document counted in (the spec's `counted`), for retract. */
  private readonly counted = new Map<string, (doc: Doc) => string[]>();

  constructor(
    protected readonly client: MongoClient,
    protected readonly db: Db,
    protected readonly timeoutMs: number,
    protected readonly layout: Layout = LIVE,
  ) {
    this.checkpointsColl = db.collection<CheckpointDoc>(layout.checkpoints);
    this.leases = db.collection<LeaseDoc>(LEASES, { writeConcern: MAJORITY });
    this.fences = db.collection<FenceDoc>(FENCES, { writeConcern: MAJORITY });
    this.bounded = { maxTimeMS: timeoutMs };
  }

  protected coll(name: string): Collection<StoredDoc> {
    assertName('collection', name);
    return this.db.collection<StoredDoc>(`${this.layout.prefix}${name}`);
  }

  /** A read that a rename interrupted is read again, from the collection now under that name. */
  private async read<T>(query: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await query();
      } catch (err) {
        if (attempt >= READ_ATTEMPTS || !(err instanceof MongoServerError && RENAMED_UNDER_READ.has(Number(err.code)))) throw err;
      }
    }
  }

  async ensureCollections(specs: CollectionSpec[]): Promise<void> {
    // Validate everything before touching the server.
    const plans = specs.map((spec) => {
      assertName('collection', spec.name);
      const indexes = new Map<string, IndexDescription>();
      const legacy: string[] = [];
      for (const fields of spec.indexes) {
        if (!Array.isArray(fields) || fields.length === 0) throw new Error(`empty index on ${spec.name}`);
        let key: KeySpec;
        try {
          key = indexKey(fields);
        } catch (err) {
          throw new Error(`index ${JSON.stringify(fields)} on ${spec.name}: ${(err as Error).message}`);
        }
        // The _id index always exists; asking for it again under another name is an error.
        if (Object.keys(key).length === 1) continue;
        const name = indexName(key);
        indexes.set(name, { key, name });
        // The same index without the _id tie-break, as this adapter made it before: it serves nothing the new one does not, and costs every write.
        if (!fields.some((field) => storedField(field) === '_id')) {
          legacy.push(fields.map((field) => `${field}_1`).join('_'));
        }
      }
      if (spec.rankWithin !== undefined) {
        assertName('field', spec.rankWithin);
        // Ranks are unique within a group, so this one needs no tie-break.
        const key = { [spec.rankWithin]: 1, _rank: 1 } as const;
        indexes.set(`${spec.rankWithin}_1__rank_1`, { key, name: `${spec.rankWithin}_1__rank_1` });
      }
      return {
        name: spec.name,
        stored: `${this.layout.prefix}${spec.name}`,
        indexes: [...indexes.values()],
        legacy: legacy.filter((name) => !indexes.has(name)),
        rankWithin: spec.rankWithin,
        counted: spec.counted,
      };
    });
    const existing = new Set(
      (await this.db.listCollections({}, { nameOnly: true }).toArray()).map((info) => info.name),
    );
    if (!existing.has(this.layout.checkpoints)) await createIfMissing(this.db, this.layout.checkpoints);
    for (const plan of plans) {
      // Explicitly, so the collection exists before any transaction uses it.
      if (!existing.has(plan.stored)) await createIfMissing(this.db, plan.stored);
      // Majority write concern (inherited from the collection handle): a transaction's
      // snapshot read concern then already sees the new catalog.
      const coll = this.db.collection(plan.stored, { writeConcern: MAJORITY });
      // createIndexes is a no-op for an index that already exists with the same key and name.
      if (plan.indexes.length > 0) await coll.createIndexes(plan.indexes, INDEX_BUILD);
      if (existing.has(plan.stored) && plan.legacy.length > 0) {
        const present = new Set((await coll.listIndexes().toArray()).map((index) => String(index.name)));
        for (const name of plan.legacy) {
          if (!present.has(name)) continue;
          try {
            await coll.dropIndex(name, { writeConcern: MAJORITY });
          } catch (err) {
            // Dropped already, by another process starting at the same time.
            if (!hasCode(err, INDEX_NOT_FOUND)) throw err;
          }
        }
      }
      if (plan.rankWithin !== undefined) this.ranked.set(plan.name, plan.rankWithin);
      if (plan.counted !== undefined) this.counted.set(plan.name, plan.counted);
      else this.counted.delete(plan.name);
    }
  }

  async write(ops: ReadModelOp[], checkpoints: CheckpointMove[] = [], fence?: Fence): Promise<boolean> {
    // Validate (and translate) everything up front: nothing malformed reaches a transaction.
    const moves = checkpoints.map(checkMove);
    const writes = this.plan(ops);
    // With a fence, even an empty write asks whether its holder still holds it (LeaseLost if not).
    if (moves.length === 0 && writes.length === 0 && fence === undefined) return true;
    for (;;) {
      try {
        return await this.writeOnce(moves, writes, fence);
      } catch (err) {
        if (!(err instanceof ReplacementUnderWay)) throw err;
        // Held back until the replacement is done, so that nothing lands in a collection about to be replaced.
        if (Date.now() - err.journal.at.getTime() > SWAP_LEASE_MS) await finishReplacement(this.db, this.client, this.layout.checkpoints, err.journal.id);
        else await new Promise((resolve) => setTimeout(resolve, SWAP_POLL_MS));
      }
    }
  }

  private async writeOnce(moves: CheckpointMove[], writes: CollectionWrite[], fence: Fence | undefined): Promise<boolean> {
    const session = this.client.startSession();
    try {
      // The callback may run more than once: on a TransientTransactionError
      // (e.g. a WriteConflict with a concurrent writer) transact aborts
      // and calls it again, so the compare-and-set is re-evaluated each time,
      // and what a ranked collection looked up is looked up again.
      return await transact(session, async (s) => {
        if (fence) await this.passFence(fence, s);
        if (!(await this.moveCheckpoints(moves, s))) {
          // A manual abort makes transact return the callback's value as is.
          await s.abortTransaction();
          return false;
        }
        const records = await this.recordsRetracted(writes, s);
        // Each collection's operations depend only on each other (a retract's record is read above): collection by collection, each in its order.
        for (const write of writes) {
          if (write.within === undefined) await writePlain(write, s, records);
          else await writeRanked(write, write.within, s);
        }
        return true;
      }, TXN, this.timeoutMs * TRANSACTION_BOUND_FACTOR);
    } finally {
      await session.endSession();
    }
  }

  /**
   * Passes the fence of a write, inside its transaction, or throws LeaseLost.
   * Written, not only read: a takeover (claimLease) deletes the lease's
   * fences in the transaction that changes its holder, so one that commits
   * after this transaction's snapshot conflicts with this write, and the
   * transaction is tried again and finds the new holder; one that comes while
   * this transaction is open waits for it. A read alone would let a write
   * that moves no checkpoint (a webhook delivery's) commit after its holder
   * lost the lease. A consumer's first write under a holder finds no fence
   * of its own: the lease itself is written then (once), for the same reason.
   */
  private async passFence(fence: Fence, session: ClientSession): Promise<void> {
    const id = `${fence.name}/${fence.consumer ?? ''}`;
    if ((await this.fences.updateOne({ _id: id, holder: fence.holder }, { $inc: { writes: 1 } }, { session })).matchedCount === 1) {
      // Read as well (no conflict, no hot spot): a takeover by a process that keeps no fences, during a rolling upgrade, is seen too.
      if ((await this.leases.countDocuments({ _id: fence.name, holder: fence.holder }, { session, limit: 1 })) !== 1) throw new LeaseLost(fence.name);
      return;
    }
    if ((await this.leases.updateOne({ _id: fence.name, holder: fence.holder }, { $inc: { fenced: 1 } }, { session })).matchedCount !== 1) throw new LeaseLost(fence.name);
    await this.fences.replaceOne({ _id: id }, { lease: fence.name, holder: fence.holder, writes: 1 }, { session, upsert: true });
  }

  /** The counters a record counted in (see the port's retract); none for a record that is not there. */
  private countedIn(collection: string, record: Doc | null): string[] {
    return record === null ? [] : (this.counted.get(collection)?.(record) ?? []);
  }

  /** What each record a retract of the write reads from the store counted in, as the write finds it, by recordKey. */
  private async recordsRetracted(writes: CollectionWrite[], session: ClientSession): Promise<Map<string, string[]>> {
    const wanted = new Map<string, Set<string>>();
    for (const write of writes) {
      for (const op of write.ops) {
        if (op.op !== 'retract' || op.known !== undefined) continue;
        const ids = wanted.get(op.record.collection) ?? new Set<string>();
        ids.add(op.record.id);
        wanted.set(op.record.collection, ids);
      }
    }
    const found = new Map<string, string[]>();
    for (const [collection, ids] of wanted) {
      const all = [...ids];
      for (let i = 0; i < all.length; i += IDS_PER_QUERY) {
        const docs = await this.coll(collection).find({ _id: { $in: all.slice(i, i + IDS_PER_QUERY) } }, { session, projection: { _rank: 0 } }).toArray();
        for (const { _id, ...doc } of docs) found.set(recordKey(collection, _id), this.countedIn(collection, { ...doc, id: _id }));
      }
    }
    return found;
  }

  /** True when every checkpoint was at its `expected` and now is at its `next` (inside the transaction). */
  private async moveCheckpoints(moves: CheckpointMove[], session: ClientSession): Promise<boolean> {
    if (moves.length === 0) return true;
    const stored = await this.checkpointsColl.find({ _id: { $in: moves.map((move) => move.name) } }, { session, useBigInt64: true }).toArray();
    const current = new Map(stored.map((doc) => [doc._id, doc]));
    for (const doc of stored) {
      // The journal was set inside a transaction that wrote this very document, so no write gets past it unseen.
      if (doc.swap) throw new ReplacementUnderWay(doc.swap);
    }
    for (const move of moves) {
      const doc = current.get(move.name);
      const position = doc === undefined ? 0n : toBigInt(doc.position, move.name);
      if (position !== move.expected) return false;
    }
    const models: Array<AnyBulkWriteOperation<CheckpointDoc>> = moves.map((move) =>
      current.has(move.name)
        ? { updateOne: { filter: { _id: move.name, position: Long.fromBigInt(move.expected) }, update: { $set: { position: Long.fromBigInt(move.next) } } } }
        : { insertOne: { document: { _id: move.name, position: Long.fromBigInt(move.next) } } },
    );
    try {
      const result = await this.checkpointsColl.bulkWrite(models, { ordered: true, session });
      return result.matchedCount === models.filter((model) => 'updateOne' in model).length;
    } catch (err) {
      // Another writer's checkpoint doc is already there: the expectation is stale.
      // (An uncommitted concurrent insert shows up as a WriteConflict instead,
      // which is left to propagate so transact retries and re-reads.)
      if (hasCode(err, DUPLICATE_KEY)) return false;
      throw err;
    }
  }

  /** Checks and translates every op, and groups them by collection, each group in its order. */
  private plan(ops: ReadModelOp[]): CollectionWrite[] {
    if (!Array.isArray(ops)) throw new Error('ops must be a list');
    const writes = new Map<string, CollectionWrite>();
    for (const op of ops) if (op === null || typeof op !== 'object') throw new Error('invalid read-model op');
    // Counts up are summed per counter and sent once (see PendingCounts), before any op that could see them.
    const inOrder = summed(ops);
    // What a retract reads of its record is known here when an earlier op of the write put or deleted it, and read at the start of the write otherwise (see the port).
    const records = new Map<string, Doc | null>();
    const filtered = new Set<string>();
    for (const op of inOrder) {
      const planned = this.planOne(op);
      if (planned === undefined) {
        if (op.op === 'patch') filtered.add(op.collection);
        continue;
      }
      switch (planned.op) {
        case 'put':
          records.set(recordKey(op.collection, planned.id), planned.doc);
          break;
        case 'delete':
          if (planned.id !== undefined) records.set(recordKey(op.collection, planned.id), null);
          else filtered.add(op.collection);
          break;
        case 'patch':
          filtered.add(op.collection);
          break;
        case 'retract': {
          if (filtered.has(planned.record.collection)) throw new Error(`retract on ${op.collection}: ${planned.record.collection} was patched or deleted by a filter earlier in this write`);
          const key = recordKey(planned.record.collection, planned.record.id);
          if (records.has(key)) planned.known = this.countedIn(planned.record.collection, records.get(key) ?? null);
          break;
        }
      }
      let write = writes.get(op.collection);
      if (write === undefined) {
        write = { name: op.collection, coll: this.coll(op.collection), within: this.ranked.get(op.collection), ops: [] };
        writes.set(op.collection, write);
      }
      write.ops.push(planned);
    }
    return [...writes.values()];
  }

  /** One op checked and translated; undefined when it changes nothing. */
  private planOne(op: ReadModelOp): Planned | undefined {
    assertName('collection', op.collection);
    const within = this.ranked.get(op.collection);
    switch (op.op) {
      case 'put': {
        const doc: unknown = op.json === undefined ? op.doc : JSON.parse(op.json);
        if (!isPlainObject(doc)) throw new Error(`put on ${op.collection}: the document must be an object`);
        if (op.json !== undefined) {
          if (!isPlainObject(op.doc)) throw new Error(`put on ${op.collection}: the document must be an object`);
          // The text may leave out the id and string key fields that `doc` holds (see the port's put).
          for (const [field, value] of Object.entries(op.doc)) if (typeof value === 'string' && !Object.hasOwn(doc, field)) doc[field] = value;
          if (doc.id !== op.doc.id) throw new Error(`put on ${op.collection}: the document's text and its id disagree`);
        }
        if (typeof doc.id !== 'string') throw new Error(`put on ${op.collection}: the document id must be a string`);
        if (Object.hasOwn(doc, '_id') || Object.hasOwn(doc, '_rank')) throw new Error(`put on ${op.collection}: _id and _rank are reserved`);
        const whole = doc as Doc;
        if (within === undefined) return { op: 'put', id: whole.id, doc: whole, group: undefined };
        const group = whole[within];
        if (typeof group !== 'string') throw new Error(`put on ${op.collection}: ${within} must be a string`);
        return { op: 'put', id: whole.id, doc: whole, group };
      }
      case 'patch': {
        const filter = toFilter(op.where);
        if (!isPlainObject(op.set)) throw new Error(`patch on ${op.collection}: set must be an object`);
        const set: Document = {};
        for (const [field, value] of Object.entries(op.set)) {
          settableField(field);
          if (field === within) throw new Error(`patch on ${op.collection}: ${within} ranks the documents and cannot change`);
          if (value !== undefined) set[field] = value;
        }
        if (Object.keys(set).length === 0) return undefined;
        return { op: 'patch', filter, set };
      }
      case 'increment': {
        settableField(op.field);
        if (typeof op.id !== 'string') throw new Error(`increment on ${op.collection}: id must be a string`);
        if (typeof op.by !== 'number' || !Number.isFinite(op.by)) {
          throw new Error(`increment on ${op.collection}: by must be a finite number`);
        }
        // No upsert: a missing document stays missing; $inc on a missing field starts from 0.
        return { op: 'increment', id: op.id, inc: { [op.field]: op.by } };
      }
      case 'tally': {
        if (within !== undefined) throw new Error(`tally on ${op.collection}: not on a ranked collection`);
        settableField(op.field);
        const doc = op.doc;
        if (!isPlainObject(doc) || typeof doc.id !== 'string') throw new Error(`tally on ${op.collection}: the document must be an object with a string id`);
        if (Object.hasOwn(doc, '_id') || Object.hasOwn(doc, '_rank')) throw new Error(`tally on ${op.collection}: _id and _rank are reserved`);
        if (typeof op.by !== 'number' || !Number.isFinite(op.by)) throw new Error(`tally on ${op.collection}: by must be a finite number`);
        // $setOnInsert and $inc may not name one field: the counter's own starts from what $inc adds.
        const { [op.field]: _counted, ...insert } = doc;
        return { op: 'tally', id: doc.id, insert, field: op.field, by: op.by };
      }
      case 'retract': {
        if (within !== undefined) throw new Error(`retract on ${op.collection}: not on a ranked collection`);
        settableField(op.field);
        const record = op.record as { collection?: unknown; id?: unknown } | null;
        if (record === null || typeof record !== 'object' || typeof record.id !== 'string' || typeof record.collection !== 'string') {
          throw new Error(`retract on ${op.collection}: record must name a collection and an id`);
        }
        assertName('collection', record.collection);
        if (!this.counted.has(record.collection)) throw new Error(`retract on ${op.collection}: ${record.collection} does not say what its records counted`);
        return { op: 'retract', field: op.field, record: { collection: record.collection, id: record.id }, known: undefined };
      }
      case 'delete': {
        const filter = toFilter(op.where);
        const byId = Object.keys(filter).length === 1 && typeof filter._id === 'string';
        return { op: 'delete', filter, id: byId ? (filter._id as string) : undefined };
      }
      default:
        throw new Error(`unknown read-model op ${JSON.stringify((op as { op?: unknown }).op)}`);
    }
  }

  /** Every stored checkpoint, but those a reset is removing: for a reader they are gone already. */
  async checkpoints(): Promise<Map<string, bigint>> {
    // A process that starts during a reset, or after the resetter died half way, so
    // takes the projection for new and resets again, which finishes the first one.
    const docs = await this.checkpointsColl.find({ 'swap.kind': { $ne: 'reset' } }, { useBigInt64: true, ...this.bounded }).toArray();
    return new Map(docs.map((d) => [d._id, toBigInt(d.position, d._id)]));
  }

  async get(collection: string, id: string): Promise<Doc | null> {
    const coll = this.coll(collection);
    if (typeof id !== 'string') throw new Error('id must be a string');
    return (await this.read(() => coll.findOne({ _id: id }, { ...HIDDEN, ...this.bounded }))) as unknown as Doc | null;
  }

  async find(collection: string, filter: Filter, options: FindOptions = {}): Promise<Doc[]> {
    const coll = this.coll(collection);
    const query = withKeyset(toFilter(filter), options);
    const { sort, offset, limit } = options;
    // A total order, so offset/limit pages are stable.
    const sortSpec = sort === undefined ? undefined : sortKey(sort);
    if (offset !== undefined && !(Number.isSafeInteger(offset) && offset >= 0)) {
      throw new Error('offset must be a non-negative integer');
    }
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0)) {
      throw new Error('limit must be a non-negative integer');
    }
    // MongoDB reads limit 0 as "no limit"; the port means "nothing".
    if (limit === 0) return [];
    const docs = await this.read(() => {
      let cursor = coll.find(query, { ...HIDDEN, ...this.bounded });
      if (sortSpec !== undefined) cursor = cursor.sort(sortSpec);
      if (offset !== undefined && offset > 0) cursor = cursor.skip(offset);
      if (limit !== undefined) cursor = cursor.limit(limit);
      return cursor.toArray();
    });
    return docs as unknown as Doc[];
  }

  async newestFirst(collection: string, group: string, window: { offset: number; limit: number }): Promise<RankedPage> {
    const coll = this.coll(collection);
    const within = this.ranked.get(collection);
    if (within === undefined) throw new Error(`${collection} is not a ranked collection`);
    if (typeof group !== 'string') throw new Error('group must be a string');
    assertWindow(window);
    const { offset, limit } = window;
    return this.read(() => this.rankedPage(coll, within, group, offset, limit));
  }

  private async rankedPage(coll: Collection<StoredDoc>, within: string, group: string, offset: number, limit: number): Promise<RankedPage> {
    // A snapshot session, so the total and the page are read at the same point in time.
    const session = this.client.startSession({ snapshot: true });
    try {
      // Ranks are dense, so the top one is the group's size.
      const total = await topRank(coll, within, group, session, this.timeoutMs);
      const high = total - offset;
      if (high <= 0 || limit === 0) return { docs: [], total };
      const docs = await coll
        .find({ [within]: group, _rank: { $gt: Math.max(0, high - limit), $lte: high } }, { ...HIDDEN, ...this.bounded, session })
        .sort({ _rank: -1 })
        .toArray();
      return { docs: docs as unknown as Doc[], total };
    } finally {
      await session.endSession();
    }
  }

  async count(collection: string, filter: Filter, range?: Range): Promise<number> {
    const coll = this.coll(collection);
    const query = withKeyset(toFilter(filter), { range });
    return this.read(() => coll.countDocuments(query, this.bounded));
  }

  /**
   * Puts an empty copy of each collection (its indexes included) in its
   * place, as a rebuild's swap puts its shadows: first the empty copies,
   * then one transaction that journals the reset on the named checkpoints
   * (projection writes on them wait from then on, and `checkpoints` no
   * longer lists them), then the renames, then, last, one transaction that
   * removes the checkpoints. A reset that dies half way leaves the journal:
   * the next start finds those projections without a checkpoint and resets
   * them again, which finishes this one first; a writer held back longer
   * than SWAP_LEASE_MS finishes it too. So no projection ever writes into a
   * collection the reset has not yet replaced, nor from a checkpoint the
   * emptied collections no longer match.
   */
  async reset(collections: string[], checkpointNames: string[]): Promise<void> {
    for (const name of collections) assertName('collection', name);
    for (const name of checkpointNames) {
      if (typeof name !== 'string' || name === '') throw new Error('checkpoint names must be non-empty strings');
    }
    const targets = [...new Set(collections)].map((name) => `${this.layout.prefix}${name}`);
    const id = `${Date.now()}.${randomBytes(4).toString('hex')}`;
    const replacement: Replacement = { kind: 'reset', from: `${RESETS}${id}.`, collections: targets };
    try {
      for (const target of targets) await this.createEmptyCopy(target, `${replacement.from}${target}`);
      if (checkpointNames.length > 0) await this.journalReset(id, replacement, [...new Set(checkpointNames)]);
    } catch (err) {
      // Nothing was replaced yet, and nothing will be: the empty copies go.
      for (const target of targets) await this.db.dropCollection(`${replacement.from}${target}`, { writeConcern: MAJORITY }).catch(() => undefined);
      throw err;
    }
    await finishReplacement(this.db, this.client, this.layout.checkpoints, id, replacement);
  }

  /** An empty collection with the indexes `target` has now (none when it does not exist). */
  private async createEmptyCopy(target: string, copy: string): Promise<void> {
    let indexes: Document[] = [];
    try {
      indexes = await this.db.collection(target).listIndexes().toArray();
    } catch (err) {
      if (!hasCode(err, NAMESPACE_NOT_FOUND)) throw err;
    }
    await createIfMissing(this.db, copy);
    const copies = indexes
      .filter((index) => index.name !== '_id_')
      .map((index) => Object.fromEntries(Object.entries(index).filter(([field]) => field !== 'v' && field !== 'ns')) as IndexDescription);
    if (copies.length > 0) await this.db.collection(copy, { writeConcern: MAJORITY }).createIndexes(copies, INDEX_BUILD);
  }

  /** Writes the reset's journal onto the checkpoints, first finishing any replacement already journaled there. */
  private async journalReset(id: string, replacement: Replacement, names: string[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const session = this.client.startSession();
      let inTheWay: string | undefined;
      try {
        inTheWay = await session.withTransaction(async (s) => {
          const held = await this.checkpointsColl.findOne({ _id: { $in: names }, swap: { $exists: true } }, { session: s });
          if (held?.swap) {
            await s.abortTransaction();
            return held.swap.id;
          }
          const swap: SwapJournal = { ...replacement, id, position: null, at: new Date() };
          await this.checkpointsColl.bulkWrite(
            names.map((name) => ({ updateOne: { filter: { _id: name }, update: { $set: { swap }, $setOnInsert: { position: Long.fromBigInt(0n) } }, upsert: true } })),
            { ordered: true, session: s },
          );
          return undefined;
        }, TXN);
      } finally {
        await session.endSession();
      }
      if (inTheWay === undefined) return;
      if (attempt >= RESET_ATTEMPTS) throw new Error(`read-model checkpoints ${names.join(', ')} stay held by other replacements (last ${inTheWay})`);
      // A swap, or a reset that died half way: what it puts in is replaced again by this reset.
      await finishReplacement(this.db, this.client, this.layout.checkpoints, inTheWay);
    }
  }

  /**
   * Nothing MongoDB can do at once. WiredTiger writes changed pages to new
   * blocks and only marks the old ones, and a deleted document's, free for
   * reuse: the bytes stay in the collection's file until overwritten (the
   * `compact` command rewrites the file and releases free space, without a
   * promise to overwrite it). The journal holds each write until its log file
   * is recycled after a checkpoint, and the oplog (a replica set is required,
   * see the top of this file) keeps every insert, whole document included,
   * until the oplog outgrows its size and the entry its minimum retention.
   * An operator who needs erased answers gone from disk at once must plan for
   * those three; docs/api.md says so.
   */
  async expunge(): Promise<void> {}

  async shadow(collections: CollectionSpec[], checkpointNames: string[]): Promise<ShadowReadModels> {
    for (const name of checkpointNames) {
      if (typeof name !== 'string' || name === '') throw new Error('checkpoint names must be non-empty strings');
    }
    for (const spec of collections) assertName('collection', spec.name);
    // A swap or reset that stopped half way is finished first: some of what it puts in is live already.
    const pending = await this.checkpointsColl.distinct('swap.id', { swap: { $exists: true } });
    for (const id of pending) await finishReplacement(this.db, this.client, this.layout.checkpoints, String(id));
    const id = randomBytes(6).toString('hex');
    // Owned from here on: a rebuild started earlier can no longer swap.
    await this.db.collection<OwnerDoc>(OWNER, { writeConcern: MAJORITY }).replaceOne({ _id: 'owner' }, { id }, { upsert: true });
    // Then whatever an unfinished rebuild left.
    const leftovers = await this.db.listCollections({ name: { $regex: '^rebuild\\.[0-9a-f]+\\.' } }, { nameOnly: true }).toArray();
    for (const { name } of leftovers) await this.db.dropCollection(name, { writeConcern: MAJORITY });
    const shadow = new MongoShadow(this.client, this.db, this.timeoutMs, id, collections, checkpointNames);
    await shadow.ensureCollections(collections);
    return shadow;
  }

  /**
   * One transaction: the lease is taken or renewed, and when its holder
   * changes, the fences of the one before go with it (see FENCES). A renewal
   * leaves the fences alone, so it never conflicts with its own holder's
   * writes.
   */
  async claimLease({ name, holder, now, ttlMs, replacing }: LeaseClaim): Promise<boolean> {
    const claimable: Document[] = [{ holder }, { expires_at: { $lte: now } }];
    if (replacing !== undefined) claimable.push({ holder: replacing });
    const session = this.client.startSession();
    try {
      return await transact(session, async (s) => {
        const before = await this.leases.findOne({ _id: name }, { session: s });
        // Matches a lease this holder may take and updates it; when none matches, the
        // upsert inserts one under the same _id, which fails as a duplicate when the
        // lease exists (held by another): either way one step, one winner (two racing
        // for one document conflict, and the one tried again finds the other's).
        const res = await this.leases.updateOne({ _id: name, $or: claimable }, { $set: { holder, expires_at: new Date(now.getTime() + ttlMs) } }, { upsert: true, session: s });
        if (res.matchedCount !== 1 && res.upsertedCount !== 1) return false;
        if (before?.holder !== holder) await this.fences.deleteMany({ lease: name }, { session: s });
        return true;
      }, TXN, this.timeoutMs * TRANSACTION_BOUND_FACTOR);
    } catch (err) {
      if (hasCode(err, DUPLICATE_KEY)) return false;
      throw err;
    } finally {
      await session.endSession();
    }
  }

  /** The lease and its fences go together, so the holder that released it passes no fence after. */
  async releaseLease(name: string, holder: string): Promise<void> {
    const session = this.client.startSession();
    try {
      await transact(session, async (s) => {
        if ((await this.leases.deleteOne({ _id: name, holder }, { session: s })).deletedCount === 1) await this.fences.deleteMany({ lease: name }, { session: s });
      }, TXN, this.timeoutMs * TRANSACTION_BOUND_FACTOR);
    } finally {
      await session.endSession();
    }
  }

  async lease(name: string): Promise<Lease | null> {
    const doc = await this.leases.findOne({ _id: name }, this.bounded);
    return doc ? { holder: doc.holder, expiresAt: doc.expires_at } : null;
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
}

const recordKey = (collection: string, id: string): string => `${collection}\u0000${id}`;


/** A write's operations on a collection that ranks nothing: one ordered bulkWrite. */
async function writePlain(write: CollectionWrite, session: ClientSession, records: Map<string, string[]>): Promise<void> {
  const models: Array<AnyBulkWriteOperation<StoredDoc>> = [];
  const send = async () => {
    if (models.length > 0) await write.coll.bulkWrite(models.splice(0), { ordered: true, session });
  };
  /** A counter's change, and its deletion once it comes to 0 or below. */
  const tally = (id: string, field: string, by: number, insert: Document | undefined) => {
    const inc: Document = { [field]: by };
    models.push({ updateOne: { filter: { _id: id }, update: { $inc: inc, ...(insert ? { $setOnInsert: insert } : {}) }, upsert: insert !== undefined } });
    if (by < 0) models.push({ deleteOne: { filter: { _id: id, [field]: { $lte: 0 } } } });
  };
  for (const op of write.ops) {
    switch (op.op) {
      case 'put':
        // The filter's _id becomes the new document's _id.
        models.push({ replaceOne: { filter: { _id: op.id }, replacement: op.doc, upsert: true } });
        break;
      case 'patch':
        models.push({ updateMany: { filter: op.filter, update: { $set: op.set } } });
        break;
      case 'increment':
        models.push({ updateOne: { filter: { _id: op.id }, update: { $inc: op.inc } } });
        break;
      case 'delete':
        models.push({ deleteMany: { filter: op.filter } });
        break;
      case 'tally':
        tally(op.id, op.field, op.by, op.insert);
        break;
      case 'retract':
        for (const id of op.known ?? records.get(recordKey(op.record.collection, op.record.id)) ?? []) tally(id, op.field, -1, undefined);
        break;
    }
  }
  await send();
}

/**
 * A write's operations on a ranked collection (see the SQLite adapter for
 * the ranks' rules), as ordered bulkWrites. What the ranks depend on is read
 * before the writes instead of once per operation: every document the write
 * puts or deletes by id in one lookup, and the top rank of each group it
 * adds to or deletes from, once. From there the write keeps track itself;
 * only a delete by another filter must look at the collection again, after
 * sending what came before it. Ranks freed close up at the end, in one more
 * bulkWrite.
 */
async function writeRanked(write: CollectionWrite, within: string, session: ClientSession): Promise<void> {
  const { coll, name } = write;
  const projection = { [within]: 1, _rank: 1 };
  const held = (doc: Document): Held => ({ group: String(doc[within]), rank: Number(doc._rank) });

  /** Where each document named by id stands as of the operations so far (absent: missing). */
  const known = new Map<string, Held | null>();
  const ids = new Set<string>();
  for (const op of write.ops) if ((op.op === 'put' || op.op === 'delete') && op.id !== undefined) ids.add(op.id);
  const all = [...ids];
  for (let i = 0; i < all.length; i += IDS_PER_QUERY) {
    const found = await coll.find({ _id: { $in: all.slice(i, i + IDS_PER_QUERY) } }, { session, projection }).toArray();
    for (const doc of found) known.set(doc._id, held(doc));
  }

  /**
   * The highest rank in each group touched, as of the operations so far:
   * read once, before the first put or delete in the group (none of the
   * unsent ones can have changed it then), and counted on from there. Freed
   * ranks stay counted, so no new rank reuses one.
   */
  const tops = new Map<string, number>();
  const top = async (group: string): Promise<number> => {
    let value = tops.get(group);
    if (value === undefined) {
      value = await topRank(coll, within, group, session);
      tops.set(group, value);
    }
    return value;
  };
  const freed = new Map<string, number[]>();

  const pending: Array<AnyBulkWriteOperation<StoredDoc>> = [];
  const send = async (models: Array<AnyBulkWriteOperation<StoredDoc>>) => {
    if (models.length > 0) await coll.bulkWrite(models, { ordered: true, session });
  };

  for (const op of write.ops) {
    switch (op.op) {
      case 'put': {
        const group = op.group!;
        const current = known.get(op.id) ?? null;
        if (current !== null) {
          if (current.group !== group) throw new Error(`put on ${name}: ${within} ranks the documents and cannot change`);
          pending.push({ replaceOne: { filter: { _id: op.id }, replacement: { ...op.doc, _rank: current.rank } } });
        } else {
          const rank = (await top(group)) + 1;
          tops.set(group, rank);
          known.set(op.id, { group, rank });
          pending.push({ replaceOne: { filter: { _id: op.id }, replacement: { ...op.doc, _rank: rank }, upsert: true } });
        }
        break;
      }
      case 'patch':
        pending.push({ updateMany: { filter: op.filter, update: { $set: op.set } } });
        break;
      case 'increment':
        pending.push({ updateOne: { filter: { _id: op.id }, update: { $inc: op.inc } } });
        break;
      case 'delete': {
        let gone: Array<[string, Held]>;
        if (op.id !== undefined) {
          const current = known.get(op.id) ?? null;
          gone = current === null ? [] : [[op.id, current]];
        } else {
          // The documents matching may include ones this write put: send those first.
          await send(pending.splice(0));
          gone = (await coll.find(op.filter, { session, projection }).toArray()).map((doc) => [doc._id, held(doc)]);
        }
        for (const [id, { group, rank }] of gone) {
          await top(group);
          const ranks = freed.get(group) ?? [];
          ranks.push(rank);
          freed.set(group, ranks);
          known.set(id, null);
        }
        if (gone.length > 0) pending.push({ deleteMany: { filter: op.filter } });
        break;
      }
    }
  }
  await send(pending);
  // Ordered, each group's shifts lowest first (see rankShifts).
  const shifts: Array<AnyBulkWriteOperation<StoredDoc>> = [];
  for (const [group, ranks] of freed) {
    for (const { above, below, by } of rankShifts(ranks, tops.get(group)!)) {
      const inc: Document = { _rank: -by };
      shifts.push({ updateMany: { filter: { [within]: group, _rank: { $gt: above, $lt: below } }, update: { $inc: inc } } });
    }
  }
  await send(shifts);
}

/**
 * A rebuild's shadow collections on the live store's client.
 *
 * Why renames: `renameCollection` with `dropTarget` replaces one collection
 * atomically (readers see the old one or the new one, never neither) and
 * costs the same whatever the size, but it cannot run inside a transaction,
 * so collections are swapped one after another. The alternative, a
 * generation number that every read looks up to pick its collections, would
 * make each read pay for a swap that happens once in a long while.
 *
 * What keeps the renames safe (a reset's the same way, see `reset`):
 * - Before the first rename, one transaction compares the checkpoints (the
 *   shadow must not be behind, see `swap`) and writes a journal onto every
 *   live checkpoint. A projection write compare-and-sets those very
 *   documents, so it either committed before the journal (and was compared)
 *   or meets it and waits; no projection writes into a collection about to
 *   be replaced, so nothing is applied twice or lost.
 * - Then the renames, then one transaction giving the checkpoints the
 *   shadow's positions and removing the journal. Writers go on from there.
 * - Between the first rename and the last, a reader may find one collection
 *   swapped and another not yet (a few milliseconds). The shadow is at or
 *   ahead of the live read models, so such a reader sees each collection at
 *   the live position or later, never earlier.
 * - A swapper that dies half way leaves the journal, which says which renames
 *   remain: the next rebuild finishes it, and so does any writer it has held
 *   back for longer than SWAP_LEASE_MS.
 */
class MongoShadow extends MongoReadModels implements ShadowReadModels {
  private state: 'building' | 'swapped' | 'dropped' = 'building';

  constructor(
    client: MongoClient,
    db: Db,
    timeoutMs: number,
    private readonly id: string,
    private readonly collections: CollectionSpec[],
    private readonly checkpointNames: string[],
  ) {
    super(client, db, timeoutMs, shadowLayout(id));
  }

  override async shadow(): Promise<ShadowReadModels> {
    throw new Error('a shadow has no shadow of its own');
  }

  async swap({ behind = false }: { behind?: boolean } = {}): Promise<boolean> {
    if (this.state !== 'building') throw new Error(`this shadow was already ${this.state}`);
    const live = this.db.collection<CheckpointDoc>(CHECKPOINTS);
    const replacement: Replacement = { kind: 'swap', from: this.layout.prefix, collections: this.collections.map((spec) => spec.name) };
    const session = this.client.startSession();
    let journaled: boolean;
    try {
      journaled = await session.withTransaction(async (s) => {
        // Written, not only read, so that a rebuild taking ownership meanwhile conflicts with this transaction.
        const owner = await this.db.collection<OwnerDoc>(OWNER).findOneAndUpdate({ _id: 'owner' }, { $set: { swapping: this.id } }, { session: s });
        if (owner?.id !== this.id) throw new Error('another rebuild started after this one and took over the shadows');
        const journals: Array<[string, SwapJournal]> = [];
        for (const name of this.checkpointNames) {
          const current = await live.findOne({ _id: name }, { session: s, useBigInt64: true });
          if (current?.swap) throw new Error(`another read-model ${current.swap.kind} (${current.swap.id}) is under way`);
          const built = await this.checkpointsColl.findOne({ _id: name }, { session: s, useBigInt64: true });
          const position = built === null ? null : toBigInt(built.position, name);
          const livePosition = current === null ? 0n : toBigInt(current.position, name);
          if (!behind && livePosition > (position ?? 0n)) {
            await s.abortTransaction();
            return false;
          }
          journals.push([name, { ...replacement, id: this.id, position: position === null ? null : Long.fromBigInt(position), at: new Date() }]);
        }
        for (const [name, swap] of journals) {
          await live.updateOne({ _id: name }, { $set: { swap }, $setOnInsert: { position: Long.fromBigInt(0n) } }, { session: s, upsert: true });
        }
        return true;
      }, TXN);
    } finally {
      await session.endSession();
    }
    if (!journaled) return false;
    this.state = 'swapped';
    await finishReplacement(this.db, this.client, CHECKPOINTS, this.id, replacement);
    return true;
  }

  override async close(): Promise<void> {
    if (this.state !== 'building') return;
    this.state = 'dropped';
    for (const spec of this.collections) await this.coll(spec.name).drop({ writeConcern: MAJORITY });
    await this.checkpointsColl.drop({ writeConcern: MAJORITY });
  }
}

/**
 * Completes replacement `id` from its journal in `checkpoints` (or from
 * `known`, when the caller made it): the renames not done yet, then the
 * checkpoints, last. Idempotent, so a writer that finds it abandoned and the
 * process that started it may both run it: a rename already done answers
 * NamespaceNotFound.
 */
async function finishReplacement(db: Db, client: MongoClient, checkpoints: string, id: string, known?: Replacement): Promise<void> {
  const journals = db.collection<CheckpointDoc>(checkpoints);
  const replacement = known ?? (await journals.findOne({ 'swap.id': id }, { useBigInt64: true }))?.swap;
  // Nothing journaled any more: whoever else was finishing it is done.
  if (replacement === undefined) return;
  for (const name of replacement.collections) {
    // Journal contents come from this code; a stored name still ends with a valid collection name.
    assertName('collection', name.slice(name.lastIndexOf('.') + 1));
    try {
      await db.renameCollection(`${replacement.from}${name}`, name, { dropTarget: true, writeConcern: MAJORITY });
    } catch (err) {
      if (!hasCode(err, NAMESPACE_NOT_FOUND)) throw err;
    }
  }
  const session = client.startSession();
  try {
    await session.withTransaction(async (s) => {
      const models: Array<AnyBulkWriteOperation<CheckpointDoc>> = [];
      for (const doc of await journals.find({ 'swap.id': id }, { session: s, useBigInt64: true }).toArray()) {
        const position = doc.swap?.position ?? null;
        models.push(
          position === null
            ? { deleteOne: { filter: { _id: doc._id } } }
            : { updateOne: { filter: { _id: doc._id }, update: { $set: { position: Long.fromBigInt(toBigInt(position, doc._id)) }, $unset: { swap: '' } } } },
        );
      }
      if (models.length > 0) await journals.bulkWrite(models, { ordered: true, session: s });
      // A rebuild's ownership of the shadows ends with its swap.
      if (replacement.kind === 'swap') await db.collection<OwnerDoc>(OWNER).deleteOne({ _id: 'owner', id }, { session: s });
    }, TXN);
  } finally {
    await session.endSession();
  }
  if (replacement.kind === 'swap') await db.dropCollection(shadowLayout(id).checkpoints, { writeConcern: MAJORITY });
}

// ---------------------------------------------------------------------------

async function topRank(coll: Collection<StoredDoc>, within: string, group: string, session: ClientSession, maxTimeMS?: number): Promise<number> {
  const top = await coll.findOne({ [within]: group }, { session, sort: { _rank: -1 }, projection: { _rank: 1 }, ...(maxTimeMS === undefined ? {} : { maxTimeMS }) });
  return top === null ? 0 : Number(top._rank);
}

/** Creates a collection, tolerating one that exists (or is created concurrently). */
async function createIfMissing(db: Db, name: string): Promise<void> {
  try {
    await db.createCollection(name, { writeConcern: MAJORITY });
  } catch (err) {
    // Older servers answer NamespaceExists; newer ones succeed when the options match.
    if (!hasCode(err, NAMESPACE_EXISTS)) throw err;
  }
}

/** A field a patch or increment may write: a valid name, and neither the key nor the internal _id. */
function settableField(field: string): void {
  assertName('field', field);
  if (field === 'id' || field === '_id' || field === '_rank' || field === '__proto__') {
    throw new Error(`field ${JSON.stringify(field)} cannot be written by patch or increment`);
  }
}

function isScalar(value: unknown): value is string | number | boolean | null {
  return (
    value === null ||
    typeof value === 'string' ||
    typeof value === 'boolean' ||
    (typeof value === 'number' && Number.isFinite(value))
  );
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/**
 * An equality filter: `{field: value}` on validated names and scalar values
 * only. MongoDB equality is type-aware (a string never equals a number) and
 * `{field: null}` matches a null or missing field, as the port wants.
 */
/** The filter with a FindOptions range and keyset start added, each field checked as filters are. */
function withKeyset(query: Document, options: Pick<FindOptions, 'range' | 'after' | 'sort'>): Document {
  const terms: Document[] = [];
  const { range, after, sort } = options;
  if (range) {
    assertName('field', range.field);
    const bounds: Document = {};
    if (range.gte !== undefined) bounds.$gte = checkedBound(range.gte);
    if (range.lte !== undefined) bounds.$lte = checkedBound(range.lte);
    if (Object.keys(bounds).length > 0) terms.push({ [storedField(range.field)]: bounds });
  }
  if (after !== undefined) {
    if (!sort || sort.length === 0 || after.length !== sort.length) throw new Error('after needs one value per sort field');
    const keys = sort.map(([field, direction], i) => {
      assertName('field', field);
      return { field: storedField(field), op: direction === -1 ? '$lt' : '$gt', value: checkedBound(after[i]) };
    });
    terms.push({
      $or: keys.map((key, i) => ({ ...Object.fromEntries(keys.slice(0, i).map((before) => [before.field, before.value])), [key.field]: { [key.op]: key.value } })),
    });
  }
  return terms.length === 0 ? query : { $and: [query, ...terms] };
}

function checkedBound(value: unknown): string | number {
  if (typeof value === 'string' || (typeof value === 'number' && Number.isFinite(value))) return value;
  throw new Error('range and after values must be strings or finite numbers');
}

function toFilter(where: Filter): Document {
  if (!isPlainObject(where)) throw new Error('a filter must be an object of field: scalar');
  const out: Document = {};
  for (const [field, value] of Object.entries(where)) {
    assertName('field', field);
    if (field === '_id' || field === '_rank' || field === '__proto__') throw new Error(`field ${JSON.stringify(field)} cannot be filtered on`);
    if (!isScalar(value)) {
      throw new Error(`filter value for ${field} must be a string, finite number, boolean or null`);
    }
    out[storedField(field)] = value;
  }
  return out;
}

function checkMove(move: CheckpointMove): CheckpointMove {
  if (move === null || typeof move !== 'object') throw new Error('invalid checkpoint move');
  const { name, expected, next } = move;
  if (typeof name !== 'string' || name === '') throw new Error('a checkpoint name must be a non-empty string');
  for (const [what, value] of [
    ['expected', expected],
    ['next', next],
  ] as const) {
    if (typeof value !== 'bigint' || value < 0n || value > INT64_MAX) {
      throw new Error(`checkpoint ${name}: ${what} must be a bigint in 0..2^63-1`);
    }
  }
  return { name, expected, next };
}

/** Reads a stored position (Int64 read with useBigInt64 -> bigint; tolerate Int32/Double). */
function toBigInt(value: unknown, name: string): bigint {
  if (typeof value === 'bigint') return value;
  if (typeof value === 'number' && Number.isSafeInteger(value)) return BigInt(value);
  if (Long.isLong(value)) return value.toBigInt();
  throw new Error(`checkpoint ${name}: stored position is not an integer`);
}

function hasCode(err: unknown, code: number): boolean {
  return err instanceof MongoServerError && Number(err.code) === code;
}

// --- connection string helpers ------------------------------------------------

/** The parts of a mongodb:// or mongodb+srv:// string, split without decoding. */
function splitUrl(url: string): { scheme: string; userinfo: string; hosts: string; path: string; query: string } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)(\/[^?#]*)?(\?[^#]*)?/.exec(url);
  if (!m) return { scheme: '', userinfo: '', hosts: '', path: '', query: '' };
  const authority = m[2] ?? '';
  const at = authority.lastIndexOf('@');
  return {
    scheme: m[1] ?? '',
    userinfo: at >= 0 ? authority.slice(0, at) : '',
    hosts: at >= 0 ? authority.slice(at + 1) : authority,
    path: m[3] ?? '',
    query: m[4] ?? '',
  };
}

/** The database named in the URL's path, else `feedback` (the driver's own default would be `test`). */
export function dbNameOf(url: string): string {
  const { path } = splitUrl(url);
  const raw = path.startsWith('/') ? path.slice(1) : path;
  if (raw === '') return DEFAULT_DB;
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

/** The URL without credentials or options, for messages. */
function describe(url: string): string {
  const { scheme, hosts, path } = splitUrl(url);
  if (!scheme) return '(unparsable connection string)';
  return `${scheme}://${hosts}${path}`;
}

/** Removes every credential-looking part of `url` from `text`. */
function redact(text: string, url: string): string {
  const { userinfo, query } = splitUrl(url);
  const secrets = new Set<string>();
  const add = (s: string) => {
    if (s === '') return;
    secrets.add(s);
    try {
      secrets.add(decodeURIComponent(s));
    } catch {
      // keep the raw form only
    }
  };
  if (userinfo !== '') {
    add(userinfo);
    const colon = userinfo.indexOf(':');
    add(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
    if (colon >= 0) add(userinfo.slice(colon + 1));
  }
  for (const pair of query.replace(/^\?/, '').split('&')) {
    const eq = pair.indexOf('=');
    if (eq < 0) continue;
    if (/password|secret|token|authMechanismProperties/i.test(pair.slice(0, eq))) add(pair.slice(eq + 1));
  }
  let out = text;
  // Longest first, so a secret containing another is removed whole.
  for (const s of [...secrets].sort((a, b) => b.length - a.length)) out = out.split(s).join('***');
  return out;
}
