import type { Statement } from 'better-sqlite3';
import { openDatabase, type SqliteDatabase } from '../sqlite.js';
import {
  assertName,
  type CheckpointMove,
  type CollectionSpec,
  type Doc,
  type Filter,
  type FindOptions,
  type ReadModelOp,
  type ReadModelStore,
  type Scalar,
} from './port.js';

/**
 * Read models in the embedded SQLite file: one table per collection holding
 * JSON documents, with expression indexes on the fields the queries use.
 * Every name is checked against NAME before it is put into SQL text; values
 * are always bound parameters.
 */
export class SqliteReadModels implements ReadModelStore {
  readonly kind = 'sqlite' as const;
  private readonly cache = new Map<string, Statement>();

  constructor(private readonly db: SqliteDatabase) {
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
        for (const fields of spec.indexes) {
          const index = `ix_${spec.name}_${fields.join('_')}`;
          assertName('index', index);
          this.db.exec(`CREATE INDEX IF NOT EXISTS ${index} ON ${table} (${fields.map(column).join(', ')})`);
        }
      }
    }).immediate();
  }

  private readonly writeTransaction = (ops: ReadModelOp[], checkpoints: CheckpointMove[]): boolean => {
    const current = this.statement('SELECT position FROM projection_checkpoints WHERE name = ?');
    for (const move of checkpoints) {
      const row = current.get(move.name) as { position: number | bigint } | undefined;
      if (BigInt(row?.position ?? 0) !== move.expected) return false;
    }
    for (const op of ops) this.apply(op);
    const upsert = this.statement(
      'INSERT INTO projection_checkpoints (name, position) VALUES (?, ?) ON CONFLICT (name) DO UPDATE SET position = excluded.position',
    );
    for (const move of checkpoints) upsert.run(move.name, move.next);
    return true;
  };

  async write(ops: ReadModelOp[], checkpoints: CheckpointMove[] = []): Promise<boolean> {
    return this.db.transaction(this.writeTransaction).immediate(ops, checkpoints);
  }

  private apply(op: ReadModelOp): void {
    const table = tableName(op.collection);
    switch (op.op) {
      case 'put':
        this.statement(
          `INSERT INTO ${table} (id, doc) VALUES (?, ?) ON CONFLICT (id) DO UPDATE SET doc = excluded.doc`,
        ).run(op.doc.id, JSON.stringify(op.doc));
        return;
      case 'patch': {
        const fields = Object.keys(op.set);
        if (fields.length === 0) return;
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
        const { changes } = this.statement(`DELETE FROM ${table} ${where.sql}`).run(...where.params);
        if (op.countDown && changes > 0) {
          this.apply({ op: 'increment', collection: op.countDown.collection, id: op.countDown.id, field: op.countDown.field, by: -changes });
        }
        return;
      }
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

export function openSqliteReadModels(dataDir: string): SqliteReadModels {
  return new SqliteReadModels(openDatabase(dataDir, 'NORMAL'));
}
