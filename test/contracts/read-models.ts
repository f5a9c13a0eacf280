/**
 * The read-model contract. Every adapter runs this suite unchanged: the
 * embedded SQLite one always, MongoDB when MONGODB_URL is set. Collections and
 * checkpoints get a random prefix so the suite can share a server.
 */
import { randomBytes } from 'node:crypto';
import fc from '../support/properties.js';
import type { Test } from 'tap';
import { LeaseLost, type CollectionSpec, type Doc, type ReadModelOp, type ReadModelStore } from '../../src/infra/read-models/port.js';

/**
 * `indexedColumns` runs the suite on collections that keep their indexed
 * fields in columns (a store of documents behaves the same either way); the
 * counter `n` and the ranked collection's fields are indexed then too, so
 * increments and ranked puts go through those columns. `largeDocuments`
 * runs it on collections declared to hold large documents.
 */
export function readModelContract(t: Test, open: () => Promise<ReadModelStore>, variant: { indexedColumns?: boolean; largeDocuments?: boolean } = {}): void {
  let store: ReadModelStore;
  let c: string;
  let items: string;
  let ranked: string;
  let specs: CollectionSpec[];
  t.before(async () => {
    store = await open();
  });
  t.teardown(async () => {
    await store?.close();
  });
  /** What a record of the ranked collection counted: the counters its `chose` names. */
  const counted = (doc: Doc): string[] => (typeof doc.chose === 'string' && doc.chose !== '' ? doc.chose.split('+') : []);
  t.beforeEach(async () => {
    c = `c${randomBytes(6).toString('hex')}`;
    items = `${c}_items`;
    ranked = `${c}_ranked`;
    specs = variant.indexedColumns
      ? [
          { name: items, indexes: [['owner', 'created_at'], ['key'], ['n']], indexedColumns: true },
          { name: `${c}_other`, indexes: [], indexedColumns: true },
          { name: ranked, indexes: [['parent', 'title', 'id']], rankWithin: 'parent', indexedColumns: true, counted },
        ]
      : [
          { name: items, indexes: [['owner', 'created_at'], ['key']] },
          { name: `${c}_other`, indexes: [] },
          { name: ranked, indexes: [], rankWithin: 'parent', counted },
        ];
    if (variant.largeDocuments) specs = specs.map((spec) => ({ ...spec, largeDocuments: true }));
    await store.ensureCollections(specs);
  });

  const item = (id: string, extra: Record<string, unknown> = {}) => ({
    id,
    owner: 'o1',
    created_at: `2026-01-0${id.slice(-1)}T00:00:00.000Z`,
    n: 0,
    ...extra,
  });

  t.test('ensureCollections is idempotent', async (t) => {
    await store.ensureCollections([specs[0]!]);
    t.equal(await store.count(items, {}), 0);
  });

  t.test('put, get and replace', async (t) => {
    const doc = item('i1', { title: 'zażółć 🎉', nested: { a: [1, { b: null }] }, flag: true });
    t.ok(await store.write([{ op: 'put', collection: items, doc }]));
    t.same(await store.get(items, 'i1'), doc);
    t.strictSame(Object.keys((await store.get(items, 'i1'))!).sort(), Object.keys(doc).sort(), 'no extra fields');
    await store.write([{ op: 'put', collection: items, doc: { id: 'i1', owner: 'o2' } }]);
    t.strictSame(await store.get(items, 'i1'), { id: 'i1', owner: 'o2' }, 'put replaces the whole document');
    t.equal(await store.get(items, 'nope'), null);
  });

  t.test('a document is found by the values its last put, patch or increment left, never by older ones', async (t) => {
    await store.write([
      { op: 'put', collection: items, doc: item('i1', { key: 'k1', n: 1 }) },
      { op: 'put', collection: ranked, doc: { id: 'r1', parent: 'p1', title: 'first' } },
    ]);
    await store.write([
      { op: 'patch', collection: items, where: { id: 'i1' }, set: { key: 'k2', owner: 'o9' } },
      { op: 'increment', collection: items, id: 'i1', field: 'n', by: 2 },
      { op: 'patch', collection: ranked, where: { id: 'r1' }, set: { title: 'second' } },
    ]);
    t.same((await store.find(items, { key: 'k2', owner: 'o9' })).map((d) => d.id), ['i1'], 'by patched fields');
    t.equal(await store.count(items, { key: 'k1' }), 0, 'not by the value the patch replaced');
    t.same((await store.find(items, { n: 3 })).map((d) => d.id), ['i1'], 'by the incremented count');
    t.equal(await store.count(items, { n: 1 }), 0, 'not by the count before it');
    t.same((await store.find(ranked, { parent: 'p1', title: 'second' })).map((d) => d.id), ['r1'], 'in a ranked collection too');
    await store.write([{ op: 'put', collection: items, doc: item('i1', { key: 'k3', n: 0 }) }]);
    t.same((await store.find(items, { key: 'k3', n: 0 })).map((d) => d.id), ['i1'], 'a put over it replaces every value');
    t.equal(await store.count(items, { key: 'k2' }), 0);
  });

  t.test('patch sets fields on every matching document', async (t) => {
    await store.write([
      { op: 'put', collection: items, doc: item('i1') },
      { op: 'put', collection: items, doc: item('i2') },
      { op: 'put', collection: items, doc: item('i3', { owner: 'o2' }) },
    ]);
    await store.write([{ op: 'patch', collection: items, where: { owner: 'o1' }, set: { status: 'x', n: 5 } }]);
    t.equal((await store.get(items, 'i1'))!.status, 'x');
    t.equal((await store.get(items, 'i2'))!.n, 5);
    t.equal((await store.get(items, 'i3'))!.status, undefined);
    await store.write([{ op: 'patch', collection: items, where: { id: 'i3' }, set: { status: null } }]);
    t.equal((await store.get(items, 'i3'))!.status, null, 'null is stored as null');
    t.ok(await store.write([{ op: 'patch', collection: items, where: { id: 'zz' }, set: { a: 1 } }]));
    t.equal(await store.get(items, 'zz'), null, 'patch creates nothing');
  });

  t.test('increment adds to a field and leaves missing documents missing', async (t) => {
    await store.write([{ op: 'put', collection: items, doc: item('i1', { votes: 2 }) }]);
    await store.write([
      { op: 'increment', collection: items, id: 'i1', field: 'votes', by: 3 },
      { op: 'increment', collection: items, id: 'i1', field: 'fresh', by: 1 },
      { op: 'increment', collection: items, id: 'ghost', field: 'votes', by: 1 },
    ]);
    const doc = await store.get(items, 'i1');
    t.equal(doc!.votes, 5);
    t.equal(doc!.fresh, 1, 'a missing field counts from zero');
    t.equal(await store.get(items, 'ghost'), null);
  });

  t.test('a put may carry its document as JSON text, with only its id and indexed fields as an object', async (t) => {
    const whole = { id: 'j1', owner: 'o1', created_at: '2026-01-01T00:00:00.000Z', key: 'k', nested: { a: [1, 2] }, text: 'only in the text' };
    await store.write([{ op: 'put', collection: items, doc: { id: 'j1', owner: 'o1', created_at: whole.created_at, key: 'k' }, json: JSON.stringify(whole) }]);
    t.strictSame(await store.get(items, 'j1'), whole, 'the document is the text');
    t.strictSame(await store.find(items, { owner: 'o1' }, { sort: [['created_at', 1]] }), [whole], 'found by its indexed fields');
    const rankedDoc = { id: 'j2', parent: 'p', title: 't', body: 'only in the text' };
    await store.write([{ op: 'put', collection: ranked, doc: { id: 'j2', parent: 'p', title: 't' }, json: JSON.stringify(rankedDoc) }]);
    t.strictSame(await store.newestFirst(ranked, 'p', { offset: 0, limit: 10 }), { docs: [rankedDoc], total: 1 }, 'ranked in its group');
  });

  t.test('tally creates a counter, adds to it, and deletes it when it comes to zero', async (t) => {
    const counter = { id: 'k1', owner: 'o1', key: 'a' };
    await store.write([
      { op: 'tally', collection: items, doc: counter, field: 'n', by: 1 },
      { op: 'tally', collection: items, doc: counter, field: 'n', by: 2 },
    ]);
    t.strictSame(await store.get(items, 'k1'), { ...counter, n: 3 }, 'created from doc, then added to');
    t.equal(await store.count(items, { owner: 'o1', n: 3 }), 1, 'found by its fields and its count');
    await store.write([{ op: 'tally', collection: items, doc: { id: 'k1', owner: 'changed' }, field: 'n', by: -1 }]);
    t.strictSame(await store.get(items, 'k1'), { ...counter, n: 2 }, 'an existing counter keeps its fields');
    t.equal(await store.count(items, { owner: 'o1', n: 2 }), 1, 'found by its count as it is now');
    t.equal(await store.count(items, { n: 3 }), 0);
    await store.write([{ op: 'tally', collection: items, doc: counter, field: 'n', by: -2 }]);
    t.equal(await store.get(items, 'k1'), null, 'a counter at zero is gone');
    t.equal(await store.count(items, { owner: 'o1' }), 0);
  });

  t.test('tallies in one write read as their ops in order, whatever the store sums', async (t) => {
    const count = (id: string, by = 1): ReadModelOp => ({ op: 'tally', collection: items, doc: { id, owner: 'o1' }, field: 'n', by });
    const shared = count('shared');
    await store.write([
      ...Array.from({ length: 50 }, () => count('many')),
      count('replaced'),
      { op: 'put', collection: items, doc: { id: 'replaced', owner: 'o2', n: 10 } },
      count('replaced'),
      count('deleted'),
      { op: 'delete', collection: items, where: { id: 'deleted' } },
      count('down'),
      count('down', -1),
      count('down'),
      // One op object counted again and again, as a projection may make it once: the same as as many alike.
      ...Array.from({ length: 3 }, () => shared),
      { op: 'put', collection: items, doc: { id: 'shared', owner: 'o3', n: 100 } },
      shared,
      shared,
    ]);
    t.equal((await store.get(items, 'many'))!.n, 50);
    t.strictSame(await store.get(items, 'shared'), { id: 'shared', owner: 'o3', n: 102 }, 'the one op: counted before the put, and after it');
    t.strictSame(await store.get(items, 'replaced'), { id: 'replaced', owner: 'o2', n: 11 }, 'a put sees the counts before it, a count the put');
    t.equal(await store.get(items, 'deleted'), null, 'a delete sees the counts before it');
    t.equal((await store.get(items, 'down'))!.n, 1, 'up, down to zero (gone), up again');
  });

  t.test('retract takes back the tallies its collection works out from a record of another; the record stays, a missing one changes nothing', async (t) => {
    // Records in a ranked collection, as responses are; what each counted follows from what it holds (`counted`).
    const tallied = (record: string, counters: string[]): ReadModelOp[] => [
      ...counters.map((id): ReadModelOp => ({ op: 'tally', collection: items, doc: { id, owner: 'o1' }, field: 'n', by: 1 })),
      { op: 'put', collection: ranked, doc: { id: record, parent: 'p', title: record, chose: counters.join('+') } },
    ];
    const retract = (id: string): ReadModelOp => ({ op: 'retract', collection: items, field: 'n', record: { collection: ranked, id } });
    // Put and retracted in one write, as a catch-up batch holds a submission and its erasure.
    await store.write([...tallied('r1', ['a', 'b']), ...tallied('r2', ['b', 'c']), retract('r1'), { op: 'delete', collection: ranked, where: { id: 'r1' } }]);
    t.equal(await store.get(items, 'a'), null, 'a counter only it counted is gone');
    t.equal((await store.get(items, 'b'))!.n, 1);
    t.equal((await store.get(items, 'c'))!.n, 1);
    t.equal(await store.get(ranked, 'r1'), null, 'deleted by its own op');
    await store.write([retract('r1'), retract('never')]);
    t.equal((await store.get(items, 'b'))!.n, 1, 'a record gone takes nothing more');
    await store.write([retract('r2')]);
    t.ok(await store.get(ranked, 'r2'), 'the record is left as it is');
    t.equal(await store.count(items, {}), 0, 'nothing left of its counts');
    // Put twice in one write: the retract works out what the record holds as the write left it.
    await store.write([...tallied('r4', ['e']), { op: 'put', collection: ranked, doc: { id: 'r4', parent: 'p', title: 'r4', chose: 'f' } }, { op: 'tally', collection: items, doc: { id: 'f', owner: 'o1' }, field: 'n', by: 1 }, retract('r4')]);
    t.equal((await store.get(items, 'e'))!.n, 1, 'what the record no longer holds is not taken back');
    t.equal(await store.get(items, 'f'), null, 'what it holds is');
    await store.write([{ op: 'delete', collection: ranked, where: { id: 'r4' } }, { op: 'tally', collection: items, doc: { id: 'e', owner: 'o1' }, field: 'n', by: -1 }]);
    await store.write([{ op: 'put', collection: ranked, doc: { id: 'r3', parent: 'p', title: 'r3', chose: 'd' } }, { op: 'tally', collection: items, doc: { id: 'd', owner: 'o1' }, field: 'n', by: 1 }]);
    await t.rejects(store.write([{ op: 'patch', collection: ranked, where: { id: 'r3' }, set: { title: 'x' } }, retract('r3')]), /patched or deleted by a filter/, 'not after a patch of the records');
    await t.rejects(store.write([{ op: 'delete', collection: ranked, where: { parent: 'q' } }, retract('r3')]), /patched or deleted by a filter/, 'not after a delete by filter');
    await t.rejects(store.write([{ op: 'delete', collection: ranked, where: {} }, retract('r3')]), /patched or deleted by a filter/, 'not after a delete of everything');
    t.equal((await store.get(items, 'd'))!.n, 1, 'a refused write changed nothing');
    t.equal((await store.get(ranked, 'r3'))!.title, 'r3');
    await t.rejects(store.write([{ op: 'tally', collection: ranked, doc: { id: 'x', parent: 'p' }, field: 'n', by: 1 }]), 'tally: not on a ranked collection');
    await t.rejects(store.write([{ op: 'retract', collection: ranked, field: 'n', record: { collection: items, id: 'd' } }]), 'retract: not into a ranked collection');
    await t.rejects(store.write([{ op: 'retract', collection: items, field: 'n', record: { collection: `${c}_other`, id: 'x' } }]), /does not say what its records counted/, 'retract: not of records whose collection has no rule for what they counted');
  });

  if (variant.indexedColumns) {
    t.test('a put whose text leaves out the id and the string fields it indexes: the document is the text and those, however it is read', async (t) => {
      const whole = { id: 'r1', parent: 'p', title: 'First', chose: 'a+b', note: null, n: 2 };
      // The title is left out of the text; a null or a number never is.
      const json = JSON.stringify({ chose: 'a+b', note: null, n: 2 });
      await store.write([
        { op: 'tally', collection: items, doc: { id: 'a', owner: 'o1' }, field: 'n', by: 1 },
        { op: 'tally', collection: items, doc: { id: 'b', owner: 'o1' }, field: 'n', by: 1 },
        { op: 'put', collection: ranked, doc: { id: 'r1', parent: 'p', title: 'First' }, json },
        { op: 'put', collection: ranked, doc: { id: 'r2', parent: 'p', title: 'Second' }, json: JSON.stringify({ id: 'r2', parent: 'p', title: 'Second' }) },
      ]);
      t.strictSame(await store.get(ranked, 'r1'), whole, 'get');
      t.strictSame(await store.find(ranked, { parent: 'p', title: 'First' }), [whole], 'find by the fields left out');
      t.strictSame((await store.find(ranked, { parent: 'p' }, { sort: [['title', 1]] })).map((doc) => doc.title), ['First', 'Second'], 'sorted by one');
      t.strictSame((await store.newestFirst(ranked, 'p', { offset: 0, limit: 10 })).docs, [{ id: 'r2', parent: 'p', title: 'Second' }, whole], 'a ranked page');
      await store.write([{ op: 'patch', collection: ranked, where: { id: 'r1' }, set: { title: 'Renamed' } }]);
      t.strictSame(await store.get(ranked, 'r1'), { ...whole, title: 'Renamed' }, 'a patch of a field left out');
      await store.write([{ op: 'retract', collection: items, field: 'n', record: { collection: ranked, id: 'r1' } }]);
      t.equal(await store.count(items, {}), 0, 'a retract reads the record whole');
    });
  }

  t.test('delete by filter', async (t) => {
    await store.write([
      { op: 'put', collection: items, doc: item('i1') },
      { op: 'put', collection: items, doc: item('i2', { owner: 'o2' }) },
    ]);
    await store.write([{ op: 'delete', collection: items, where: { owner: 'o1' } }]);
    t.equal(await store.get(items, 'i1'), null);
    t.ok(await store.get(items, 'i2'));
    await store.write([{ op: 'delete', collection: items, where: { id: 'i2' } }]);
    t.equal(await store.count(items, {}), 0);
  });

  t.test('find filters by equality, sorts, pages; count agrees', async (t) => {
    await store.write(
      ['i1', 'i2', 'i3', 'i4', 'i5'].map((id) => ({
        op: 'put' as const,
        collection: items,
        doc: item(id, { owner: id === 'i5' ? 'o2' : 'o1', same: 'tie', pub: id !== 'i2', score: Number(id[1]) }),
      })),
    );
    const ids = async (p: Promise<{ id: string }[]>) => (await p).map((d) => d.id);
    t.same(await ids(store.find(items, { owner: 'o1' }, { sort: [['created_at', -1]] })), ['i4', 'i3', 'i2', 'i1']);
    t.same(
      await ids(store.find(items, { owner: 'o1' }, { sort: [['created_at', -1]], offset: 1, limit: 2 })),
      ['i3', 'i2'],
    );
    t.same(await ids(store.find(items, { same: 'tie' }, { sort: [['same', 1], ['id', -1]] })), [
      'i5',
      'i4',
      'i3',
      'i2',
      'i1',
    ]);
    t.same(await ids(store.find(items, { pub: false })), ['i2'], 'booleans compare as booleans');
    t.same(await ids(store.find(items, { score: 3 })), ['i3'], 'numbers compare as numbers');
    t.same(await ids(store.find(items, { score: '3' })), [], 'a string never equals a number');
    t.same(await ids(store.find(items, { owner: 'o1', pub: true }, { sort: [['id', 1]] })), ['i1', 'i3', 'i4']);
    t.equal(await store.count(items, { owner: 'o1' }), 4);
    t.equal(await store.count(items, {}), 5);
    t.same(await store.find(items, { owner: 'o1' }, { offset: 10 }), []);
  });

  t.test('a range bounds one field inclusively; a keyset page starts strictly after its document', async (t) => {
    // Ties on created_at, so the second sort field decides.
    const docs = ['a1', 'a2', 'b3', 'b4', 'c5', 'c6'].map((id) => ({ id, owner: 'o1', created_at: `2026-01-0${id[0] === 'a' ? 1 : id[0] === 'b' ? 2 : 3}T00:00:00.000Z`, n: 0 }));
    await store.write([...docs, { ...docs[0]!, id: 'x9', owner: 'o2' }].map((doc) => ({ op: 'put' as const, collection: items, doc })));
    const sort: Array<[string, 1 | -1]> = [['created_at', -1], ['id', -1]];
    const ids = async (options: Parameters<ReadModelStore['find']>[2]) => (await store.find(items, { owner: 'o1' }, options)).map((doc) => doc.id);
    t.strictSame(await ids({ sort }), ['c6', 'c5', 'b4', 'b3', 'a2', 'a1']);
    const range = { field: 'created_at', gte: '2026-01-02T00:00:00.000Z', lte: '2026-01-03T00:00:00.000Z' };
    t.strictSame(await ids({ sort, range }), ['c6', 'c5', 'b4', 'b3'], 'both bounds inclusive');
    t.strictSame(await ids({ sort, range: { field: 'created_at', lte: '2026-01-01T00:00:00.000Z' } }), ['a2', 'a1'], 'one bound');
    t.equal(await store.count(items, { owner: 'o1' }, range), 4, 'count takes the range');
    t.strictSame(await ids({ sort, after: ['2026-01-03T00:00:00.000Z', 'c5'], limit: 2 }), ['b4', 'b3'], 'after a document, ties broken by the next field');
    t.strictSame(await ids({ sort, after: ['2026-01-02T00:00:00.000Z', 'b4'] }), ['b3', 'a2', 'a1']);
    t.strictSame(await ids({ sort, range, after: ['2026-01-02T00:00:00.000Z', 'b4'] }), ['b3'], 'with a range');
    t.strictSame(await ids({ sort: [['created_at', 1], ['id', 1]], after: ['2026-01-02T00:00:00.000Z', 'b3'] }), ['b4', 'c5', 'c6'], 'ascending');
    t.strictSame(await ids({ sort, after: ['2026-01-01T00:00:00.000Z', 'a1'] }), [], 'after the last');
  });

  t.test('null matches a missing field and a null one', async (t) => {
    await store.write([
      { op: 'put', collection: items, doc: { id: 'a', revoked_at: null } },
      { op: 'put', collection: items, doc: { id: 'b' } },
      { op: 'put', collection: items, doc: { id: 'c', revoked_at: '2026-01-01' } },
    ]);
    t.same((await store.find(items, { revoked_at: null }, { sort: [['id', 1]] })).map((d) => d.id), ['a', 'b']);
  });

  t.test('operator-shaped values are plain data', async (t) => {
    await store.write([{ op: 'put', collection: items, doc: { id: 'x', key: '{"$ne":null}', owner: '$where' } }]);
    t.same((await store.find(items, { key: '{"$ne":null}' })).map((d) => d.id), ['x']);
    t.same(await store.find(items, { key: '$ne' }), []);
    t.same((await store.find(items, { owner: '$where' })).map((d) => d.id), ['x']);
    t.same(await store.get(items, '{"$gt":""}'), null);
  });

  t.test('names from outside the code are refused', async (t) => {
    await t.rejects(store.find('bad-name; drop', {}));
    await t.rejects(store.find(items, { 'a.b': 1 }));
    await t.rejects(store.find(items, { $where: 'x' }));
    await t.rejects(store.write([{ op: 'increment', collection: items, id: 'i', field: '$inc', by: 1 }]));
  });

  t.test('checkpoints move with the ops, compare-and-set', async (t) => {
    const cp = `${c}_projection`;
    t.equal((await store.checkpoints()).get(cp), undefined, 'a new projection has no checkpoint');
    t.equal(
      await store.write([{ op: 'put', collection: items, doc: item('i1') }], [{ name: cp, expected: 0n, next: 7n }]),
      true,
    );
    t.equal((await store.checkpoints()).get(cp), 7n);
    const stale = await store.write(
      [{ op: 'put', collection: items, doc: item('i2') }],
      [{ name: cp, expected: 0n, next: 9n }],
    );
    t.equal(stale, false, 'a stale expectation is refused');
    t.equal(await store.get(items, 'i2'), null, 'and nothing of it is applied');
    t.equal((await store.checkpoints()).get(cp), 7n);
    t.ok(await store.write([], [{ name: cp, expected: 7n, next: 2n ** 62n }]), 'large positions survive');
    t.equal((await store.checkpoints()).get(cp), 2n ** 62n);
  });

  t.test('concurrent writers with one expectation: exactly one wins', async (t) => {
    const cp = `${c}_race`;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        store.write(
          [{ op: 'put', collection: items, doc: item(`i${i}`) }],
          [{ name: cp, expected: 0n, next: BigInt(i + 1) }],
        ),
      ),
    );
    t.equal(results.filter(Boolean).length, 1);
    t.equal(await store.count(items, {}), 1);
  });

  t.test('reset empties collections and forgets checkpoints', async (t) => {
    const cp = `${c}_reset`;
    await store.write([{ op: 'put', collection: items, doc: item('i1') }], [{ name: cp, expected: 0n, next: 3n }]);
    await store.write([{ op: 'put', collection: `${c}_other`, doc: { id: 'o' } }]);
    await store.reset([items], [cp]);
    t.equal(await store.count(items, {}), 0);
    t.equal(await store.count(`${c}_other`, {}), 1, 'other collections are untouched');
    t.equal((await store.checkpoints()).get(cp), undefined);
    await store.write([{ op: 'put', collection: items, doc: item('i1') }], [{ name: cp, expected: 0n, next: 1n }]);
    t.equal(await store.count(items, {}), 1, 'usable after reset');
  });

  const entry = (id: string, parent = 'p1', extra: Record<string, unknown> = {}) => ({ op: 'put' as const, collection: ranked, doc: { id, parent, ...extra } });
  const pageIds = async (group: string, offset: number, limit: number) => {
    const page = await store.newestFirst(ranked, group, { offset, limit });
    return { ids: page.docs.map((d) => d.id), total: page.total };
  };

  t.test('a ranked collection pages newest first, at any depth', async (t) => {
    await store.write(['a', 'b', 'c', 'd', 'e'].map((id) => entry(id)));
    await store.write([entry('x', 'p2'), entry('f')]);
    t.same(await pageIds('p1', 0, 2), { ids: ['f', 'e'], total: 6 });
    t.same(await pageIds('p1', 2, 2), { ids: ['d', 'c'], total: 6 });
    t.same(await pageIds('p1', 4, 2), { ids: ['b', 'a'], total: 6 });
    t.same(await pageIds('p1', 5, 100), { ids: ['a'], total: 6 }, 'a short last page');
    t.same(await pageIds('p1', 6, 2), { ids: [], total: 6 }, 'past the end');
    t.same(await pageIds('p1', 0, 0), { ids: [], total: 6 }, 'limit 0');
    t.same(await pageIds('p2', 0, 10), { ids: ['x'], total: 1 }, 'groups rank apart');
    t.same(await pageIds('nobody', 0, 10), { ids: [], total: 0 });
    t.strictSame((await store.newestFirst(ranked, 'p2', { offset: 0, limit: 1 })).docs[0], { id: 'x', parent: 'p2' }, 'the rank is not part of the document');
  });

  t.test('a replaced document keeps its rank; its group cannot change', async (t) => {
    await store.write([entry('a'), entry('b'), entry('c')]);
    await store.write([entry('a', 'p1', { note: 'edited' })]);
    t.same((await pageIds('p1', 0, 10)).ids, ['c', 'b', 'a']);
    t.equal((await store.get(ranked, 'a'))!.note, 'edited');
    await t.rejects(store.write([entry('a', 'p2')]), 'moving to another group is refused');
    await t.rejects(store.write([{ op: 'patch', collection: ranked, where: { id: 'a' }, set: { parent: 'p2' } }]));
    await t.rejects(store.write([{ op: 'put', collection: ranked, doc: { id: 'z' } }]), 'the group field is required');
    t.same((await pageIds('p1', 0, 10)).ids, ['c', 'b', 'a'], 'a refused write changed nothing');
    await t.rejects(store.newestFirst(items, 'o1', { offset: 0, limit: 10 }), 'only ranked collections page by rank');
    await t.rejects(store.newestFirst(ranked, 'p1', { offset: -1, limit: 10 }), 'a negative offset is refused');
    await t.rejects(store.newestFirst(ranked, 'p1', { offset: 0, limit: 1.5 }), 'a fractional limit is refused');
  });

  t.test('deletes close the ranks up, mixed with puts in one write or many', async (t) => {
    // A model of each group in put order, checked against the store after every write.
    const model = new Map<string, string[]>();
    let next = 0;
    const step = fc.array(
      fc.oneof(
        fc.record({ kind: fc.constant('put' as const), group: fc.constantFrom('p1', 'p2') }),
        fc.record({ kind: fc.constant('delete' as const), group: fc.constantFrom('p1', 'p2'), pick: fc.nat() }),
        fc.record({ kind: fc.constant('replace' as const), group: fc.constantFrom('p1', 'p2'), pick: fc.nat() }),
      ),
      { minLength: 1, maxLength: 6 },
    );
    await fc.assert(
      fc.asyncProperty(step, async (batch) => {
        const ops: ReadModelOp[] = [];
        for (const action of batch) {
          const members = model.get(action.group) ?? [];
          model.set(action.group, members);
          if (action.kind === 'put') {
            const id = `r${next++}`;
            members.push(id);
            ops.push(entry(id, action.group));
          } else if (members.length > 0) {
            const [id] = action.kind === 'delete' ? members.splice(action.pick % members.length, 1) : [members[action.pick % members.length]!];
            ops.push(action.kind === 'delete' ? { op: 'delete', collection: ranked, where: { id: id! } } : entry(id!, action.group, { n: next }));
          }
        }
        await store.write(ops);
        for (const [group, members] of model) {
          const { ids, total } = await pageIds(group, 0, 1000);
          if (total !== members.length || ids.join() !== [...members].reverse().join()) {
            t.fail(`${group}: store has ${ids.join()} (total ${total}), model ${[...members].reverse().join()}`);
          }
          const middle = Math.floor(members.length / 2);
          const window = await pageIds(group, middle, 3);
          if (window.ids.join() !== [...members].reverse().slice(middle, middle + 3).join()) t.fail(`${group}: a window at ${middle} is ${window.ids.join()}`);
        }
      }),
      { numRuns: 40 },
    );
    t.pass('every write left each group dense and in put order');
  });

  t.test('reset starts ranks over', async (t) => {
    await store.write([entry('a'), entry('b')]);
    await store.reset([ranked], []);
    await store.write([entry('c')]);
    t.same(await pageIds('p1', 0, 10), { ids: ['c'], total: 1 });
  });

  t.test('expunge after deletes keeps every other document readable, ranks included', async (t) => {
    await store.write([entry('a', 'p1', { text: 'zażółć 🎉' }), entry('b'), entry('c'), { op: 'put', collection: items, doc: item('i1') }, { op: 'put', collection: items, doc: item('i2') }]);
    await store.write([
      { op: 'delete', collection: ranked, where: { id: 'b' } },
      { op: 'delete', collection: items, where: { id: 'i1' } },
    ]);
    await store.expunge();
    await store.expunge();
    t.same(await pageIds('p1', 0, 10), { ids: ['c', 'a'], total: 2 });
    t.same(await store.get(ranked, 'a'), { id: 'a', parent: 'p1', text: 'zażółć 🎉' });
    t.equal(await store.get(items, 'i1'), null);
    t.same(await store.get(items, 'i2'), item('i2'));
    await store.write([entry('d')]);
    t.same(await pageIds('p1', 0, 10), { ids: ['d', 'c', 'a'], total: 3 }, 'and writes go on');
  });

  const ids = async (from: ReadModelStore, collection: string) => (await from.find(collection, {}, { sort: [['id', 1]] })).map((d) => d.id);
  /** The collections a rebuild replaces: all but `<c>_other`. */
  const rebuilt = () => specs.filter((spec) => spec.name !== `${c}_other`);

  t.test('a shadow fills beside the live collections, then swaps in as one', async (t) => {
    const cp = `${c}_projection`;
    await store.write([{ op: 'put', collection: items, doc: item('i1') }], [{ name: cp, expected: 0n, next: 4n }]);
    await store.write([{ op: 'put', collection: `${c}_other`, doc: { id: 'o' } }]);
    const shadow = await store.shadow(rebuilt(), [cp]);
    t.same(await ids(shadow, items), [], 'a shadow starts empty');
    t.equal((await shadow.checkpoints()).get(cp), undefined, 'with checkpoints of its own');
    t.ok(await shadow.write([{ op: 'put', collection: items, doc: item('i2', { key: 'k2' }) }, { op: 'put', collection: items, doc: item('i3') }], [{ name: cp, expected: 0n, next: 6n }]));
    t.same(await ids(store, items), ['i1'], 'the live collection is untouched until the swap');
    t.equal((await store.checkpoints()).get(cp), 4n, 'and so is the live checkpoint');
    t.same(await ids(shadow, items), ['i2', 'i3'], 'the shadow reads its own documents');

    t.equal(await shadow.swap(), true);
    t.same(await ids(store, items), ['i2', 'i3'], 'the live collection is the shadow now');
    t.equal((await store.checkpoints()).get(cp), 6n, 'with its checkpoint');
    t.same(await ids(store, `${c}_other`), ['o'], 'collections the rebuild does not name are untouched');
    t.same((await store.find(items, { owner: 'o1' }, { sort: [['created_at', -1]] })).map((d) => d.id), ['i3', 'i2'], 'queries answer as before');
    t.same((await store.find(items, { key: 'k2' })).map((d) => d.id), ['i2']);
    await store.ensureCollections(specs);
    t.equal(await store.count(items, {}), 2, 'ensureCollections leaves a swapped-in collection as it is');
    t.equal(await store.write([{ op: 'put', collection: items, doc: item('i4') }], [{ name: cp, expected: 4n, next: 7n }]), false, "a writer still at the old checkpoint is refused");
    t.ok(await store.write([{ op: 'put', collection: items, doc: item('i4') }], [{ name: cp, expected: 6n, next: 7n }]), 'and goes on from the swapped-in one');
    await t.rejects(shadow.swap(), 'a shadow swaps once');
    await shadow.close();
    t.same(await ids(store, items), ['i2', 'i3', 'i4'], 'closing a swapped shadow drops nothing live');

    const again = await store.shadow(rebuilt(), [cp]);
    t.ok(await again.write([{ op: 'put', collection: items, doc: item('i5') }], [{ name: cp, expected: 0n, next: 9n }]));
    t.ok(await again.swap(), 'a second rebuild swaps in over the first');
    t.same(await ids(store, items), ['i5']);
    t.same((await store.find(items, { owner: 'o1' }, { sort: [['created_at', -1]] })).map((d) => d.id), ['i5']);
  });

  t.test('a shadow ranks its ranked collections, and the ranks carry through the swap', async (t) => {
    await store.write([entry('a'), entry('b')]);
    const shadow = await store.shadow(rebuilt(), []);
    await shadow.write([entry('x'), entry('y'), entry('z'), entry('q', 'p2')]);
    await shadow.write([{ op: 'delete', collection: ranked, where: { id: 'y' } }]);
    const page = async (from: ReadModelStore, group: string) => {
      const { docs, total } = await from.newestFirst(ranked, group, { offset: 0, limit: 10 });
      return { ids: docs.map((d) => d.id), total };
    };
    t.same(await page(shadow, 'p1'), { ids: ['z', 'x'], total: 2 }, 'the shadow pages by rank, dense after a delete');
    t.same(await page(store, 'p1'), { ids: ['b', 'a'], total: 2 }, 'the live group is untouched');
    t.ok(await shadow.swap());
    t.same(await page(store, 'p1'), { ids: ['z', 'x'], total: 2 });
    t.same(await page(store, 'p2'), { ids: ['q'], total: 1 });
    await store.write([entry('w')]);
    t.same(await page(store, 'p1'), { ids: ['w', 'z', 'x'], total: 3 }, 'a put after the swap ranks on from the shadow');
    t.same((await store.newestFirst(ranked, 'p1', { offset: 1, limit: 1 })).docs.map((d) => d.id), ['z']);
  });

  t.test('a swap waits while a live checkpoint is ahead of the shadow, unless told not to', async (t) => {
    const cp = `${c}_ahead`;
    const gone = `${c}_gone`;
    await store.write([{ op: 'put', collection: items, doc: item('i1') }], [{ name: cp, expected: 0n, next: 7n }]);
    const shadow = await store.shadow(rebuilt(), [cp]);
    await shadow.write([{ op: 'put', collection: items, doc: item('i2') }], [{ name: cp, expected: 0n, next: 5n }]);
    t.equal(await shadow.swap(), false, 'refused: the live read models have more');
    t.same(await ids(store, items), ['i1'], 'nothing changed');
    t.equal((await store.checkpoints()).get(cp), 7n);
    await shadow.write([{ op: 'put', collection: items, doc: item('i3') }], [{ name: cp, expected: 5n, next: 7n }]);
    t.equal(await shadow.swap(), true, 'swapped once the shadow caught up');
    t.same(await ids(store, items), ['i2', 'i3']);

    await store.write([], [{ name: gone, expected: 0n, next: 3n }]);
    const behind = await store.shadow(rebuilt(), [cp, gone]);
    await behind.write([{ op: 'put', collection: items, doc: item('i4') }], [{ name: cp, expected: 0n, next: 2n }]);
    t.equal(await behind.swap({ behind: true }), true, 'a swap told to go behind goes');
    t.same(await ids(store, items), ['i4']);
    const checkpoints = await store.checkpoints();
    t.equal(checkpoints.get(cp), 2n, 'the live checkpoint is the shadow one, behind as it is');
    t.equal(checkpoints.get(gone), undefined, 'a checkpoint the shadow never moved is removed');
  });

  t.test('a shadow closed unswapped changes nothing; one abandoned is dropped by the next rebuild', async (t) => {
    const cp = `${c}_closed`;
    await store.write([{ op: 'put', collection: items, doc: item('i1') }], [{ name: cp, expected: 0n, next: 2n }]);
    const closed = await store.shadow(rebuilt(), [cp]);
    await closed.write([{ op: 'put', collection: items, doc: item('i9') }], [{ name: cp, expected: 0n, next: 9n }]);
    await closed.close();
    t.same(await ids(store, items), ['i1']);
    t.equal((await store.checkpoints()).get(cp), 2n);

    const abandoned = await store.shadow(rebuilt(), [cp]);
    await abandoned.write([{ op: 'put', collection: items, doc: item('i8') }, entry('r1')], [{ name: cp, expected: 0n, next: 8n }]);
    // As a crashed rebuild leaves it: never swapped, never closed.
    const next = await store.shadow(rebuilt(), [cp]);
    t.same(await ids(next, items), [], 'the next rebuild starts from empty shadows');
    t.same(await ids(next, ranked), []);
    t.equal((await next.checkpoints()).get(cp), undefined, 'and empty shadow checkpoints');
    await t.rejects(abandoned.swap({ behind: true }), 'the abandoned shadow can no longer swap');
    await abandoned.close();
    await next.write([{ op: 'put', collection: items, doc: item('i7') }], [{ name: cp, expected: 0n, next: 3n }]);
    t.same(await ids(next, items), ['i7'], "closing the abandoned one left the next one's shadows alone");
    t.ok(await next.swap());
    t.same(await ids(store, items), ['i7']);
    t.same(await ids(store, ranked), []);
  });

  /** Writes `count` documents made by `doc`, a thousand per write, each write moving `cp` one on from `position`; answers the last position. */
  const fill = async (collection: string, count: number, doc: (n: number) => Doc, cp: string, position: bigint): Promise<bigint> => {
    for (let from = 0; from < count; from += 1000) {
      const ops = Array.from({ length: Math.min(1000, count - from) }, (_, i): ReadModelOp => ({ op: 'put', collection, doc: doc(from + i) }));
      if (!(await store.write(ops, [{ name: cp, expected: position, next: position + 1n }]))) throw new Error(`write ${position} was refused`);
      position++;
    }
    return position;
  };

  t.test('a large reset empties tens of thousands of documents and leaves nothing over', async (t) => {
    const cp = `${c}_large`;
    const stamp = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 1000).toISOString();
    let position = await fill(items, 30_000, (n) => ({ id: `i${n}`, owner: `o${n % 7}`, created_at: stamp(n), n }), cp, 0n);
    position = await fill(ranked, 10_000, (n) => ({ id: `r${n}`, parent: `p${n % 10}`, n }), cp, position);
    await store.write([{ op: 'put', collection: `${c}_other`, doc: { id: 'o' } }]);
    t.equal(await store.count(items, {}), 30_000);
    t.equal((await store.newestFirst(ranked, 'p3', { offset: 0, limit: 1 })).total, 1000);

    await store.reset([items, ranked], [cp]);
    t.equal(await store.count(items, {}), 0, 'every plain document is gone');
    t.equal(await store.count(ranked, {}), 0, 'every ranked one too');
    t.same(await store.find(items, { owner: 'o1' }, { sort: [['created_at', -1], ['id', -1]], limit: 5 }), [], 'no query finds one');
    for (let group = 0; group < 10; group++) t.same(await pageIds(`p${group}`, 0, 5), { ids: [], total: 0 }, `group p${group} is empty`);
    t.equal((await store.checkpoints()).get(cp), undefined, 'the checkpoint is gone with them');
    t.same(await ids(store, `${c}_other`), ['o'], 'a collection not named keeps its documents');

    t.equal(
      await store.write([{ op: 'put', collection: items, doc: item('i1') }], [{ name: cp, expected: position, next: position + 1n }]),
      false,
      'a writer still at the checkpoint from before is refused',
    );
    t.ok(
      await store.write(
        [
          { op: 'put', collection: items, doc: { id: 'a', owner: 'o1', created_at: stamp(1) } },
          { op: 'put', collection: items, doc: { id: 'b', owner: 'o1', created_at: stamp(2) } },
          entry('x', 'p3'),
          entry('y', 'p3'),
        ],
        [{ name: cp, expected: 0n, next: 1n }],
      ),
      'a writer starting from no checkpoint goes on',
    );
    t.same(await pageIds('p3', 0, 10), { ids: ['y', 'x'], total: 2 }, 'ranks start over');
    t.same((await store.find(items, { owner: 'o1' }, { sort: [['created_at', -1], ['id', -1]] })).map((d) => d.id), ['b', 'a'], 'queries answer as before');
    t.equal(await store.count(items, {}), 2, 'and nothing of what was reset came back');
  });

  t.test('a large catch-up batch: ten thousand ops in one write apply in their order', async (t) => {
    const cp = `${c}_batch`;
    // A model of what the write must leave: each group's members in put order, and each item's counter.
    const groups = new Map<string, string[]>();
    const counters = new Map<string, number>();
    const notes = new Map<string, number>();
    const ops: ReadModelOp[] = [];
    const put = (id: string, group: string) => {
      ops.push(entry(id, group));
      groups.set(group, [...(groups.get(group) ?? []), id]);
    };
    const remove = (id: string) => {
      ops.push({ op: 'delete', collection: ranked, where: { id } });
      for (const [group, members] of groups) groups.set(group, members.filter((m) => m !== id));
      notes.delete(id);
    };
    for (let e = 0; e < 5000; e++) {
      put(`r${e}`, `g${e % 8}`);
      const itemId = `i${e % 2000}`;
      if (e < 2000) {
        ops.push({ op: 'put', collection: items, doc: { id: itemId, owner: `o${e % 3}`, n: 0 } });
        counters.set(itemId, 0);
      } else {
        ops.push({ op: 'increment', collection: items, id: itemId, field: 'n', by: 1 });
        counters.set(itemId, counters.get(itemId)! + 1);
      }
      // A replaced document keeps its rank.
      if (e % 10 === 9 && [...groups.values()].some((m) => m.includes(`r${e - 1}`))) {
        ops.push(entry(`r${e - 1}`, `g${(e - 1) % 8}`, { note: e }));
        notes.set(`r${e - 1}`, e);
      }
      // An erasure of every fourth response of the last hundred.
      if (e % 100 === 99) for (let d = e - 99; d <= e; d += 4) remove(`r${d}`);
      // A whole group deleted by its group field half way, then filled again.
      if (e === 2500) {
        ops.push({ op: 'delete', collection: ranked, where: { parent: 'g7' } });
        for (const id of groups.get('g7') ?? []) notes.delete(id);
        groups.set('g7', []);
      }
    }
    ops.push({ op: 'patch', collection: items, where: { owner: 'o1' }, set: { flagged: true } });
    t.ok(ops.length >= 10_000, `${ops.length} ops`);

    t.ok(await store.write(ops, [{ name: cp, expected: 0n, next: 5000n }]));
    t.equal((await store.checkpoints()).get(cp), 5000n);
    for (const [group, members] of groups) {
      const { ids: newest, total } = await pageIds(group, 0, 10_000);
      t.equal(total, members.length, `${group} holds ${members.length}`);
      t.same(newest, [...members].reverse(), `${group} ranks its members in put order`);
      const middle = Math.floor(members.length / 2);
      t.same((await pageIds(group, middle, 3)).ids, [...members].reverse().slice(middle, middle + 3), `${group} reads a page half way down by rank`);
    }
    for (const [id, note] of notes) t.equal((await store.get(ranked, id))?.note, note, `${id} was replaced`);
    const stored = await store.find(items, {}, { sort: [['id', 1]] });
    t.equal(stored.length, 2000);
    t.notOk(
      stored.some((doc) => doc.n !== counters.get(doc.id) || (doc.owner === 'o1') !== (doc.flagged === true)),
      'every counter has each of its increments once, and the patch reached every match',
    );
  });

  /** Lease time by hand: an expiry is a claim at a later `now`, never a wait. */
  const at = (ms: number) => new Date(Date.UTC(2026, 10, 22, 10) + ms);
  const TTL = 10_000;
  /** A second store on the same data, as another process opens it. */
  const other = async (t: Test) => {
    const second = await open();
    t.teardown(() => second.close());
    return second;
  };

  t.test('two projectors at once: only one takes the lease, and only its fenced writes apply', async (t) => {
    const lease = `${c}_lease`;
    const cp = `${c}_fenced`;
    const second = await other(t);
    const claims = await Promise.all([store, second].map((s, i) => s.claimLease({ name: lease, holder: `p${i}`, now: at(0), ttlMs: TTL })));
    t.equal(claims.filter(Boolean).length, 1, 'one claim of two racing for a free lease wins');
    const winner = claims[0] ? 0 : 1;
    const [holder, loser] = winner === 0 ? [store, second] : [second, store];
    t.same(await loser.lease(lease), { holder: `p${winner}`, expiresAt: at(TTL) }, 'both see the winner, until now + ttl');
    t.equal(await loser.claimLease({ name: lease, holder: `p${1 - winner}`, now: at(TTL - 1), ttlMs: TTL }), false, 'a claim before the expiry is refused');

    const results = await Promise.allSettled([
      holder.write([{ op: 'put', collection: items, doc: item('i1') }], [{ name: cp, expected: 0n, next: 5n }], { name: lease, holder: `p${winner}` }),
      loser.write([{ op: 'put', collection: items, doc: item('i2') }], [{ name: cp, expected: 0n, next: 5n }], { name: lease, holder: `p${1 - winner}` }),
    ]);
    t.match(results[0], { status: 'fulfilled', value: true }, "the holder's write applies");
    t.match(results[1], { status: 'rejected', reason: LeaseLost }, "the other's is refused with LeaseLost");
    t.same(await ids(store, items), ['i1'], 'and nothing of it is applied');
    t.equal((await store.checkpoints()).get(cp), 5n);
    await t.rejects(loser.write([], [{ name: cp, expected: 5n, next: 6n }], { name: lease, holder: `p${1 - winner}` }), LeaseLost, 'even with the right checkpoint expectation');
    t.equal((await store.checkpoints()).get(cp), 5n);
  });

  t.test('a lease runs out: another takes it over, and the old holder can neither renew nor write', async (t) => {
    const lease = `${c}_lease`;
    const cp = `${c}_takeover`;
    const second = await other(t);
    t.ok(await store.claimLease({ name: lease, holder: 'old', now: at(0), ttlMs: TTL }));
    t.ok(await store.write([{ op: 'put', collection: items, doc: item('i1') }], [{ name: cp, expected: 0n, next: 1n }], { name: lease, holder: 'old' }));
    t.ok(await store.write([{ op: 'put', collection: items, doc: item('i2') }], [{ name: cp, expected: 1n, next: 2n }], { name: lease, holder: 'old' }), 'an expired lease nobody took still fences in its holder');
    t.equal(await second.claimLease({ name: lease, holder: 'new', now: at(TTL - 1), ttlMs: TTL }), false, 'not a millisecond before the expiry');
    t.equal(await second.claimLease({ name: lease, holder: 'new', now: at(TTL), ttlMs: TTL }), true, 'taken over at the expiry');
    t.same(await store.lease(lease), { holder: 'new', expiresAt: at(2 * TTL) });
    t.equal(await store.claimLease({ name: lease, holder: 'old', now: at(TTL + 1), ttlMs: TTL }), false, 'the old holder cannot renew');
    await t.rejects(store.write([{ op: 'put', collection: items, doc: item('i3') }], [{ name: cp, expected: 2n, next: 3n }], { name: lease, holder: 'old' }), LeaseLost, 'nor write');
    t.ok(await second.write([{ op: 'put', collection: items, doc: item('i4') }], [{ name: cp, expected: 2n, next: 3n }], { name: lease, holder: 'new' }), 'the new holder goes on from the checkpoint');
    t.same(await ids(store, items), ['i1', 'i2', 'i4']);
  });

  t.test('a renewed lease runs from its renewal', async (t) => {
    const lease = `${c}_lease`;
    const second = await other(t);
    t.ok(await store.claimLease({ name: lease, holder: 'a', now: at(0), ttlMs: TTL }));
    t.ok(await store.claimLease({ name: lease, holder: 'a', now: at(TTL - 100), ttlMs: TTL }), 'the holder renews');
    t.same(await second.lease(lease), { holder: 'a', expiresAt: at(2 * TTL - 100) });
    t.equal(await second.claimLease({ name: lease, holder: 'b', now: at(TTL + 100), ttlMs: TTL }), false, 'past the first expiry it is still held');
    t.ok(await store.claimLease({ name: lease, holder: 'a', now: at(TTL + 200), ttlMs: TTL }), 'and renewed again');
    t.equal(await second.claimLease({ name: lease, holder: 'b', now: at(2 * TTL + 199), ttlMs: TTL }), false);
    t.equal(await second.claimLease({ name: lease, holder: 'b', now: at(2 * TTL + 200), ttlMs: TTL }), true, 'once renewals stop, it runs out');
    t.equal(await store.claimLease({ name: `${c}_other_lease`, holder: 'a', now: at(2 * TTL + 200), ttlMs: TTL }), true, 'leases of other names are apart');
  });

  t.test('a lease released on a clean stop is free at once; a release by another changes nothing', async (t) => {
    const lease = `${c}_lease`;
    const second = await other(t);
    t.ok(await store.claimLease({ name: lease, holder: 'a', now: at(0), ttlMs: TTL }));
    await second.releaseLease(lease, 'b');
    t.same(await store.lease(lease), { holder: 'a', expiresAt: at(TTL) }, 'one who does not hold it cannot release it');
    await store.releaseLease(lease, 'a');
    t.equal(await second.lease(lease), null, 'released');
    t.ok(await second.claimLease({ name: lease, holder: 'b', now: at(1), ttlMs: TTL }), 'and taken long before the old expiry');
    await t.rejects(store.write([], [], { name: lease, holder: 'a' }), LeaseLost, 'the holder that released it is fenced out');
    await store.releaseLease(lease, 'a');
    t.same(await second.lease(lease), { holder: 'b', expiresAt: at(TTL + 1) }, "and its late release leaves the new holder's lease alone");
  });

  t.test('a holder known to be gone is replaced at once, only by naming it', async (t) => {
    const lease = `${c}_lease`;
    const second = await other(t);
    t.ok(await store.claimLease({ name: lease, holder: 'gone', now: at(0), ttlMs: TTL }));
    t.equal(await second.claimLease({ name: lease, holder: 'b', now: at(1), ttlMs: TTL, replacing: 'someone-else' }), false, 'naming another holder takes nothing');
    t.ok(await second.claimLease({ name: lease, holder: 'b', now: at(1), ttlMs: TTL, replacing: 'gone' }), 'naming the holder takes it before its expiry');
    t.same(await store.lease(lease), { holder: 'b', expiresAt: at(TTL + 1) });
  });

  t.test('the holder\'s consumers, each with a fence of its own: their writes apply side by side, and a takeover or a release stops every one of them', async (t) => {
    const lease = `${c}_lease`;
    const consumers = ['projections', 'erasure', 'beside-0', 'beside-1'];
    const second = await other(t);
    t.ok(await store.claimLease({ name: lease, holder: 'old', now: at(0), ttlMs: TTL }));
    const fenceOf = (holder: string, consumer: string) => ({ name: lease, holder, consumer });
    // Each consumer writes at once with the others, several times, each moving its own checkpoint.
    for (let round = 0; round < 3; round++) {
      const written = await Promise.all(
        consumers.map((consumer, i) =>
          store.write([{ op: 'put', collection: items, doc: item(`i${i}`, { n: round }) }], [{ name: `${c}_${consumer}`, expected: BigInt(round), next: BigInt(round + 1) }], fenceOf('old', consumer)),
        ),
      );
      t.same(written, consumers.map(() => true), `round ${round}: every consumer's write applied`);
    }
    t.ok(await store.claimLease({ name: lease, holder: 'old', now: at(TTL - 1), ttlMs: TTL }), 'renewed while they write');
    t.ok(await store.write([], [], fenceOf('old', 'projections')), 'a renewal leaves its own holder\'s fences passing');
    t.ok(await second.claimLease({ name: lease, holder: 'new', now: at(2 * TTL), ttlMs: TTL }), 'taken over at the expiry');
    for (const consumer of [...consumers, 'never-wrote']) {
      await t.rejects(store.write([{ op: 'put', collection: items, doc: item('i9') }], [], fenceOf('old', consumer)), LeaseLost, `the old holder's ${consumer} is fenced out`);
    }
    t.equal(await store.get(items, 'i9'), null, 'nothing of theirs landed');
    t.ok(await second.write([], [{ name: `${c}_projections`, expected: 3n, next: 4n }], fenceOf('new', 'projections')), 'the new holder\'s consumer writes from the checkpoint');
    t.ok(await second.write([], [], fenceOf('new', 'erasure')), 'and so does another');
    await second.releaseLease(lease, 'new');
    for (const consumer of ['projections', 'erasure']) {
      await t.rejects(second.write([], [], fenceOf('new', consumer)), LeaseLost, `once released, its ${consumer} is fenced out too`);
    }
    t.ok(await store.claimLease({ name: lease, holder: 'old', now: at(2 * TTL + 1), ttlMs: TTL }), 'the lease is free again');
    t.ok(await store.write([], [], fenceOf('old', 'projections')), 'and fences in whoever takes it');
  });

  t.test('ping answers', async (t) => {
    await t.resolves(store.ping());
  });
}
