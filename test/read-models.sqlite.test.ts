import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openSqliteReadModels } from '../src/infra/read-models/sqlite.js';
import { readModelContract } from './contracts/read-models.js';

const dir = mkdtempSync(join(tmpdir(), 'read-models-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

readModelContract(t, async () => openSqliteReadModels(dir));
t.test('indexed fields in columns', async (t) => readModelContract(t, async () => openSqliteReadModels(dir), { indexedColumns: true }));
t.test('large documents', async (t) => readModelContract(t, async () => openSqliteReadModels(dir), { indexedColumns: true, largeDocuments: true }));

t.test('large documents share pages: two of 1.2 kB take one page, where each took a page or more', async (t) => {
  const Database = (await import('better-sqlite3')).default;
  const store = openSqliteReadModels(dir);
  t.teardown(() => store.close());
  const text = 'x'.repeat(1200);
  for (const [name, largeDocuments] of [['small_layout', false], ['large_layout', true]] as const) {
    await store.ensureCollections([{ name, indexes: [['parent', 'at', 'id']], indexedColumns: true, largeDocuments }]);
    await store.write(Array.from({ length: 100 }, (_, i) => ({ op: 'put' as const, collection: name, doc: { id: `r${String(i).padStart(3, '0')}`, parent: 'p', at: `2026-01-01T00:00:${String(i % 60).padStart(2, '0')}.000Z`, text } })));
  }
  const db = new Database(join(dir, 'feedback.db'), { readonly: true });
  t.teardown(() => db.close());
  const pages = (table: string) => db.prepare('SELECT count(*) FROM dbstat WHERE name = ?').pluck().get(table) as number;
  t.ok(pages('rm_small_layout') >= 100, `without: ${pages('rm_small_layout')} pages for 100 documents`);
  t.ok(pages('rm_large_layout') <= 55, `declared large: ${pages('rm_large_layout')} pages for 100 documents`);
  const found = await store.find('large_layout', { parent: 'p' }, { sort: [['at', -1], ['id', -1]], limit: 2 });
  t.same(found.map((doc) => doc.id), ['r059', 'r058'], 'read through its index in order');
  t.same(await store.get('large_layout', 'r007'), { id: 'r007', parent: 'p', at: '2026-01-01T00:00:07.000Z', text }, 'read back whole');
});

t.test('a document put in a collection with columns keeps in its text only what the columns do not hold', async (t) => {
  const Database = (await import('better-sqlite3')).default;
  const store = openSqliteReadModels(dir);
  t.teardown(() => store.close());
  await store.ensureCollections([{ name: 'texts', indexes: [['parent', 'at', 'id'], ['n']], indexedColumns: true }]);
  const doc = { id: 'd1', parent: 'p', at: '2026-01-01T00:00:00.000Z', n: 3, note: 'kept' };
  await store.write([{ op: 'put', collection: 'texts', doc }]);
  const db = new Database(join(dir, 'feedback.db'), { readonly: true });
  t.teardown(() => db.close());
  t.same(JSON.parse(db.prepare("SELECT doc FROM rm_texts WHERE id = 'd1'").pluck().get() as string), { n: 3, note: 'kept' }, 'the id and the indexed strings are in their columns only');
  t.same(await store.get('texts', 'd1'), doc, 'and the document reads back whole');
});

t.test('indexes follow the declaration: one no longer declared is dropped', async (t) => {
  const Database = (await import('better-sqlite3')).default;
  const store = openSqliteReadModels(dir);
  t.teardown(() => store.close());
  await store.ensureCollections([{ name: 'shrinking', indexes: [['a', 'b'], ['c']] }]);
  await store.ensureCollections([{ name: 'shrinking', indexes: [['c']], rankWithin: 'g' }]);
  const db = new Database(join(dir, 'feedback.db'), { readonly: true });
  t.teardown(() => db.close());
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rm_shrinking' ORDER BY name").pluck().all();
  t.same(names, ['ix_shrinking_c', 'ix_shrinking_rank']);
});

t.test('a collection that moves its indexed fields into columns gets its indexes on the columns, and queries use them', async (t) => {
  const Database = (await import('better-sqlite3')).default;
  const store = openSqliteReadModels(dir);
  t.teardown(() => store.close());
  await store.ensureCollections([{ name: 'moved', indexes: [['p', 'at', 'id']], rankWithin: 'p' }]);
  await store.write([{ op: 'put', collection: 'moved', doc: { id: 'm1', p: 'g', at: '2026-01-01' } }]);
  await store.ensureCollections([{ name: 'moved', indexes: [['p', 'at', 'id']], rankWithin: 'p', indexedColumns: true }]);
  const db = new Database(join(dir, 'feedback.db'), { readonly: true });
  t.teardown(() => db.close());
  const sql = db.prepare("SELECT sql FROM sqlite_master WHERE type = 'index' AND name LIKE '%moved_p_at_id'").pluck().all() as string[];
  t.equal(sql.length, 1, 'one index for the fields, not one per layout');
  t.match(sql[0], /\(grp, f_at, id\)$/, 'on the group and the column');
  await store.reset(['moved'], []);
  await store.write([{ op: 'put', collection: 'moved', doc: { id: 'm2', p: 'g', at: '2026-01-02' } }]);
  t.same((await store.find('moved', { p: 'g' }, { sort: [['at', 1], ['id', 1]], range: { field: 'at', gte: '2026-01-02' } })).map((d) => d.id), ['m2']);
  const plan = db.prepare("EXPLAIN QUERY PLAN SELECT doc FROM rm_moved WHERE grp = 'g' AND f_at >= '2026' ORDER BY f_at, id").all() as Array<{ detail: string }>;
  t.match(plan.map((row) => row.detail).join(), /moved_p_at_id/, 'the columns are what the index covers');
});

t.test('a swapped-in table carries its indexes, under names ensureCollections keeps', async (t) => {
  const Database = (await import('better-sqlite3')).default;
  const store = openSqliteReadModels(dir);
  t.teardown(() => store.close());
  const spec = { name: 'swapped', indexes: [['a'], ['b', 'c']], rankWithin: 'g' };
  await store.ensureCollections([spec]);
  const db = new Database(join(dir, 'feedback.db'), { readonly: true });
  t.teardown(() => db.close());
  const indexes = () => db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rm_swapped' ORDER BY name").pluck().all();
  const leftovers = () => db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 3) IN ('rs_', 'rr_')").pluck().all();
  t.same(indexes(), ['ix_swapped_a', 'ix_swapped_b_c', 'ix_swapped_rank']);
  for (const [round, prefix] of [[1, 'iy'], [2, 'ix']] as const) {
    const shadow = await store.shadow([spec], []);
    await shadow.write([{ op: 'put', collection: 'swapped', doc: { id: `d${round}`, a: round, g: 'g1' } }]);
    t.ok(await shadow.swap());
    const names = [`${prefix}_swapped_a`, `${prefix}_swapped_b_c`, `${prefix}_swapped_rank`];
    t.same(indexes(), names, `rebuild ${round}: the shadow's indexes came with it`);
    await store.ensureCollections([spec]);
    t.same(indexes(), names, `rebuild ${round}: ensureCollections neither drops nor duplicates them`);
    t.same(leftovers(), ['rr_swapped'], `rebuild ${round}: the replaced table waits aside until the shadow is closed`);
    await shadow.close();
    t.same(leftovers(), [], `rebuild ${round}: no shadow or retired table is left`);
    const plan = db.prepare("EXPLAIN QUERY PLAN SELECT doc FROM rm_swapped WHERE json_extract(doc, '$.a') = 1").all() as Array<{ detail: string }>;
    t.match(plan.map((row) => row.detail).join(), new RegExp(`USING INDEX ${prefix}_swapped_a`), `rebuild ${round}: queries use them`);
    t.same((await store.find('swapped', { a: round })).map((d) => d.id), [`d${round}`]);
  }
});

t.test('a document deleted from a collection of plain values leaves no copy in the file: its table is written anew', async (t) => {
  const { readFileSync } = await import('node:fs');
  const Database = (await import('better-sqlite3')).default;
  const own = mkdtempSync(join(tmpdir(), 'plain-values-'));
  t.teardown(() => rmSync(own, { recursive: true, force: true }));
  const store = openSqliteReadModels(own);
  t.teardown(() => store.close());
  const file = new Database(join(own, 'feedback.db'), { readonly: true });
  t.teardown(() => file.close());
  const rootOf = (table: string) => file.prepare("SELECT rootpage FROM sqlite_master WHERE name = ?").pluck().get(table) as number;
  const marker = (name: string, n: number) => `${name}-campaign-${String(n).padStart(4, '0')}-${'q'.repeat(40)}`;
  // Ids in no order, as counters' hashed ids are: rows land in the middle of full pages, which split.
  const id = (n: number) => createHash('sha256').update(String(n)).digest('hex').slice(0, 16);
  for (const [name, plainValues] of [['plain', true], ['ordinary', false]] as const) {
    await store.ensureCollections([{ name, indexes: [['scope']], indexedColumns: true, plainValues }]);
    for (let from = 0; from < 600; from += 20) {
      await store.write(Array.from({ length: 20 }, (_, i) => ({ op: 'put' as const, collection: name, doc: { id: id(from + i), scope: 's', value: marker(name, from + i) } })));
      await store.write(Array.from({ length: 20 }, (_, i) => ({ op: 'put' as const, collection: name, doc: { id: id(from + i), scope: 's', value: marker(name, from + i), count: 10 + i } })));
    }
    const root = rootOf(`rm_${name}`);
    await store.write([{ op: 'delete', collection: name, where: { id: 'no such document' } }]);
    t.equal(rootOf(`rm_${name}`), root, `${name}: a delete that removes nothing leaves the table where it is`);
    await store.write(Array.from({ length: 300 }, (_, i) => ({ op: 'delete' as const, collection: name, where: { id: id(2 * i) } })));
    if (plainValues) t.not(rootOf(`rm_${name}`), root, `${name}: a delete that removes documents writes the table anew`);
    else t.equal(rootOf(`rm_${name}`), root, `${name}: an ordinary collection's table stays where it is`);
    t.equal(await store.count(name, { scope: 's' }), 300, `${name}: the others are all there`);
    t.equal((await store.get(name, id(1)))?.value, marker(name, 1), `${name}: and read as before, through its index too`);
    t.equal((await store.find(name, { scope: 's' })).length, 300);
  }
  await store.expunge();
  const bytes = readFileSync(join(own, 'feedback.db')).toString('latin1');
  t.equal(Array.from({ length: 300 }, (_, i) => 2 * i).filter((n) => bytes.includes(marker('plain', n))).length, 0, 'no deleted plain value is in the file');
});
