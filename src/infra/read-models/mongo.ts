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
 */
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
} from './port.js';

const DEFAULT_DB = 'feedback';
const CHECKPOINTS = 'projection_checkpoints';

/** Server error codes (src/mongo/base/error_codes.yml in the server). */
const DUPLICATE_KEY = 11000;
const NAMESPACE_EXISTS = 48;
const COMMAND_NOT_FOUND = 59;

const INT64_MAX = 2n ** 63n - 1n;

type CheckpointDoc = { _id: string; position: unknown };
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
  private readonly checkpointsColl: Collection<CheckpointDoc>;
  /** Ranked collections by name, with the field that groups them. */
  private readonly ranked = new Map<string, string>();

  constructor(
    private readonly client: MongoClient,
    private readonly db: Db,
  ) {
    this.checkpointsColl = db.collection<CheckpointDoc>(CHECKPOINTS);
  }

  private coll(name: string): Collection<StoredDoc> {
    assertName('collection', name);
    return this.db.collection<StoredDoc>(name);
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
      return { name: spec.name, indexes: [...indexes.values()], rankWithin: spec.rankWithin };
    });
    const existing = new Set(
      (await this.db.listCollections({}, { nameOnly: true }).toArray()).map((info) => info.name),
    );
    for (const plan of plans) {
      // Explicitly, so the collection exists before any transaction uses it.
      if (!existing.has(plan.name)) await createIfMissing(this.db, plan.name);
      if (plan.indexes.length > 0) {
        // createIndexes is a no-op for an index that already exists with the same key and name.
        // Majority write concern (inherited from the collection handle): a transaction's
        // snapshot read concern then already sees the new catalog.
        await this.db.collection(plan.name, { writeConcern: MAJORITY }).createIndexes(plan.indexes);
      }
      if (plan.rankWithin !== undefined) this.ranked.set(plan.name, plan.rankWithin);
    }
  }

  async write(ops: ReadModelOp[], checkpoints: CheckpointMove[] = []): Promise<boolean> {
    // Validate (and translate) everything up front: nothing malformed reaches a transaction.
    const moves = checkpoints.map(checkMove);
    const steps = ops.map((op) => this.step(op));
    if (moves.length === 0 && steps.length === 0) return true;

    const session = this.client.startSession();
    try {
      // The callback may run more than once: on a TransientTransactionError
      // (e.g. a WriteConflict with a concurrent writer) withTransaction aborts
      // and calls it again, so the compare-and-set is re-evaluated each time.
      return await session.withTransaction(async (s) => {
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
    return (await coll.findOne({ _id: id }, HIDDEN)) as unknown as Doc | null;
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
    let cursor = coll.find(query, HIDDEN);
    if (sortSpec !== undefined) cursor = cursor.sort(sortSpec);
    if (offset !== undefined && offset > 0) cursor = cursor.skip(offset);
    if (limit !== undefined) cursor = cursor.limit(limit);
    return (await cursor.toArray()) as unknown as Doc[];
  }

  async newestFirst(collection: string, group: string, window: { offset: number; limit: number }): Promise<RankedPage> {
    const coll = this.coll(collection);
    const within = this.ranked.get(collection);
    if (within === undefined) throw new Error(`${collection} is not a ranked collection`);
    if (typeof group !== 'string') throw new Error('group must be a string');
    assertWindow(window);
    const { offset, limit } = window;
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
    return coll.countDocuments(toFilter(filter));
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

  async ping(): Promise<void> {
    await this.db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    await this.client.close();
  }
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
