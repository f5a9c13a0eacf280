import type { Statement } from 'better-sqlite3';
import { openDatabase, truncateWriteAheadLog, type SqliteDatabase, type StoreLogger } from '../sqlite.js';
import {
  assertName,
  assertWindow,
  NAME,
  type CheckpointMove,
  type CollectionSpec,
  type Doc,
  type Filter,
  type FindOptions,
  type ReadModelOp,
  type RankedPage,
  type ReadModelStore,
  type Scalar,
} from './port.js';

/** What one write learns about ranked groups: the next rank to give, and the ranks its deletes freed. */
class RankChanges {
  readonly top = new Map<string, number>();
  readonly freed = new Map<string, { table: string; group: string; ranks: number[] }>();

  static key(table: string, group: string): string {
    return `${table}\u0000${group}`;
  }

  free(table: string, group: string, rank: number): void {
    const key = RankChanges.key(table, group);
    const entry = this.freed.get(key) ?? { table, group, ranks: [] };
    entry.ranks.push(rank);
    this.freed.set(key, entry);
  }
}

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

  constructor(
    private readonly db: SqliteDatabase,
    private readonly logger?: StoreLogger,
  ) {
    db.exec('CREATE TABLE IF NOT EXISTS projection_checkpoints (name TEXT PRIMARY KEY, position INTEGER NOT NULL)');
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
    this.db.transaction(() => {
      for (const spec of specs) {
        const table = tableName(spec.name);
        this.db.exec(`CREATE TABLE IF NOT EXISTS ${table} (id TEXT PRIMARY KEY, doc TEXT NOT NULL) WITHOUT ROWID`);
        if (spec.rankWithin !== undefined) {
          assertName('field', spec.rankWithin);
          // Real columns, so the rank index is read and renumbered without touching the JSON.
          const columns = new Set((this.db.pragma(`table_info(${table})`) as Array<{ name: string }>).map((c) => c.name));
          if (!columns.has('grp')) this.db.exec(`ALTER TABLE ${table} ADD COLUMN grp TEXT`);
          if (!columns.has('rank')) this.db.exec(`ALTER TABLE ${table} ADD COLUMN rank INTEGER`);
          this.db.exec(`CREATE INDEX IF NOT EXISTS ix_${spec.name}_rank ON ${table} (grp, rank)`);
          this.ranked.set(spec.name, spec.rankWithin);
        }
        const wanted = new Set(spec.rankWithin !== undefined ? [`ix_${spec.name}_rank`] : []);
        for (const fields of spec.indexes) {
          const index = `ix_${spec.name}_${fields.join('_')}`;
          assertName('index', index);
          wanted.add(index);
          this.db.exec(`CREATE INDEX IF NOT EXISTS ${index} ON ${table} (${fields.map(column).join(', ')})`);
        }
        // An index an older version declared costs every insert and serves no query now.
        const present = this.db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = ? AND name LIKE 'ix\\_%' ESCAPE '\\'").pluck().all(table) as string[];
        for (const index of present) if (!wanted.has(index) && NAME.test(index)) this.db.exec(`DROP INDEX ${index}`);
      }
    }).immediate();
  }

  private readonly writeTransaction = (ops: ReadModelOp[], checkpoints: CheckpointMove[]): boolean => {
    const current = this.statement('SELECT position FROM projection_checkpoints WHERE name = ?');
    for (const move of checkpoints) {
      const row = current.get(move.name) as { position: number | bigint } | undefined;
      if (BigInt(row?.position ?? 0) !== move.expected) return false;
    }
    const changes = new RankChanges();
    for (const op of ops) this.apply(op, changes);
    this.closeGaps(changes);
    const upsert = this.statement(
      'INSERT INTO projection_checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position',
    );
    for (const move of checkpoints) upsert.run(move.name, move.next);
    return true;
  };

  async write(ops: ReadModelOp[], checkpoints: CheckpointMove[] = []): Promise<boolean> {
    return this.db.transaction(this.writeTransaction).immediate(ops, checkpoints);
  }

  private apply(op: ReadModelOp, changes: RankChanges): void {
    const table = tableName(op.collection);
    const within = this.ranked.get(op.collection);
    switch (op.op) {
      case 'put':
        if (within !== undefined) return this.putRanked(table, within, op.doc, changes);
        this.statement(
          `INSERT INTO ${table} (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
        ).run(op.doc.id, JSON.stringify(op.doc));
        return;
      case 'patch': {
        const fields = Object.keys(op.set);
        if (fields.length === 0) return;
        if (within !== undefined && fields.includes(within)) throw new Error(`patch on ${op.collection}: ${within} ranks the documents and cannot change`);
        const where = whereClause(op.where);
        const assignments = fields.map((field) => `${jsonPath(field)}, json(?)`).join(', ');
        this.statement(`UPDATE ${table} SET doc = json_set(doc, ${assignments}) ${where.sql}`).run(
          ...fields.map((field) => JSON.stringify(op.set[field] ?? null)),
          ...where.params,
        );
        return;
      }
      case 'increment': {
        const path = jsonPath(op.field);
        this.statement(
          `UPDATE ${table} SET doc = json_set(doc, ${path}, coalesce(json_extract(doc, ${path}), 0) + ?) WHERE id = ?`,
        ).run(op.by, op.id);
        return;
      }
      case 'delete': {
        const where = whereClause(op.where);
        if (within !== undefined) {
          const rows = this.statement(`SELECT grp, rank FROM ${table} ${where.sql}`).all(...where.params) as Array<{ grp: string; rank: number }>;
          for (const row of rows) {
            // Remember the group's top before the delete, so no new rank reuses a freed one.
            const key = RankChanges.key(table, row.grp);
            if (!changes.top.has(key)) changes.top.set(key, this.topRank(table, row.grp));
            changes.free(table, row.grp, row.rank);
          }
        }
        this.statement(`DELETE FROM ${table} ${where.sql}`).run(...where.params);
        return;
      }
    }
  }

  /** A new document takes the group's next rank; a replaced one keeps its own. */
  private putRanked(table: string, within: string, doc: Doc, changes: RankChanges): void {
    const group = doc[within];
    if (typeof group !== 'string') throw new Error(`put on ${table}: ${within} must be a string`);
    const json = JSON.stringify(doc);
    const key = RankChanges.key(table, group);
    // Ranks freed in this write close up at its end, so new ones count on from the highest ever given.
    const top = changes.top.get(key) ?? this.topRank(table, group);
    // Most puts are new documents: try the insert first rather than looking the id up.
    const inserted = this.statement(`INSERT INTO ${table} (id, doc, grp, rank) VALUES (?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`).run(doc.id, json, group, top + 1);
    if (inserted.changes === 1) {
      changes.top.set(key, top + 1);
      return;
    }
    changes.top.set(key, top);
    const existing = this.statement(`SELECT grp FROM ${table} WHERE id = ?`).get(doc.id) as { grp: string };
    if (existing.grp !== group) throw new Error(`put on ${table}: ${within} ranks the documents and cannot change`);
    this.statement(`UPDATE ${table} SET doc = ? WHERE id = ?`).run(json, doc.id);
  }

  private topRank(table: string, group: string): number {
    return (this.statement(`SELECT coalesce(max(rank), 0) AS top FROM ${table} WHERE grp = ?`).get(group) as { top: number }).top;
  }

  /**
   * Moves every rank above freed ones down by the number freed below it: one
   * statement per stretch between two freed ranks, each stretch moved once.
   */
  private closeGaps(changes: RankChanges): void {
    for (const { table, group, ranks } of changes.freed.values()) {
      ranks.sort((a, b) => a - b);
      const shift = this.statement(`UPDATE ${table} SET rank = rank - ? WHERE grp = ? AND rank > ? AND rank < ?`);
      ranks.forEach((rank, i) => shift.run(i + 1, group, rank, ranks[i + 1] ?? Number.MAX_SAFE_INTEGER));
    }
  }

  async checkpoints(): Promise<Map<string, bigint>> {
    const rows = this.statement('SELECT name, position FROM projection_checkpoints').all() as Array<{
      name: string;
      position: number;
    }>;
    return new Map(rows.map((row) => [row.name, BigInt(row.position)]));
  }

  async get(collection: string, id: string): Promise<Doc | null> {
    const row = this.statement(`SELECT doc FROM ${tableName(collection)} WHERE id = ?`).get(id) as
      | { doc: string }
      | undefined;
    return row ? (JSON.parse(row.doc) as Doc) : null;
  }

  async find(collection: string, filter: Filter, options: FindOptions = {}): Promise<Doc[]> {
    const where = whereClause(filter);
    const order = options.sort?.length
      ? `ORDER BY ${options.sort.map(([field, direction]) => `${column(field)} ${direction === -1 ? 'DESC' : 'ASC'}`).join(', ')}`
      : '';
    const sql = `SELECT doc FROM ${tableName(collection)} ${where.sql} ${order} LIMIT ? OFFSET ?`;
    const rows = this.statement(sql).all(...where.params, options.limit ?? -1, options.offset ?? 0) as Array<{
      doc: string;
    }>;
    return rows.map((row) => JSON.parse(row.doc) as Doc);
  }

  private readonly rankedPage = (table: string, group: string, offset: number, limit: number): RankedPage => {
    // Ranks are dense, so the top one is the group's size.
    const total = this.topRank(table, group);
    const high = total - offset;
    if (high <= 0 || limit <= 0) return { docs: [], total };
    const rows = this.statement(`SELECT doc FROM ${table} WHERE grp = ? AND rank > ? AND rank <= ? ORDER BY rank DESC`).all(group, Math.max(0, high - limit), high) as Array<{ doc: string }>;
    return { docs: rows.map((row) => JSON.parse(row.doc) as Doc), total };
  };

  async newestFirst(collection: string, group: string, window: { offset: number; limit: number }): Promise<RankedPage> {
    if (!this.ranked.has(collection)) throw new Error(`${collection} is not a ranked collection`);
    assertWindow(window);
    // One read transaction, so the total and the page come from the same snapshot.
    return this.db.transaction(this.rankedPage).deferred(tableName(collection), group, window.offset, window.limit);
  }

  async count(collection: string, filter: Filter): Promise<number> {
    const where = whereClause(filter);
    const row = this.statement(`SELECT count(*) AS n FROM ${tableName(collection)} ${where.sql}`).get(
      ...where.params,
    ) as { n: number };
    return row.n;
  }

  async reset(collections: string[], checkpointNames: string[]): Promise<void> {
    this.db.transaction(() => {
      for (const collection of collections) this.db.exec(`DELETE FROM ${tableName(collection)}`);
      const forget = this.statement('DELETE FROM projection_checkpoints WHERE name = ?');
      for (const name of checkpointNames) forget.run(name);
    }).immediate();
  }

  /** As the event store's: both share the file, so either one's checkpoint serves both. */
  async expunge(): Promise<void> {
    if (!(await truncateWriteAheadLog(this.db))) {
      this.logger?.warn({ store: 'sqlite' }, 'another connection holds an older snapshot: deleted documents stay in the write-ahead log until the next checkpoint (run `admin scavenge` to retry)');
    }
  }

  async ping(): Promise<void> {
    this.statement('SELECT 1').get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}

function tableName(collection: string): string {
  assertName('collection', collection);
  return `rm_${collection}`;
}

function jsonPath(field: string): string {
  assertName('field', field);
  return `'$.${field}'`;
}

/** The SQL expression for a top-level field; `id` is a real column. */
function column(field: string): string {
  return field === 'id' ? 'id' : `json_extract(doc, ${jsonPath(field)})`;
}

function whereClause(filter: Filter): { sql: string; params: Array<string | number> } {
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
  return { sql: terms.length ? `WHERE ${terms.join(' AND ')}` : '', params };
}

/** json_extract yields 1/0 for JSON booleans, so booleans are bound that way. */
function bindable(value: Scalar): string | number | null {
  if (value === null) return null;
  if (typeof value === 'boolean') return value ? 1 : 0;
  if (typeof value === 'string' || typeof value === 'number') return value;
  throw new Error('filter values must be scalars');
}

export function openSqliteReadModels(dataDir: string, logger?: StoreLogger): SqliteReadModels {
  return new SqliteReadModels(openDatabase(dataDir, 'NORMAL'), logger);
}
