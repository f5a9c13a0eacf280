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
 * - `write` runs in one multi-document transaction (`withTransaction`) that
 *   first compare-and-sets the projection checkpoints, kept in the
 *   `projection_checkpoints` collection as `{ _id: name, position: Int64 }`.
 *   Transactions need a replica set (or a sharded cluster); a standalone
 *   server is refused at open.
 * - A rebuild fills shadow collections (`rebuild.<id>.<collection>`, a name
 *   no live collection can have: NAME allows no dot) and swaps them in; see
 *   `MongoShadow` for how, and why not in one transaction.
 */
import { randomBytes } from 'node:crypto';
import {
  Long,
  MongoClient,
  MongoServerError,
  WriteConcern,
  type ClientSession,
  type Collection,
  type Db,
  type Document,
  type IndexDescription,
  type TransactionOptions,
} from 'mongodb';
import {
  assertName,
  assertWindow,
  type CollectionSpec,
  type Doc,
  type Filter,
  type FindOptions,
  type ReadModelOp,
  type RankedPage,
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
/** Leases by name: `{ _id: name, holder, expires_at: Date }` (the holder's clock). */
const LEASES = 'leases';
type LeaseDoc = { _id: string; holder: string; expires_at: Date };

/** Server error codes (src/mongo/base/error_codes.yml in the server). */
const DUPLICATE_KEY = 11000;
const NAMESPACE_EXISTS = 48;
const COMMAND_NOT_FOUND = 59;
const NAMESPACE_NOT_FOUND = 26;
/** What a rename does to a read running under it: its plan or cursor killed, its snapshot older than the collection. */
const RENAMED_UNDER_READ = new Set([43, 175, 237, 246]);
const READ_ATTEMPTS = 3;

/** How long a swap may hold projection writes back before a writer takes it for abandoned and finishes it itself. */
const SWAP_LEASE_MS = 60_000;
const SWAP_POLL_MS = 50;

const INT64_MAX = 2n ** 63n - 1n;

/**
 * A checkpoint as stored. `swap` is set while a swap is under way: the
 * shadow's position it will take (null: the shadow has none, so it goes),
 * and enough to finish the swap from any process.
 */
type CheckpointDoc = { _id: string; position: unknown; swap?: SwapJournal };
interface SwapJournal {
  id: string;
  position: Long | null;
  collections: string[];
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
/** One document naming the rebuild that owns the shadows: only that one may swap them in. */
const OWNER = `${SHADOWS}owner`;
type OwnerDoc = { _id: 'owner'; id: string; swapping?: string };

/** A projection write met a checkpoint that a swap holds. */
class SwapUnderWay extends Error {
  constructor(readonly journal: SwapJournal) {
    super(`read-model swap ${journal.id} is under way`);
  }
}
/** A read-model document as stored: the port's document plus `_id` = its `id`. */
type StoredDoc = { _id: string; [field: string]: unknown };
const HIDDEN = { projection: { _id: 0, _rank: 0 } } as const;

/** What one transaction attempt learns about ranked groups (see the SQLite adapter for the reasoning). */
class RankChanges {
  readonly top = new Map<string, number>();
  readonly freed = new Map<string, { coll: Collection<StoredDoc>; within: string; group: string; ranks: number[] }>();
}
type Step = (session: ClientSession, changes: RankChanges) => Promise<unknown>;

const MAJORITY = new WriteConcern('majority');
const TXN: TransactionOptions = {
  readPreference: 'primary',
  readConcern: { level: 'snapshot' },
  writeConcern: MAJORITY,
};

export async function openMongoReadModels(url: string): Promise<ReadModelStore> {
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
    client = new MongoClient(url, { ignoreUndefined: true });
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
    return new MongoReadModels(client, db);
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
  protected readonly checkpointsColl: Collection<CheckpointDoc>;
  /** One collection for the live store and its shadows: a lease is never a rebuild's. */
  private readonly leases: Collection<LeaseDoc>;
  /** Ranked collections by name, with the field that groups them. */
  private readonly ranked = new Map<string, string>();

  constructor(
    protected readonly client: MongoClient,
    protected readonly db: Db,
    protected readonly layout: Layout = LIVE,
  ) {
    this.checkpointsColl = db.collection<CheckpointDoc>(layout.checkpoints);
    this.leases = db.collection<LeaseDoc>(LEASES, { writeConcern: MAJORITY });
  }

  protected coll(name: string): Collection<StoredDoc> {
    assertName('collection', name);
    return this.db.collection<StoredDoc>(`${this.layout.prefix}${name}`);
  }

  /** A read that a swap's rename interrupted is read again, from the collection now under that name. */
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
      for (const fields of spec.indexes) {
        if (!Array.isArray(fields) || fields.length === 0) throw new Error(`empty index on ${spec.name}`);
        const key: Record<string, 1> = {};
        for (const field of fields) {
          assertName('field', field);
          const f = storedField(field);
          if (f in key) throw new Error(`field ${field} appears twice in an index on ${spec.name}`);
          key[f] = 1;
        }
        // The _id index always exists; asking for it again under another name is an error.
        if (fields.length === 1 && key._id === 1) continue;
        const name = Object.keys(key)
          .map((f) => `${f}_1`)
          .join('_');
        indexes.set(name, { key, name });
      }
      if (spec.rankWithin !== undefined) {
        assertName('field', spec.rankWithin);
        const key = { [spec.rankWithin]: 1, _rank: 1 } as const;
        indexes.set(`${spec.rankWithin}_1__rank_1`, { key, name: `${spec.rankWithin}_1__rank_1` });
      }
      return { name: spec.name, stored: `${this.layout.prefix}${spec.name}`, indexes: [...indexes.values()], rankWithin: spec.rankWithin };
    });
    const existing = new Set(
      (await this.db.listCollections({}, { nameOnly: true }).toArray()).map((info) => info.name),
    );
    if (!existing.has(this.layout.checkpoints)) await createIfMissing(this.db, this.layout.checkpoints);
    for (const plan of plans) {
      // Explicitly, so the collection exists before any transaction uses it.
      if (!existing.has(plan.stored)) await createIfMissing(this.db, plan.stored);
      if (plan.indexes.length > 0) {
        // createIndexes is a no-op for an index that already exists with the same key and name.
        // Majority write concern (inherited from the collection handle): a transaction's
        // snapshot read concern then already sees the new catalog.
        await this.db.collection(plan.stored, { writeConcern: MAJORITY }).createIndexes(plan.indexes);
      }
      if (plan.rankWithin !== undefined) this.ranked.set(plan.name, plan.rankWithin);
    }
  }

  async write(ops: ReadModelOp[], checkpoints: CheckpointMove[] = [], fence?: Fence): Promise<boolean> {
    // Validate (and translate) everything up front: nothing malformed reaches a transaction.
    const moves = checkpoints.map(checkMove);
    const steps = ops.map((op) => this.step(op));
    if (moves.length === 0 && steps.length === 0) return true;
    for (;;) {
      try {
        return await this.writeOnce(moves, steps, fence);
      } catch (err) {
        if (!(err instanceof SwapUnderWay)) throw err;
        // Held back until the swap is done, so that nothing lands in a collection about to be replaced.
        if (Date.now() - err.journal.at.getTime() > SWAP_LEASE_MS) await finishSwap(this.db, this.client, err.journal.id);
        else await new Promise((resolve) => setTimeout(resolve, SWAP_POLL_MS));
      }
    }
  }

  private async writeOnce(moves: CheckpointMove[], steps: Step[], fence: Fence | undefined): Promise<boolean> {
    const session = this.client.startSession();
    try {
      // The callback may run more than once: on a TransientTransactionError
      // (e.g. a WriteConflict with a concurrent writer) withTransaction aborts
      // and calls it again, so the compare-and-set is re-evaluated each time.
      return await session.withTransaction(async (s) => {
        // Read in the transaction's snapshot, not written: a takeover that commits after
        // this read is not seen here, but the new holder's first write moves the same
        // checkpoints, so only one of the two commits and no event is applied twice.
        if (fence && (await this.leases.findOne({ _id: fence.name }, { session: s }))?.holder !== fence.holder) throw new LeaseLost(fence.name);
        for (const move of moves) {
          if (!(await this.moveCheckpoint(move, s))) {
            // A manual abort makes withTransaction return the callback's value as is.
            await s.abortTransaction();
            return false;
          }
        }
        // Fresh for every attempt: withTransaction may run this callback again.
        const changes = new RankChanges();
        for (const step of steps) await step(s, changes);
        await closeGaps(changes, s);
        return true;
      }, TXN);
    } finally {
      await session.endSession();
    }
  }

  /** True when the checkpoint was at `expected` and now is at `next` (inside the transaction). */
  private async moveCheckpoint(move: CheckpointMove, session: ClientSession): Promise<boolean> {
    const current = await this.checkpointsColl.findOne({ _id: move.name }, { session, useBigInt64: true });
    // The swap set this inside a transaction that wrote this very document, so no write gets past it unseen.
    if (current?.swap) throw new SwapUnderWay(current.swap);
    if (current === null) {
      if (move.expected !== 0n) return false;
      try {
        await this.checkpointsColl.insertOne({ _id: move.name, position: Long.fromBigInt(move.next) }, { session });
      } catch (err) {
        // Another writer's checkpoint doc is already there: the expectation is stale.
        // (An uncommitted concurrent insert shows up as a WriteConflict instead,
        // which is left to propagate so withTransaction retries and re-reads.)
        if (hasCode(err, DUPLICATE_KEY)) return false;
        throw err;
      }
      return true;
    }
    if (toBigInt(current.position, move.name) !== move.expected) return false;
    const res = await this.checkpointsColl.updateOne(
      { _id: move.name, position: Long.fromBigInt(move.expected) },
      { $set: { position: Long.fromBigInt(move.next) } },
      { session },
    );
    return res.matchedCount === 1;
  }

  /** Validates one op and returns the function that applies it in a session. */
  private step(op: ReadModelOp): Step {
    if (op === null || typeof op !== 'object') throw new Error('invalid read-model op');
    const within = this.ranked.get(op.collection);
    switch (op.op) {
      case 'put': {
        const coll = this.coll(op.collection);
        const doc = op.doc;
        if (!isPlainObject(doc)) throw new Error(`put on ${op.collection}: the document must be an object`);
        if (typeof doc.id !== 'string') throw new Error(`put on ${op.collection}: the document id must be a string`);
        if (Object.hasOwn(doc, '_id') || Object.hasOwn(doc, '_rank')) throw new Error(`put on ${op.collection}: _id and _rank are reserved`);
        const id = doc.id;
        if (within === undefined) return (session) => coll.replaceOne({ _id: id }, { _id: id, ...doc }, { upsert: true, session });
        const group = doc[within];
        if (typeof group !== 'string') throw new Error(`put on ${op.collection}: ${within} must be a string`);
        // A new document takes the group's next rank; a replaced one keeps its own.
        return async (session, changes) => {
          const existing = await coll.findOne({ _id: id }, { session, projection: { [within]: 1, _rank: 1 } });
          if (existing) {
            if (existing[within] !== group) throw new Error(`put on ${op.collection}: ${within} ranks the documents and cannot change`);
            return coll.replaceOne({ _id: id }, { _id: id, ...doc, _rank: existing._rank }, { session });
          }
          const key = `${op.collection}\u0000${group}`;
          const top = changes.top.get(key) ?? (await topRank(coll, within, group, session));
          changes.top.set(key, top + 1);
          return coll.insertOne({ _id: id, ...doc, _rank: top + 1 }, { session });
        };
      }
      case 'patch': {
        const coll = this.coll(op.collection);
        const filter = toFilter(op.where);
        if (!isPlainObject(op.set)) throw new Error(`patch on ${op.collection}: set must be an object`);
        const set: Document = {};
        for (const [field, value] of Object.entries(op.set)) {
          settableField(field);
          if (field === within) throw new Error(`patch on ${op.collection}: ${within} ranks the documents and cannot change`);
          if (value !== undefined) set[field] = value;
        }
        if (Object.keys(set).length === 0) return async () => undefined;
        return (session) => coll.updateMany(filter, { $set: set }, { session });
      }
      case 'increment': {
        const coll = this.coll(op.collection);
        settableField(op.field);
        if (typeof op.id !== 'string') throw new Error(`increment on ${op.collection}: id must be a string`);
        if (typeof op.by !== 'number' || !Number.isFinite(op.by)) {
          throw new Error(`increment on ${op.collection}: by must be a finite number`);
        }
        const { id, field, by } = op;
        // No upsert: a missing document stays missing; $inc on a missing field starts from 0.
        const inc: Document = { [field]: by };
        return (session) => coll.updateOne({ _id: id }, { $inc: inc }, { session });
      }
      case 'delete': {
        const coll = this.coll(op.collection);
        const filter = toFilter(op.where);
        if (within === undefined) return (session) => coll.deleteMany(filter, { session });
        return async (session, changes) => {
          const gone = await coll.find(filter, { session, projection: { [within]: 1, _rank: 1 } }).toArray();
          for (const doc of gone) {
            const group = String(doc[within]);
            const key = `${op.collection}\u0000${group}`;
            // The group's top before the delete, so no new rank reuses a freed one.
            if (!changes.top.has(key)) changes.top.set(key, await topRank(coll, within, group, session));
            const entry = changes.freed.get(key) ?? { coll, within, group, ranks: [] };
            entry.ranks.push(Number(doc._rank));
            changes.freed.set(key, entry);
          }
          return coll.deleteMany(filter, { session });
        };
      }
      default:
        throw new Error(`unknown read-model op ${JSON.stringify((op as { op?: unknown }).op)}`);
    }
  }

  async checkpoints(): Promise<Map<string, bigint>> {
    const docs = await this.checkpointsColl.find({}, { useBigInt64: true }).toArray();
    return new Map(docs.map((d) => [d._id, toBigInt(d.position, d._id)]));
  }

  async get(collection: string, id: string): Promise<Doc | null> {
    const coll = this.coll(collection);
    if (typeof id !== 'string') throw new Error('id must be a string');
    return (await this.read(() => coll.findOne({ _id: id }, HIDDEN))) as unknown as Doc | null;
  }

  async find(collection: string, filter: Filter, options: FindOptions = {}): Promise<Doc[]> {
    const coll = this.coll(collection);
    const query = toFilter(filter);
    const { sort, offset, limit } = options;
    let sortSpec: Record<string, 1 | -1> | undefined;
    if (sort !== undefined) {
      if (!Array.isArray(sort)) throw new Error('sort must be a list of [field, 1 | -1]');
      sortSpec = {};
      for (const entry of sort) {
        if (!Array.isArray(entry)) throw new Error('sort must be a list of [field, 1 | -1]');
        const [field, direction] = entry;
        assertName('field', field);
        if (direction !== 1 && direction !== -1) throw new Error(`sort direction for ${field} must be 1 or -1`);
        const f = storedField(field);
        if (f in sortSpec) throw new Error(`field ${field} appears twice in a sort`);
        sortSpec[f] = direction;
      }
      // A total order, so offset/limit pages are stable.
      if (!('_id' in sortSpec)) sortSpec._id = 1;
    }
    if (offset !== undefined && !(Number.isSafeInteger(offset) && offset >= 0)) {
      throw new Error('offset must be a non-negative integer');
    }
    if (limit !== undefined && !(Number.isSafeInteger(limit) && limit >= 0)) {
      throw new Error('limit must be a non-negative integer');
    }
    // MongoDB reads limit 0 as "no limit"; the port means "nothing".
    if (limit === 0) return [];
    const docs = await this.read(() => {
      let cursor = coll.find(query, HIDDEN);
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
      const total = await topRank(coll, within, group, session);
      const high = total - offset;
      if (high <= 0 || limit === 0) return { docs: [], total };
      const docs = await coll
        .find({ [within]: group, _rank: { $gt: Math.max(0, high - limit), $lte: high } }, { ...HIDDEN, session })
        .sort({ _rank: -1 })
        .toArray();
      return { docs: docs as unknown as Doc[], total };
    } finally {
      await session.endSession();
    }
  }

  async count(collection: string, filter: Filter): Promise<number> {
    const coll = this.coll(collection);
    const query = toFilter(filter);
    return this.read(() => coll.countDocuments(query));
  }

  async reset(collections: string[], checkpointNames: string[]): Promise<void> {
    const colls = collections.map((name) => this.coll(name));
    for (const name of checkpointNames) {
      if (typeof name !== 'string' || name === '') throw new Error('checkpoint names must be non-empty strings');
    }
    const session = this.client.startSession();
    try {
      await session.withTransaction(async (s) => {
        for (const coll of colls) await coll.deleteMany({}, { session: s });
        if (checkpointNames.length > 0) {
          await this.checkpointsColl.deleteMany({ _id: { $in: checkpointNames } }, { session: s });
        }
      }, TXN);
    } finally {
      await session.endSession();
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
    // A swap that stopped half way is finished first: its shadows are complete and some are live already.
    const pending = await this.checkpointsColl.distinct('swap.id', { swap: { $exists: true } });
    for (const id of pending) await finishSwap(this.db, this.client, String(id));
    const id = randomBytes(6).toString('hex');
    // Owned from here on: a rebuild started earlier can no longer swap.
    await this.db.collection<OwnerDoc>(OWNER, { writeConcern: MAJORITY }).replaceOne({ _id: 'owner' }, { id }, { upsert: true });
    // Then whatever an unfinished rebuild left.
    const leftovers = await this.db.listCollections({ name: { $regex: '^rebuild\\.[0-9a-f]+\\.' } }, { nameOnly: true }).toArray();
    for (const { name } of leftovers) await this.db.dropCollection(name, { writeConcern: MAJORITY });
    const shadow = new MongoShadow(this.client, this.db, id, collections, checkpointNames);
    await shadow.ensureCollections(collections);
    return shadow;
  }

  async claimLease({ name, holder, now, ttlMs, replacing }: LeaseClaim): Promise<boolean> {
    const claimable: Document[] = [{ holder }, { expires_at: { $lte: now } }];
    if (replacing !== undefined) claimable.push({ holder: replacing });
    try {
      // Matches a lease this holder may take and updates it; when none matches, the
      // upsert inserts one under the same _id, which fails as a duplicate when the
      // lease exists (held by another): either way one step, one winner.
      const res = await this.leases.updateOne({ _id: name, $or: claimable }, { $set: { holder, expires_at: new Date(now.getTime() + ttlMs) } }, { upsert: true });
      return res.matchedCount === 1 || res.upsertedCount === 1;
    } catch (err) {
      if (hasCode(err, DUPLICATE_KEY)) return false;
      throw err;
    }
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    await this.leases.deleteOne({ _id: name, holder });
  }

  async lease(name: string): Promise<Lease | null> {
    const doc = await this.leases.findOne({ _id: name });
    return doc ? { holder: doc.holder, expiresAt: doc.expires_at } : null;
  }

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
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
 * What keeps the renames safe:
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
    private readonly id: string,
    private readonly collections: CollectionSpec[],
    private readonly checkpointNames: string[],
  ) {
    super(client, db, shadowLayout(id));
  }

  override async shadow(): Promise<ShadowReadModels> {
    throw new Error('a shadow has no shadow of its own');
  }

  async swap({ behind = false }: { behind?: boolean } = {}): Promise<boolean> {
    if (this.state !== 'building') throw new Error(`this shadow was already ${this.state}`);
    const live = this.db.collection<CheckpointDoc>(CHECKPOINTS);
    const collections = this.collections.map((spec) => spec.name);
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
          if (current?.swap) throw new Error(`another read-model swap (${current.swap.id}) is under way`);
          const built = await this.checkpointsColl.findOne({ _id: name }, { session: s, useBigInt64: true });
          const position = built === null ? null : toBigInt(built.position, name);
          const livePosition = current === null ? 0n : toBigInt(current.position, name);
          if (!behind && livePosition > (position ?? 0n)) {
            await s.abortTransaction();
            return false;
          }
          journals.push([name, { id: this.id, position: position === null ? null : Long.fromBigInt(position), collections, at: new Date() }]);
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
    await finishSwap(this.db, this.client, this.id, collections);
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
 * Completes swap `id` from its journal: the renames not done yet, then the
 * checkpoints. Idempotent, so a writer that finds the swap abandoned and the
 * swapper itself may both run it.
 */
async function finishSwap(db: Db, client: MongoClient, id: string, known?: string[]): Promise<void> {
  const live = db.collection<CheckpointDoc>(CHECKPOINTS);
  const journaled = await live.find({ 'swap.id': id }, { useBigInt64: true }).toArray();
  const collections = known ?? journaled.find((doc) => doc.swap)?.swap?.collections ?? [];
  const layout = shadowLayout(id);
  for (const name of collections) {
    assertName('collection', name);
    try {
      await db.renameCollection(`${layout.prefix}${name}`, name, { dropTarget: true, writeConcern: MAJORITY });
    } catch (err) {
      // Renamed already, by whoever else is finishing this swap.
      if (!hasCode(err, NAMESPACE_NOT_FOUND)) throw err;
    }
  }
  const session = client.startSession();
  try {
    await session.withTransaction(async (s) => {
      for (const doc of await live.find({ 'swap.id': id }, { session: s, useBigInt64: true }).toArray()) {
        const position = doc.swap?.position ?? null;
        if (position === null) await live.deleteOne({ _id: doc._id }, { session: s });
        else await live.updateOne({ _id: doc._id }, { $set: { position: Long.fromBigInt(toBigInt(position, doc._id)) }, $unset: { swap: '' } }, { session: s });
      }
      await db.collection<OwnerDoc>(OWNER).deleteOne({ _id: 'owner', id }, { session: s });
    }, TXN);
  } finally {
    await session.endSession();
  }
  await db.dropCollection(layout.checkpoints, { writeConcern: MAJORITY });
}

// ---------------------------------------------------------------------------

async function topRank(coll: Collection<StoredDoc>, within: string, group: string, session: ClientSession): Promise<number> {
  const top = await coll.findOne({ [within]: group }, { session, sort: { _rank: -1 }, projection: { _rank: 1 } });
  return top === null ? 0 : Number(top._rank);
}

/** Moves every rank above freed ones down by the number freed below it, one stretch at a time. */
async function closeGaps(changes: RankChanges, session: ClientSession): Promise<void> {
  for (const { coll, within, group, ranks } of changes.freed.values()) {
    ranks.sort((a, b) => a - b);
    for (const [i, rank] of ranks.entries()) {
      const above = ranks[i + 1];
      const range: Document = above === undefined ? { $gt: rank } : { $gt: rank, $lt: above };
      const inc: Document = { _rank: -(i + 1) };
      await coll.updateMany({ [within]: group, _rank: range }, { $inc: inc }, { session });
    }
  }
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

function storedField(field: string): string {
  return field === 'id' ? '_id' : field;
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
function dbNameOf(url: string): string {
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
