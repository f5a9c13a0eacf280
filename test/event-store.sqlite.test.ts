import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openSqliteEventStore } from '../src/infra/event-store/sqlite.js';
import { WAL_CHECKPOINT_PAGES } from '../src/infra/sqlite.js';
import { eventStoreContract } from './contracts/event-store.js';

const dir = mkdtempSync(join(tmpdir(), 'events-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

eventStoreContract(t, { open: async () => openSqliteEventStore(dir), erasesFromFeedAtOnce: true });

t.test('a store made before the index by account is indexed when it opens, events of its streams included', async (t) => {
  const old = mkdtempSync(join(tmpdir(), 'unindexed-'));
  t.teardown(() => rmSync(old, { recursive: true, force: true }));
  const first = openSqliteEventStore(old);
  await first.append('form-1', [{ type: 'FormCreated', data: { form_id: '1', account_id: 'acc_a' }, metadata: {} }], 'no_stream');
  await first.append('form-2', [{ type: 'FormCreated', data: { form_id: '2', account_id: 'acc_b' }, metadata: {} }], 'no_stream');
  await first.append('form-1', [{ type: 'FormPublished', data: { form_id: '1' }, metadata: {} }], 0n);
  // As a store of an earlier version holds it: no index at all.
  first['db'].exec('DROP TABLE account_events');
  await first.close();
  const reopened = openSqliteEventStore(old);
  t.teardown(() => reopened.close());
  t.same((await reopened.readAccount('acc_a', { limit: 10 })).map((e) => e.type), ['FormCreated', 'FormPublished']);
  t.same((await reopened.readAccount('acc_b', { limit: 10 })).map((e) => e.type), ['FormCreated']);
  await reopened.append('form-2', [{ type: 'FormPublished', data: { form_id: '2' }, metadata: {} }], 0n);
  t.same((await reopened.readAccount('acc_b', { limit: 10 })).map((e) => e.type), ['FormCreated', 'FormPublished'], 'and goes on indexing');
});

t.test('a full store refuses a whole batch of appends, stores none of them, and says it is full', async (t) => {
  const full = mkdtempSync(join(tmpdir(), 'full-'));
  t.teardown(() => rmSync(full, { recursive: true, force: true }));
  const roomy = openSqliteEventStore(full);
  await roomy.append('seed-1', [{ type: 'Seeded', data: { n: 1 }, metadata: {} }], 'no_stream');
  const pages = roomy['db'].pragma('page_count', { simple: true }) as number;
  t.equal(await roomy.hasRoom(), true, 'room to begin with');
  const capped = openSqliteEventStore(full, undefined, { maxPageCount: pages });
  t.teardown(() => capped.close());
  t.equal(await capped.hasRoom(), false, 'the probe finds none once the file may not grow');
  // One turn of the event loop: a small append, the one that does not fit, and another small one share a transaction.
  const outcomes = await Promise.allSettled([
    capped.append('small-1', [{ type: 'Small', data: { n: 1 }, metadata: {} }], 'no_stream'),
    capped.append('large', [{ type: 'Large', data: { text: 'x'.repeat(64 * 1024) }, metadata: {} }], 'no_stream'),
    capped.append('small-2', [{ type: 'Small', data: { n: 2 }, metadata: {} }], 'no_stream'),
  ]);
  t.same(outcomes.map((outcome) => outcome.status), ['rejected', 'rejected', 'rejected'], 'none is acknowledged');
  t.same(outcomes.map((outcome) => (outcome as PromiseRejectedResult).reason.code), ['SQLITE_FULL', 'SQLITE_FULL', 'SQLITE_FULL'], 'each hears why');
  t.same((await roomy.readAll({ after: 0n, limit: 100 })).map((event) => event.streamId), ['seed-1'], 'and none is stored');
  await roomy.close();
});

t.test('a live subscription reads what another connection appended between two appends of its own, in feed order', async (t) => {
  const shared = mkdtempSync(join(tmpdir(), 'two-writers-'));
  t.teardown(() => rmSync(shared, { recursive: true, force: true }));
  const mine = openSqliteEventStore(shared);
  const other = openSqliteEventStore(shared);
  t.teardown(async () => {
    await mine.close();
    await other.close();
  });
  await mine.append('first', [{ type: 'Noted', data: { n: 1 }, metadata: {} }], 'no_stream');
  await other.append('between', [{ type: 'Noted', data: { n: 2 }, metadata: {} }], 'no_stream');
  await mine.append('last', [{ type: 'Noted', data: { n: 3 }, metadata: {} }], 'no_stream');
  const subscription = mine.subscribe({ after: 0n, batchSize: 10 });
  const first = await subscription[Symbol.asyncIterator]().next();
  await subscription.close();
  const seen = (first.value as Array<{ streamId: string }>).map((event) => event.streamId);
  t.same(seen, ['first', 'between', 'last']);
});

t.test('a live subscription does not hand out events of a stream deleted after they were appended', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'deleted-tail-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  await store.append('kept', [{ type: 'Noted', data: { n: 1 }, metadata: {} }], 'no_stream');
  await store.append('erased', [{ type: 'Noted', data: { n: 2 }, metadata: {} }], 'no_stream');
  await store.deleteStreams(['erased']);
  await store.append('after', [{ type: 'Noted', data: { n: 3 }, metadata: {} }], 'no_stream');
  const subscription = store.subscribe({ after: 0n, batchSize: 10 });
  const first = await subscription[Symbol.asyncIterator]().next();
  await subscription.close();
  const seen = (first.value as Array<{ streamId: string }>).map((event) => event.streamId);
  t.same(seen, ['kept', 'after']);
});

t.test('the store lets its write-ahead log grow to WAL_CHECKPOINT_PAGES before a commit checkpoints it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'checkpoint-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  t.equal(store['db'].pragma('wal_autocheckpoint', { simple: true }), WAL_CHECKPOINT_PAGES);
  t.ok(WAL_CHECKPOINT_PAGES > 1000, "more than SQLite's default");
});

t.test('a live subscription hands out the events its own connection committed frozen, the one object to every subscription', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'frozen-tail-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  const one = store.subscribe({ after: 0n, batchSize: 10 });
  const two = store.subscribe({ after: 0n, batchSize: 10 });
  await store.append('noted', [{ type: 'Noted', data: { n: 1 }, metadata: {} }], 'no_stream');
  const [a] = (await one[Symbol.asyncIterator]().next()).value as Array<{ streamId: string }>;
  const [b] = (await two[Symbol.asyncIterator]().next()).value as Array<{ streamId: string }>;
  await one.close();
  await two.close();
  t.ok(Object.isFrozen(a), 'frozen');
  t.equal(a, b, 'one object');
});
