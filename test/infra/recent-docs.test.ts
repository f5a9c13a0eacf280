import t, { type Test } from 'tap';
import type { ReadModelStore } from '../../src/infra/read-models/port.js';
import { RecentDocs } from '../../src/infra/read-models/recent.js';
import { openSqliteReadModels } from '../../src/infra/read-models/sqlite.js';
import { owner, publishedWidget, testApp } from '../support/app.js';
import { tempDir } from '../support/services.js';

const KEPT = 'summaries';
const OTHER = 'others';

/** A real embedded store, its reads counted, and a clock the test moves. */
async function given(t: Test) {
  const store = openSqliteReadModels(tempDir(t));
  t.teardown(() => store.close());
  await store.ensureCollections([
    { name: KEPT, indexes: [['owner']] },
    { name: OTHER, indexes: [] },
  ]);
  await store.write([
    { op: 'put', collection: KEPT, doc: { id: 'a', owner: 'x', title: 'A', settings: { open: true } } },
    { op: 'put', collection: KEPT, doc: { id: 'b', owner: 'x', title: 'B' } },
    { op: 'put', collection: OTHER, doc: { id: 'a', title: 'other' } },
  ]);
  let reads = 0;
  let now = 1_000;
  const counted: Pick<ReadModelStore, 'get'> = {
    get: (collection, id) => {
      reads++;
      return store.get(collection, id);
    },
  };
  const recent = new RecentDocs(counted, [KEPT], 100, () => now);
  return { store, recent, reads: () => reads, advance: (ms: number) => (now += ms) };
}

t.test('a document read again within the moment is not read from the store again; past it, it is', async (t) => {
  const { recent, reads, advance } = await given(t);
  t.match(await recent.get(KEPT, 'a'), { title: 'A' });
  t.match(await recent.get(KEPT, 'a'), { title: 'A' });
  t.equal(reads(), 1);
  advance(99);
  await recent.get(KEPT, 'a');
  t.equal(reads(), 1, 'still within 100 ms');
  advance(1);
  await recent.get(KEPT, 'a');
  t.equal(reads(), 2, 'at 100 ms it is read again');
  t.equal(await recent.get(KEPT, 'missing'), null);
  t.equal(await recent.get(KEPT, 'missing'), null);
  t.equal(reads(), 3, 'an absent document is kept as absent too');
});

t.test('a collection not named is read from the store every time', async (t) => {
  const { recent, reads } = await given(t);
  await recent.get(OTHER, 'a');
  await recent.get(OTHER, 'a');
  t.equal(reads(), 2);
});

t.test('what this process writes is read afresh at once: the document an op names, or the whole collection', async (t) => {
  const { store, recent, reads } = await given(t);
  await recent.get(KEPT, 'a');
  await recent.get(KEPT, 'b');
  const patch = [{ op: 'patch' as const, collection: KEPT, where: { id: 'a' }, set: { title: 'A2' } }];
  await store.write(patch);
  recent.written(patch);
  t.match(await recent.get(KEPT, 'a'), { title: 'A2' }, 'the patched document');
  await recent.get(KEPT, 'b');
  t.equal(reads(), 3, 'the other one stays kept');

  const byOwner = [{ op: 'patch' as const, collection: KEPT, where: { owner: 'x' }, set: { title: 'X' } }];
  await store.write(byOwner);
  recent.written(byOwner);
  t.match(await recent.get(KEPT, 'b'), { title: 'X' }, 'an op naming no single id forgets the collection');
  recent.written([{ op: 'put', collection: OTHER, doc: { id: 'b' } }]);
  await recent.get(KEPT, 'b');
  t.equal(reads(), 4, 'a write elsewhere forgets nothing here');
  recent.written('all');
  await recent.get(KEPT, 'b');
  t.equal(reads(), 5, "'all' (a reset, a rebuild's swap) forgets everything");
});

t.test('a read that began before a write is not kept', async (t) => {
  const { recent, reads } = await given(t);
  const reading = recent.get(KEPT, 'a');
  recent.written([{ op: 'increment', collection: KEPT, id: 'a', field: 'n', by: 1 }]);
  await reading;
  await recent.get(KEPT, 'a');
  t.equal(reads(), 2);
});

t.test('the documents handed out are frozen, nested fields too: others hold the same one', async (t) => {
  const { recent } = await given(t);
  const doc = (await recent.get(KEPT, 'a')) as unknown as { settings: { open: boolean } };
  t.throws(() => {
    doc.settings.open = false;
  }, TypeError);
});

t.test('through the API: an owner unpublishes a widget and the next public request of this process is refused at once', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${widget}/token` })).statusCode, 200, 'the summary is read, and kept');
  t.equal((await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { published: false } })).statusCode, 200);
  const refused = await app.inject({ method: 'GET', url: `/api/widgets/${widget}/token` });
  t.equal(refused.statusCode, 403);
  t.equal(refused.json().code, 'widget_not_published');
});
