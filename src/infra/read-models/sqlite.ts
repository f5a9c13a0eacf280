import { randomBytes } from 'node:crypto';
import type { Statement } from 'better-sqlite3';
import { PendingCounts, type HeldCount } from './pending-counts.js';
import { checkpointFileInBackground, openDatabase, truncateWriteAheadLog, type BackgroundCheckpoints, type SqliteDatabase, type StoreLogger } from '../sqlite.js';
import {
  assertName,
  assertWindow,
  NAME,
  type CheckpointMove,
  type CollectionSpec,
  LeaseLost,
  type Doc,
  type Fence,
  type Filter,
  type FindOptions,
  type Lease,
  type LeaseClaim,
  type ReadModelOp,
  type RankedPage,
  type Range,
  type ReadModelStore,
  type Scalar,
  type ShadowReadModels,
} from './port.js';

/** What one write learns as it goes: each ranked group's next rank and the ranks its deletes freed, and which collections it changed by filter. */
class WriteChanges {
  readonly top = new Map<string, number>();
  readonly freed = new Map<string, { table: string; group: string; ranks: number[] }>();
  /** Collections patched, or deleted from by anything but an id, so far in the write: a retract may not read a record from them (see the port). */
  readonly filtered = new Set<string>();
  /** Whether a delete removed a document of a collection with plain values: their tables are rewritten before the write commits. */
  plainDeleted = false;

  static key(table: string, group: string): string {
    return `${table}\u0000${group}`;
  }

  free(table: string, group: string, rank: number): void {
    const key = WriteChanges.key(table, group);
    const entry = this.freed.get(key) ?? { table, group, ranks: [] };
    entry.ranks.push(rank);
    this.freed.set(key, entry);
  }
}

/** Where a store's tables live: the live read models, or a rebuild's shadows beside them. */
interface Layout {
  /** The table of collection `c` is this prefix and `c`. */
  tables: 'rm_' | 'rs_';
  checkpoints: 'projection_checkpoints' | 'shadow_checkpoints';
}
const LIVE: Layout = { tables: 'rm_', checkpoints: 'projection_checkpoints' };
const SHADOW: Layout = { tables: 'rs_', checkpoints: 'shadow_checkpoints' };
/** A swap renames the live tables it replaces to this prefix; closing the swapped shadow drops them (and the next rebuild, any it left). */
const RETIRED = 'rr_';
/** Leases by name: who holds each, until when (ms since the epoch, by the holder's clock). */
const LEASES = 'leases';
/** The one row naming the rebuild whose shadow tables these are. */
const OWNER = 'rebuild_shadow';

/**
 * Index names are global in the file, and a renamed table keeps the names of
 * its indexes. A shadow table cannot take the names its live twin holds, yet
 * must carry indexes under names ensureCollections recognises once it is
 * swapped in: so every index has two names, `ix_<base>` and `iy_<base>`. A
 * table keeps the one it has; a new index takes the one no other table holds.
 */
const INDEX_PREFIXES = ['ix_', 'iy_'] as const;

/**
 * Read models in the embedded SQLite file: one table per collection holding
 * JSON documents, with expression indexes on the fields the queries use.
 * Every name is checked against NAME before it is put into SQL text; values
 * are always bound parameters.
 */
export class SqliteReadModels implements ReadModelStore {
  readonly kind = 'sqlite' as const;
  private readonly cache = new Map<string, Statement>();
  /** Ranked collections by name, with the field that groups them. */
  private readonly ranked = new Map<string, string>();
  /** Per collection of records, what a document counted in (the spec's `counted`), for retract. */
  private readonly counted = new Map<string, (doc: Doc) => string[]>();
  /** The collections whose tables are rewritten when a delete removes one of their documents (the port's plainValues). */
  private readonly plain = new Set<string>();
  /** Collections that keep their indexed fields in columns (`indexedColumns`), by name. */
  private readonly columns = new Map<string, FieldColumns>();

  constructor(
    protected readonly db: SqliteDatabase,
    private readonly layout: Layout = LIVE,
    protected readonly logger?: StoreLogger,
  ) {
    db.exec(`CREATE TABLE IF NOT EXISTS ${layout.checkpoints} (name TEXT PRIMARY KEY, position INTEGER NOT NULL)`);
    db.exec(`CREATE TABLE IF NOT EXISTS ${LEASES} (name TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_at INTEGER NOT NULL)`);
  }

  private readonly tables = new Map<string, string>();
  protected table(collection: string): string {
    let table = this.tables.get(collection);
    if (table === undefined) {
      assertName('collection', collection);
      this.tables.set(collection, (table = `${this.layout.tables}${collection}`));
    }
    return table;
  }

  /** SQL text built once per key: a statement looked up by a string made anew each time costs a rebuild a hash of it per row. */
  private readonly texts = new Map<string, string>();
  private text(key: string, build: () => string): string {
    let sql = this.texts.get(key);
    if (sql === undefined) this.texts.set(key, (sql = build()));
    return sql;
  }

  /**
   * How a collection's rows are read back as documents. A collection with
   * `indexedColumns` may be handed texts without the string fields its
   * columns hold (the port's put): a field the text lacks is taken from its
   * column.
   */
  private readonly readers = new Map<string, { columns: string; read: (row: StoredRow) => Doc }>();
  private reader(collection: string): { columns: string; read: (row: StoredRow) => Doc } {
    let reader = this.readers.get(collection);
    if (reader === undefined) {
      const own = this.columns.get(collection);
      const kept: Array<[field: string, column: string]> = own ? [['id', 'id'], ...own.byField] : [];
      reader =
        kept.length === 0
          ? { columns: 'doc', read: (row) => JSON.parse(row.doc) as Doc }
          : {
              columns: ['doc', ...new Set(kept.map(([, column]) => column))].join(', '),
              read: (row) => {
                const doc = JSON.parse(row.doc) as Doc;
                // Only strings may be left out of a text (the port's put): a column's number or 1 for true is no such field.
                for (const [field, column] of kept) if (typeof row[column] === 'string' && !Object.hasOwn(doc, field)) doc[field] = row[column];
                return doc;
              },
            };
      this.readers.set(collection, reader);
    }
    return reader;
  }

  private statement(sql: string): Statement {
    let statement = this.cache.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.cache.set(sql, statement);
    }
    return statement;
  }

  async ensureCollections(specs: CollectionSpec[]): Promise<void> {
    // The columns a put fills may change here.
    this.texts.clear();
    this.readers.clear();
    this.db.transaction(() => {
      for (const spec of specs) {
        const table = this.table(spec.name);
        // Large documents in a rowid table (see the port's largeDocuments): in a table without one, a row over
        // about 1,000 bytes spills into an overflow page of its own; here a page holds two or three of them.
        this.db.exec(
          spec.largeDocuments
            ? `CREATE TABLE IF NOT EXISTS ${table} (id TEXT NOT NULL PRIMARY KEY, doc TEXT NOT NULL)`
            : `CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, doc TEXT NOT NULL) WITHOUT ROWID`,
        );
        /** Index columns by base name (the index name without its prefix). */
        const wanted = new Map<string, string>();
        const existing = new Set((this.db.pragma(`table_info(${table})`) as Array<{ name: string }>).map((c) => c.name));
        const addColumn = (name: string, type: string) => {
          if (!existing.has(name)) this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${name} ${type}`);
        };
        if (spec.rankWithin !== undefined) {
          assertName('field', spec.rankWithin);
          // Real columns, so the rank index is read and renumbered without touching the JSON.
          addColumn('grp', 'TEXT');
          addColumn('rank', 'INTEGER');
          wanted.set(`${spec.name}_rank`, 'grp, rank');
          this.ranked.set(spec.name, spec.rankWithin);
        }
        if (spec.counted) this.counted.set(spec.name, spec.counted);
        else this.counted.delete(spec.name);
        if (spec.plainValues) this.plain.add(spec.name);
        else this.plain.delete(spec.name);
        if (spec.indexedColumns) {
          const own: FieldColumns = { byField: new Map(), extra: [] };
          for (const field of new Set(spec.indexes.flat())) {
            if (field === 'id') continue;
            assertName('field', field);
            // The group of a ranked collection has its column already.
            const name = field === spec.rankWithin ? 'grp' : `f_${field}`;
            own.byField.set(field, name);
            if (name === 'grp') continue;
            own.extra.push({ field, column: name });
            // No type: a column without one keeps each value as bound, as json_extract would give it.
            addColumn(name, '');
          }
          this.columns.set(spec.name, own);
        } else {
          this.columns.delete(spec.name);
        }
        const columnOf = this.columnResolver(spec.name);
        for (const fields of spec.indexes) {
          const base = `${spec.name}_${fields.join('_')}`;
          for (const prefix of INDEX_PREFIXES) assertName('index', `${prefix}${base}`);
          wanted.set(base, fields.map(columnOf).join(', '));
        }
        const present = new Map((this.db.prepare(OUR_INDEXES).all(table) as Array<{ name: string; sql: string }>).map((row) => [row.name, row.sql]));
        for (const [base, columns] of wanted) {
          const held = INDEX_PREFIXES.map((prefix) => `${prefix}${base}`).find((name) => present.has(name));
          if (held !== undefined) {
            if (indexedExpressions(present.get(held)!) === columns) continue;
            // The same fields in another layout (columns rather than the JSON, or back): this one serves no query now.
            this.db.exec(`DROP INDEX ${held}`);
            present.delete(held);
          }
          const free = INDEX_PREFIXES.map((prefix) => `${prefix}${base}`).find((name) => this.statement(INDEX_NAMED).get(name) === undefined);
          if (free === undefined) throw new Error(`index ${base} on ${table}: both of its names are held by other tables`);
          this.db.exec(`CREATE INDEX ${free} ON ${table} (${columns})`);
        }
        // An index an older version declared costs every insert and serves no query now.
        for (const index of present.keys()) if (!wanted.has(index.slice(3)) && NAME.test(index)) this.db.exec(`DROP INDEX ${index}`);
      }
    }).immediate();
  }

  /** The SQL expression of a field of the collection: its own column, or the value in the JSON. */
  private columnResolver(collection: string): (field: string) => string {
    const own = this.columns.get(collection)?.byField;
    return own ? (field) => own.get(field) ?? column(field) : column;
  }

  private readonly writeTransaction = (ops: ReadModelOp[], checkpoints: CheckpointMove[], fence: Fence | undefined): boolean => {
    // Inside the IMMEDIATE transaction: a takeover commits before this write or after it, never in between.
    if (fence && this.statement(`SELECT holder FROM ${LEASES} WHERE name = ?`).pluck().get(fence.name) !== fence.holder) throw new LeaseLost(fence.name);
    const current = this.statement(`SELECT position FROM ${this.layout.checkpoints} WHERE name = ?`);
    for (const move of checkpoints) {
      const row = current.get(move.name) as { position: number | bigint } | undefined;
      if (BigInt(row?.position ?? 0) !== move.expected) return false;
    }
    const changes = new WriteChanges();
    const counts = new PendingCounts();
    const write = (held: HeldCount) => this.apply({ op: 'tally', ...held }, changes);
    for (const op of ops) {
      if (counts.take(op)) continue;
      counts.release(op).forEach(write);
      this.apply(op, changes);
    }
    counts.release(undefined).forEach(write);
    this.closeGaps(changes);
    if (changes.plainDeleted) for (const collection of this.plain) rewriteTable(this.db, this.table(collection));
    const upsert = this.statement(
      `INSERT INTO ${this.layout.checkpoints} (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position`,
    );
    for (const move of checkpoints) upsert.run(move.name, move.next);
    return true;
  };

  async write(ops: ReadModelOp[], checkpoints: CheckpointMove[] = [], fence?: Fence): Promise<boolean> {
    return this.db.transaction(this.writeTransaction).immediate(ops, checkpoints, fence);
  }

  async claimLease({ name, holder, now, ttlMs, replacing }: LeaseClaim): Promise<boolean> {
    // An upsert whose update is refused by its WHERE changes no row: the lease is someone else's.
    const taken = this.statement(
      `INSERT INTO ${LEASES} (name, holder, expires_at) VALUES (@name, @holder, @expires)
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
       WHERE ${LEASES}.holder = excluded.holder OR ${LEASES}.expires_at <= @now OR ${LEASES}.holder = @replacing`,
    ).run({ name, holder, expires: now.getTime() + ttlMs, now: now.getTime(), replacing: replacing ?? null });
    return taken.changes === 1;
  }

  async releaseLease(name: string, holder: string): Promise<void> {
    this.statement(`DELETE FROM ${LEASES} WHERE name = ? AND holder = ?`).run(name, holder);
  }

  async lease(name: string): Promise<Lease | null> {
    const row = this.statement(`SELECT holder, expires_at FROM ${LEASES} WHERE name = ?`).get(name) as { holder: string; expires_at: number } | undefined;
    return row ? { holder: row.holder, expiresAt: new Date(row.expires_at) } : null;
  }

  private apply(op: ReadModelOp, changes: WriteChanges): void {
    const table = this.table(op.collection);
    const within = this.ranked.get(op.collection);
    const own = this.columns.get(op.collection);
    switch (op.op) {
      case 'put': {
        if (within !== undefined) return this.putRanked(table, within, op.doc, op.json ?? textOf(op.doc, own), changes, own?.extra ?? []);
        const extra = own?.extra ?? [];
        this.statement(
          this.text(
            `put:${table}`,
            () =>
              `INSERT INTO ${table} (id, doc${extra.map((c) => `, ${c.column}`).join('')}) VALUES (?, ?${', ?'.repeat(extra.length)}) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc${extra.map((c) => `, ${c.column} = excluded.${c.column}`).join('')}`,
          ),
        ).run(op.doc.id, op.json ?? textOf(op.doc, own), ...extra.map((c) => columnValue(op.doc[c.field])));
        return;
      }
      case 'patch': {
        changes.filtered.add(op.collection);
        const fields = Object.keys(op.set);
        if (fields.length === 0) return;
        if (within !== undefined && fields.includes(within)) throw new Error(`patch on ${op.collection}: ${within} ranks the documents and cannot change`);
        const where = whereClause(this.columnResolver(op.collection), op.where);
        const assignments = fields.map((field) => `${jsonPath(field)}, json(?)`).join(', ');
        const columns = (own?.extra ?? []).filter((c) => fields.includes(c.field));
        this.statement(`UPDATE ${table} SET doc = json_set(doc, ${assignments})${columns.map((c) => `, ${c.column} = ?`).join('')} ${where.sql}`).run(
          ...fields.map((field) => JSON.stringify(op.set[field] ?? null)),
          ...columns.map((c) => columnValue(op.set[c.field])),
          ...where.params,
        );
        return;
      }
      case 'increment': {
        const path = jsonPath(op.field);
        const counter = own?.extra.find((c) => c.field === op.field)?.column;
        this.statement(
          `UPDATE ${table} SET doc = json_set(doc, ${path}, coalesce(json_extract(doc, ${path}), 0) + ?)${counter ? `, ${counter} = coalesce(json_extract(doc, ${path}), 0) + ?` : ''} WHERE id = ?`,
        ).run(...(counter ? [op.by, op.by] : [op.by]), op.id);
        return;
      }
      case 'tally':
        if (within !== undefined) throw new Error(`tally on ${op.collection}: not on a ranked collection`);
        return this.tally(table, own?.extra ?? [], op.doc, op.field, op.by, true);
      case 'retract': {
        if (within !== undefined) throw new Error(`retract on ${op.collection}: not on a ranked collection`);
        const record = op.record;
        if (record === null || typeof record !== 'object' || typeof record.id !== 'string') throw new Error(`retract on ${op.collection}: record must name a collection and an id`);
        if (changes.filtered.has(record.collection)) throw new Error(`retract on ${op.collection}: ${record.collection} was patched or deleted by a filter earlier in this write`);
        const counted = this.counted.get(record.collection);
        if (counted === undefined) throw new Error(`retract on ${op.collection}: ${record.collection} does not say what its records counted`);
        const reader = this.reader(record.collection);
        const row = this.statement(`SELECT ${reader.columns} FROM ${this.table(record.collection)} WHERE id = ?`).get(record.id) as StoredRow | undefined;
        if (row === undefined) return;
        for (const id of counted(reader.read(row))) this.tally(table, own?.extra ?? [], { id }, op.field, -1, false);
        return;
      }
      case 'delete': {
        if (!isById(op.where)) changes.filtered.add(op.collection);
        const where = whereClause(this.columnResolver(op.collection), op.where);
        if (within !== undefined) {
          const rows = this.statement(`SELECT grp, rank FROM ${table} ${where.sql}`).all(...where.params) as Array<{ grp: string; rank: number }>;
          for (const row of rows) {
            // Remember the group's top before the delete, so no new rank reuses a freed one.
            const key = WriteChanges.key(table, row.grp);
            if (!changes.top.has(key)) changes.top.set(key, this.topRank(table, row.grp));
            changes.free(table, row.grp, row.rank);
          }
        }
        const deleted = this.statement(`DELETE FROM ${table} ${where.sql}`).run(...where.params).changes;
        if (deleted > 0 && this.plain.has(op.collection)) changes.plainDeleted = true;
        return;
      }
    }
  }

  /**
   * Adds `by` to a counter (creating it as `doc` when `create`), and deletes
   * it when it comes to 0 or below. A collection with `indexedColumns` gets
   * its columns filled as a put fills them, the counted field's kept in step.
   */
  private tally(table: string, extra: FieldColumns['extra'], doc: Doc, field: string, by: number, create: boolean): void {
    if (!Number.isFinite(by)) throw new Error(`tally on ${table}: by must be a finite number`);
    const path = jsonPath(field);
    const counted = extra.find((c) => c.field === field)?.column;
    // Every SET expression reads the row as it was: the column and the document add `by` to the same value.
    const add = `doc = json_set(doc, ${path}, coalesce(json_extract(doc, ${path}), 0) + ?)${counted ? `, ${counted} = coalesce(json_extract(doc, ${path}), 0) + ?` : ''}`;
    const added = counted ? [by, by] : [by];
    if (create) {
      const others = extra.filter((c) => c.field !== field);
      const columns = [...(counted ? [counted] : []), ...others.map((c) => c.column)];
      this.statement(
        `INSERT INTO ${table} (id, doc${columns.map((c) => `, ${c}`).join('')}) VALUES (?, json_set(?, ${path}, ?)${', ?'.repeat(columns.length)})
         ON CONFLICT (id) DO UPDATE SET ${add}`,
      ).run(doc.id, JSON.stringify(doc), by, ...(counted ? [by] : []), ...others.map((c) => columnValue(doc[c.field])), ...added);
    } else {
      this.statement(`UPDATE ${table} SET ${add} WHERE id = ?`).run(...added, doc.id);
    }
    // Only a negative tally can bring a counter to zero: the common case, a count up, skips the check.
    if (by < 0) this.statement(`DELETE FROM ${table} WHERE id = ? AND json_extract(doc, ${path}) <= 0`).run(doc.id);
  }

  /** A new document takes the group's next rank; a replaced one keeps its own. */
  private putRanked(table: string, within: string, doc: Doc, json: string, changes: WriteChanges, extra: FieldColumns['extra']): void {
    const group = doc[within];
    if (typeof group !== 'string') throw new Error(`put on ${table}: ${within} must be a string`);
    const key = WriteChanges.key(table, group);
    // Ranks freed in this write close up at its end, so new ones count on from the highest ever given.
    const top = changes.top.get(key) ?? this.topRank(table, group);
    // Most puts are new documents: try the insert first rather than looking the id up.
    const values = extra.map((c) => columnValue(doc[c.field]));
    const inserted = this.statement(
      this.text(`put-ranked:${table}`, () => `INSERT INTO ${table} (id, doc, grp, rank${extra.map((c) => `, ${c.column}`).join('')}) VALUES (?, ?, ?, ?${', ?'.repeat(extra.length)}) ON CONFLICT (id) DO NOTHING`),
    ).run(doc.id, json, group, top + 1, ...values);
    if (inserted.changes === 1) {
      changes.top.set(key, top + 1);
      return;
    }
    changes.top.set(key, top);
    const existing = this.statement(`SELECT grp FROM ${table} WHERE id = ?`).get(doc.id) as { grp: string };
    if (existing.grp !== group) throw new Error(`put on ${table}: ${within} ranks the documents and cannot change`);
    this.statement(`UPDATE ${table} SET doc = ?${extra.map((c) => `, ${c.column} = ?`).join('')} WHERE id = ?`).run(json, ...values, doc.id);
  }

  private topRank(table: string, group: string): number {
    return (this.statement(`SELECT coalesce(max(rank), 0) AS top FROM ${table} WHERE grp = ?`).get(group) as { top: number }).top;
  }

  /**
   * Moves every rank above freed ones down by the number freed below it: one
   * statement per stretch between two freed ranks, each stretch moved once.
   */
  private closeGaps(changes: WriteChanges): void {
    for (const { table, group, ranks } of changes.freed.values()) {
      ranks.sort((a, b) => a - b);
      const shift = this.statement(`UPDATE ${table} SET rank = rank - ? WHERE grp = ? AND rank > ? AND rank < ?`);
      ranks.forEach((rank, i) => shift.run(i + 1, group, rank, ranks[i + 1] ?? Number.MAX_SAFE_INTEGER));
    }
  }

  async checkpoints(): Promise<Map<string, bigint>> {
    const rows = this.statement(`SELECT name, position FROM ${this.layout.checkpoints}`).all() as Array<{
      name: string;
      position: number;
    }>;
    return new Map(rows.map((row) => [row.name, BigInt(row.position)]));
  }

  async get(collection: string, id: string): Promise<Doc | null> {
    const reader = this.reader(collection);
    const row = this.statement(`SELECT ${reader.columns} FROM ${this.table(collection)} WHERE id = ?`).get(id) as StoredRow | undefined;
    return row ? reader.read(row) : null;
  }

  async find(collection: string, filter: Filter, options: FindOptions = {}): Promise<Doc[]> {
    const columnOf = this.columnResolver(collection);
    const where = whereClause(columnOf, filter, options.range, keyset(options));
    const order = options.sort?.length
      ? `ORDER BY ${options.sort.map(([field, direction]) => `${columnOf(field)} ${direction === -1 ? 'DESC' : 'ASC'}`).join(', ')}`
      : '';
    const reader = this.reader(collection);
    const sql = `SELECT ${reader.columns} FROM ${this.table(collection)} ${where.sql} ${order} LIMIT ? OFFSET ?`;
    const rows = this.statement(sql).all(...where.params, options.limit ?? -1, options.offset ?? 0) as StoredRow[];
    return rows.map(reader.read);
  }

  private readonly rankedPage = (collection: string, group: string, offset: number, limit: number): RankedPage => {
    const table = this.table(collection);
    // Ranks are dense, so the top one is the group's size.
    const total = this.topRank(table, group);
    const high = total - offset;
    if (high <= 0 || limit <= 0) return { docs: [], total };
    const reader = this.reader(collection);
    const rows = this.statement(`SELECT ${reader.columns} FROM ${table} WHERE grp = ? AND rank > ? AND rank <= ? ORDER BY rank DESC`).all(group, Math.max(0, high - limit), high) as StoredRow[];
    return { docs: rows.map(reader.read), total };
  };

  async newestFirst(collection: string, group: string, window: { offset: number; limit: number }): Promise<RankedPage> {
    if (!this.ranked.has(collection)) throw new Error(`${collection} is not a ranked collection`);
    assertWindow(window);
    // One read transaction, so the total and the page come from the same snapshot.
    return this.db.transaction(this.rankedPage).deferred(collection, group, window.offset, window.limit);
  }

  async count(collection: string, filter: Filter, range?: Range): Promise<number> {
    const where = whereClause(this.columnResolver(collection), filter, range);
    const row = this.statement(`SELECT count(*) AS n FROM ${this.table(collection)} ${where.sql}`).get(
      ...where.params,
    ) as { n: number };
    return row.n;
  }

  async reset(collections: string[], checkpointNames: string[]): Promise<void> {
    this.db.transaction(() => {
      for (const collection of collections) this.db.exec(`DELETE FROM ${this.table(collection)}`);
      const forget = this.statement(`DELETE FROM ${this.layout.checkpoints} WHERE name = ?`);
      for (const name of checkpointNames) forget.run(name);
    }).immediate();
  }

  /** As the event store's: both share the file, so either one's checkpoint serves both. */
  async expunge(): Promise<void> {
    if (!(await truncateWriteAheadLog(this.db))) {
      this.logger?.warn({ store: 'sqlite' }, 'another connection holds an older snapshot: deleted documents stay in the write-ahead log until the next checkpoint (run `admin scavenge` to retry)');
    }
  }

  async shadow(collections: CollectionSpec[], checkpointNames: string[]): Promise<ShadowReadModels> {
    for (const name of checkpointNames) if (typeof name !== 'string' || name === '') throw new Error('checkpoint names must be non-empty strings');
    for (const spec of collections) assertName('collection', spec.name);
    const id = randomBytes(8).toString('hex');
    this.db.transaction(() => {
      // Owned from here on: a rebuild started earlier can no longer swap, nor drop what this one builds.
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${OWNER} (id TEXT NOT NULL)`);
      this.db.exec(`DELETE FROM ${OWNER}`);
      this.db.prepare(`INSERT INTO ${OWNER} (id) VALUES (?)`).run(id);
      this.db.exec(`CREATE TABLE IF NOT EXISTS ${SHADOW.checkpoints} (name TEXT PRIMARY KEY, position INTEGER NOT NULL)`);
      this.db.exec(`DELETE FROM ${SHADOW.checkpoints}`);
    }).immediate();
    // What an unfinished rebuild left: its shadows, and live tables a swap retired but did not drop yet.
    dropTables(this.db, [...this.leftovers(SHADOW.tables), ...this.leftovers(RETIRED)]);
    const shadow = new SqliteShadow(this.db, id, collections, checkpointNames, this.logger);
    await shadow.ensureCollections(collections);
    return shadow;
  }

  private leftovers(prefix: string): string[] {
    const tables = this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 3) = ?").pluck().all(prefix) as string[];
    return tables.filter((table) => NAME.test(table));
  }

  async ping(): Promise<void> {
    this.statement('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

/** The swappable indexes of one table. */
const OUR_INDEXES = "SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND substr(name, 1, 3) IN ('ix_', 'iy_')";
const INDEX_NAMED = "SELECT 1 FROM sqlite_master WHERE type = 'index' AND name = ?";

/**
 * Writes the table anew, with its indexes, and drops the old one inside the
 * caller's transaction. A page split leaves copies of the rows it moved in
 * the unused space of the page they left, which secure_delete does not
 * overwrite; dropping the table overwrites every one of its pages (and its
 * indexes') as it frees them, so the only copies left are the live rows'.
 */
function rewriteTable(db: SqliteDatabase, table: string): void {
  if (!NAME.test(table)) throw new Error(`invalid table name: ${JSON.stringify(table)}`);
  const made = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'table' AND name = ?").pluck().get(table) as string | undefined;
  if (made === undefined) return;
  const indexes = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND sql IS NOT NULL").pluck().all(table) as string[];
  const copy = `${table}_rewritten`;
  const head = /^CREATE TABLE (?:"[^"]+"|\w+)/.exec(made);
  if (head === null) throw new Error(`cannot read how ${table} was made`);
  db.exec(`DROP TABLE IF EXISTS ${copy}`);
  db.exec(`CREATE TABLE ${copy}${made.slice(head[0].length)}`);
  db.exec(`INSERT INTO ${copy} SELECT * FROM ${table}`);
  db.exec(`DROP TABLE ${table}`);
  db.exec(`ALTER TABLE ${copy} RENAME TO ${table}`);
  for (const sql of indexes) db.exec(sql);
}

/** One transaction a table: dropping a large one takes a while, and appends wait for the lock meanwhile. */
function dropTables(db: SqliteDatabase, tables: string[]): void {
  for (const table of tables) {
    if (!NAME.test(table)) throw new Error(`invalid table name: ${JSON.stringify(table)}`);
    db.transaction(() => db.exec(`DROP TABLE IF EXISTS ${table}`)).immediate();
  }
}

/**
 * A rebuild's shadow tables (`rs_<collection>`, with checkpoints in
 * `shadow_checkpoints`) on the live store's connection. Its id in
 * `rebuild_shadow` says which rebuild owns the shadow tables: only that one
 * swaps or drops them. The swap is one IMMEDIATE transaction: other
 * connections read the old tables until it commits and the new ones after,
 * and a live runner's next compare-and-set meets the shadow's checkpoints.
 */
class SqliteShadow extends SqliteReadModels implements ShadowReadModels {
  private state: 'building' | 'swapped' | 'dropped' = 'building';
  /** The connection's own checkpoint interval, given back when the shadow is gone. */
  private readonly checkpointEvery: number;
  /** The thread that copies the log into the file while the shadow fills. */
  private readonly background: BackgroundCheckpoints | undefined;

  constructor(
    db: SqliteDatabase,
    private readonly id: string,
    private readonly collections: CollectionSpec[],
    private readonly checkpointNames: string[],
    logger?: StoreLogger,
  ) {
    super(db, SHADOW, logger);
    // A rebuild writes its whole history through the log: copying it into the file every
    // 1000 pages (4 MB) means a pair of fsyncs per batch or so; every 64 MB, a sixteenth of them.
    this.checkpointEvery = db.pragma('wal_autocheckpoint', { simple: true }) as number;
    db.pragma(`wal_autocheckpoint = ${REBUILD_CHECKPOINT_PAGES}`);
    // And copied on a thread of its own, as a server does: the writing thread then neither copies
    // the pages nor waits for the file's sync, which took a third of a rebuild's writing thread.
    this.background = db.memory ? undefined : checkpointFileInBackground(db.name, logger);
  }

  /** Gives the connection its interval back, and copies what the rebuild left in the log now rather than at some later commit. */
  private async settle(): Promise<void> {
    await this.background?.stop();
    if (!this.db.open) return;
    this.db.pragma(`wal_autocheckpoint = ${this.checkpointEvery}`);
    this.db.pragma('wal_checkpoint(PASSIVE)');
  }

  override async shadow(): Promise<ShadowReadModels> {
    throw new Error('a shadow has no shadow of its own');
  }

  private owned(): boolean {
    return this.db.prepare(`SELECT 1 FROM ${OWNER} WHERE id = ?`).get(this.id) !== undefined;
  }

  async swap({ behind = false }: { behind?: boolean } = {}): Promise<boolean> {
    if (this.state !== 'building') throw new Error(`this shadow was already ${this.state}`);
    const names = this.collections.map((spec) => ({ live: `${LIVE.tables}${spec.name}`, shadow: this.table(spec.name), retired: `${RETIRED}${spec.name}` }));
    const exists = this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?");
    const swapped = this.db.transaction((): boolean => {
      if (!this.owned()) throw new Error('another rebuild started after this one and took its shadow tables');
      const position = (table: string, name: string) => BigInt((this.db.prepare(`SELECT position FROM ${table} WHERE name = ?`).pluck().get(name) as number | bigint | undefined) ?? 0);
      if (!behind && this.checkpointNames.some((name) => position(LIVE.checkpoints, name) > position(SHADOW.checkpoints, name))) return false;
      for (const { live, shadow, retired } of names) {
        // Renamed aside, not dropped: a rename is quick whatever the table's size, and appends wait for this transaction.
        this.db.exec(`DROP TABLE IF EXISTS ${retired}`);
        if (exists.get(live) !== undefined) this.db.exec(`ALTER TABLE ${live} RENAME TO ${retired}`);
        this.db.exec(`ALTER TABLE ${shadow} RENAME TO ${live}`);
      }
      const forget = this.db.prepare(`DELETE FROM ${LIVE.checkpoints} WHERE name = ?`);
      const take = this.db.prepare(`INSERT INTO ${LIVE.checkpoints} (name, position) SELECT name, position FROM ${SHADOW.checkpoints} WHERE name = ?`);
      for (const name of this.checkpointNames) {
        forget.run(name);
        take.run(name);
      }
      this.db.exec(`DELETE FROM ${SHADOW.checkpoints}`);
      this.db.exec(`DELETE FROM ${OWNER}`);
      return true;
    }).immediate();
    if (!swapped) return false;
    // The replaced tables are dropped by close(): the swapped-in read models serve from here, and the drop
    // (every page of the old tables overwritten, for secure_delete) was most of what a rebuild paid after it.
    this.state = 'swapped';
    return true;
  }

  override async close(): Promise<void> {
    if (this.state === 'swapped') {
      this.state = 'dropped';
      dropTables(this.db, this.collections.map((spec) => `${RETIRED}${spec.name}`));
      await this.settle();
      return;
    }
    if (this.state !== 'building') return;
    this.state = 'dropped';
    this.db.transaction(() => {
      if (!this.owned()) return;
      for (const spec of this.collections) this.db.exec(`DROP TABLE IF EXISTS ${this.table(spec.name)}`);
      this.db.exec(`DELETE FROM ${SHADOW.checkpoints}`);
      this.db.exec(`DELETE FROM ${OWNER}`);
    }).immediate();
    await this.settle();
  }
}

/** The log's checkpoint interval while a rebuild fills its shadows, in pages of 4 kB. */
const REBUILD_CHECKPOINT_PAGES = 16_384;

function jsonPath(field: string): string {
  assertName('field', field);
  return `'$.${field}'`;
}

/** The SQL expression for a top-level field; `id` is a real column. */
function column(field: string): string {
  return field === 'id' ? 'id' : `json_extract(doc, ${jsonPath(field)})`;
}

/** The sort fields and the values a keyset page starts after, checked against each other. */
function keyset(options: FindOptions): Array<{ field: string; direction: 1 | -1; value: string | number }> | undefined {
  if (options.after === undefined) return undefined;
  const sort = options.sort ?? [];
  if (sort.length === 0 || options.after.length !== sort.length) throw new Error('after needs one value per sort field');
  return sort.map(([field, direction], i) => {
    const value = bindable(options.after![i]!);
    if (value === null) throw new Error('after values cannot be null');
    return { field, direction, value };
  });
}

function whereClause(
  column: (field: string) => string,
  filter: Filter,
  range?: Range,
  after?: Array<{ field: string; direction: 1 | -1; value: string | number }>,
): { sql: string; params: Array<string | number> } {
  const terms: string[] = [];
  const params: Array<string | number> = [];
  for (const [field, value] of Object.entries(filter)) {
    const bound = bindable(value);
    if (bound === null) {
      terms.push(`${column(field)} IS NULL`);
    } else {
      terms.push(`${column(field)} = ?`);
      params.push(bound);
    }
  }
  if (range?.gte !== undefined) {
    terms.push(`${column(range.field)} >= ?`);
    params.push(range.gte);
  }
  if (range?.lte !== undefined) {
    terms.push(`${column(range.field)} <= ?`);
    params.push(range.lte);
  }
  if (after) {
    // The bound on the first field alone lets the index start where the page starts.
    const [first] = after;
    terms.push(`${column(first!.field)} ${first!.direction === -1 ? '<=' : '>='} ?`);
    params.push(first!.value);
    const alternatives = after.map((key, i) => {
      const equal = after.slice(0, i).map((before) => {
        params.push(before.value);
        return `${column(before.field)} = ?`;
      });
      params.push(key.value);
      return `(${[...equal, `${column(key.field)} ${key.direction === -1 ? '<' : '>'} ?`].join(' AND ')})`;
    });
    terms.push(`(${alternatives.join(' OR ')})`);
  }
  return { sql: terms.length ? `WHERE ${terms.join(' AND ')}` : '', params };
}

/** A filter naming one document by its id alone. */
function isById(filter: Filter): boolean {
  const fields = Object.keys(filter);
  return fields.length === 1 && fields[0] === 'id' && typeof filter.id === 'string';
}

/** A row as read for its document: the text, and the columns a reader asked for beside it. */
type StoredRow = { doc: string } & Record<string, unknown>;

/** The fields of a collection kept in columns: each one's column, and those besides `grp` that a put fills. */
interface FieldColumns {
  byField: Map<string, string>;
  extra: Array<{ field: string; column: string }>;
}

/**
 * A document's text: in a collection with its indexed fields in columns,
 * without the id and the string fields the columns keep (put back as the
 * document is read), so each is stored once rather than twice.
 */
function textOf(doc: Doc, own: FieldColumns | undefined): string {
  if (own === undefined) return JSON.stringify(doc);
  const text: Record<string, unknown> = {};
  for (const field of Object.keys(doc)) {
    const value = doc[field];
    if (!(typeof value === 'string' && (field === 'id' || own.byField.has(field)))) text[field] = value;
  }
  return JSON.stringify(text);
}

/** What an index covers, as its CREATE statement lists it (a rename of its table changes only the table's name). */
function indexedExpressions(sql: string): string {
  return sql.slice(sql.indexOf('(') + 1, sql.lastIndexOf(')'));
}

/** A field's value as json_extract gives it from the document: a column holds the same, so a filter finds the same documents. */
function columnValue(value: unknown): string | number | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' || typeof value === 'number') return value;
  return JSON.stringify(value);
}

/** json_extract yields 1/0 for JSON booleans, so booleans are bound that way. */
function bindable(value: Scalar): string | number | null {
  if (value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' || typeof value === 'number') return value;
  throw new Error('filter values must be scalars');
}

export function openSqliteReadModels(dataDir: string, logger?: StoreLogger, waitMs?: number): SqliteReadModels {
  return new SqliteReadModels(openDatabase(dataDir, 'NORMAL', waitMs), LIVE, logger);
}
