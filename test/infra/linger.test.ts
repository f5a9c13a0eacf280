import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { lingering } from '../../src/infra/event-store/linger.js';
import type { StoredEvent } from '../../src/infra/event-store/port.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';

const noted = (n: number) => [{ type: 'Noted', data: { n }, metadata: {} }];

t.test('given a resting subscription, appends made while it rests come as one batch', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'linger-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  const subscription = lingering(store, 500).subscribe({ after: 0n, batchSize: 10 });
  const iterator = subscription[Symbol.asyncIterator]();
  await store.append('one', noted(1), 'no_stream');
  t.same((await iterator.next()).value?.map((event: StoredEvent) => event.streamId), ['one'], 'the first append comes alone');
  // Asked for the next batch: it rests; two appends, each its own commit, land meanwhile.
  const next = iterator.next();
  await store.append('two', noted(2), 'no_stream');
  await store.append('three', noted(3), 'no_stream');
  t.same((await next).value?.map((event: StoredEvent) => event.streamId), ['two', 'three'], 'both in the next batch');
  await subscription.close();
});

t.test('given a resting subscription, closing it ends the rest at once', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'linger-close-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  const subscription = lingering(store, 60_000).subscribe({ after: 0n, batchSize: 10 });
  const iterator = subscription[Symbol.asyncIterator]();
  await store.append('one', noted(1), 'no_stream');
  await iterator.next();
  const next = iterator.next();
  await subscription.close();
  t.equal((await next).done, true, 'the iteration ends rather than wait out the rest');
});
