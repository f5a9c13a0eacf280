import * as fs from 'node:fs';
import t, { type Test } from 'tap';
import type { openSqliteEventStore as Open } from '../../src/infra/event-store/sqlite.js';
import { tempDir } from '../support/services.js';

/**
 * The embedded event store with the log's fsync held until the test lets it
 * go (or fails it): what an append or a read waits for is then visible.
 */
async function heldStore(t: Test) {
  const held: Array<(error: NodeJS.ErrnoException | null) => void> = [];
  const { openSqliteEventStore } = (await t.mockImport('../../src/infra/event-store/sqlite.js', {
    'node:fs': { ...fs, fdatasync: (_fd: number, done: (error: NodeJS.ErrnoException | null) => void) => void held.push(done) },
  })) as { openSqliteEventStore: typeof Open };
  const settle = async (error: NodeJS.ErrnoException | null = null) => {
    // Each fsync asked for so far ends; a read or append may ask for another once it does.
    for (let i = 0; i < 3; i++) {
      await new Promise((resolve) => setImmediate(resolve));
      for (const done of held.splice(0)) done(error);
    }
  };
  return { openSqliteEventStore, held, settle };
}

const noted = (n: number) => [{ type: 'Noted', data: { n }, metadata: {} }];
const state = <T>(promise: Promise<T>) => {
  const seen = { done: false, failed: undefined as unknown };
  promise.then(
    () => void (seen.done = true),
    (error: unknown) => void (seen.failed = error),
  );
  return seen;
};
const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((resolve) => setImmediate(resolve));
};

t.test('an append is acknowledged once the log is on disk, not when it is committed', async (t) => {
  const { openSqliteEventStore, held, settle } = await heldStore(t);
  const events = openSqliteEventStore(tempDir(t));
  t.teardown(async () => {
    await settle();
    await events.close();
  });
  const append = state(events.append('noted-1', noted(1), 'no_stream'));
  await turns();
  t.equal(held.length, 1, 'the commit asked for one fsync');
  t.notOk(append.done, 'and the append waits for it');
  await settle();
  await turns();
  t.ok(append.done, 'acknowledged once the fsync ended');
});

t.test('appends committed while an fsync runs share the next one', async (t) => {
  const { openSqliteEventStore, held, settle } = await heldStore(t);
  const events = openSqliteEventStore(tempDir(t));
  t.teardown(async () => {
    await settle();
    await events.close();
  });
  const first = state(events.append('noted-1', noted(1), 'no_stream'));
  await turns();
  // Three batches, each committed in a turn of its own while the first fsync runs.
  const later = [];
  for (const n of [2, 3, 4]) {
    later.push(state(events.append(`noted-${n}`, noted(n), 'no_stream')));
    await turns();
  }
  t.equal(held.length, 1, 'one fsync runs');
  held.shift()!(null);
  await turns();
  t.ok(first.done, 'the first append is acknowledged');
  t.notOk(later.some((append) => append.done), 'those committed during its fsync are not: it may not cover them');
  t.equal(held.length, 1, 'one more fsync covers all three');
  held.shift()!(null);
  await turns();
  t.ok(later.every((append) => append.done));
});

t.test('no read hands out an event before the log holding it is on disk', async (t) => {
  const { openSqliteEventStore, held, settle } = await heldStore(t);
  const dir = tempDir(t);
  const writer = openSqliteEventStore(dir);
  const reader = openSqliteEventStore(dir);
  t.teardown(async () => {
    await settle();
    await writer.close();
    await reader.close();
  });
  void writer.append('noted-1', noted(1), 'no_stream');
  await turns();
  const read = reader.readAll({ after: 0n, limit: 10 });
  const seen = state(read);
  const stream = state(writer.readStream('noted-1'));
  await turns();
  t.notOk(seen.done, "another connection's read of a committed event waits for the fsync");
  t.notOk(stream.done, "as does this connection's own read of it");
  await settle();
  t.same((await read).map((event) => event.data), [{ n: 1 }], 'then it is handed out');
  held.length = 0;
  await reader.readAll({ after: 0n, limit: 10 });
  t.equal(held.length, 0, 'and read again, it needs no fsync');
});

t.test('after an fsync fails, the store refuses its appends and every later append and unsynced read', async (t) => {
  const { openSqliteEventStore, settle } = await heldStore(t);
  const events = openSqliteEventStore(tempDir(t));
  t.teardown(async () => {
    await settle();
    await events.close();
  });
  const kept = events.append('noted-0', noted(0), 'no_stream');
  await turns();
  await settle();
  t.match(await kept, { position: 1n }, 'an append synced before the failure stands');
  const refused = t.rejects(events.append('noted-1', noted(1), 'no_stream'), { cause: { code: 'EIO' } }, 'the caller hears the disk failed');
  await turns();
  // A second batch commits while the failing fsync runs: the next fsync could not prove it on disk.
  const alsoRefused = t.rejects(events.append('noted-2', noted(2), 'no_stream'), { message: /could not be written to disk/ }, 'a batch waiting for the next fsync is refused too');
  await turns();
  await settle(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }));
  await refused;
  await alsoRefused;
  await t.rejects(events.append('noted-3', noted(3), 'no_stream'), { message: /restart the service/ }, 'and so is every later append');
  await t.rejects(events.readAll({ after: 0n, limit: 10 }), { message: /could not be written to disk/ }, 'a read of the feed past the synced event is refused');
  t.same((await events.readAll({ after: 0n, limit: 1 })).map((event) => event.data), [{ n: 0 }], 'what was synced before still reads');
  await t.rejects(events.headPosition(), { message: /could not be written to disk/ }, 'and the store reports itself unready');
});

t.test('a stream deleted after its append was committed and before it was synced reaches no live subscription', async (t) => {
  const { openSqliteEventStore, settle } = await heldStore(t);
  const events = openSqliteEventStore(tempDir(t));
  t.teardown(async () => {
    await settle();
    await events.close();
  });
  const subscription = events.subscribe({ after: 0n, batchSize: 10 });
  t.teardown(() => subscription.close());
  const appended = events.append('gone', noted(1), 'no_stream');
  await turns();
  const deleted = events.deleteStreams(['gone']);
  await settle();
  await appended;
  await deleted;
  const later = events.append('kept', noted(2), 'no_stream');
  await turns();
  await settle();
  await later;
  const first = await subscription[Symbol.asyncIterator]().next();
  t.same((first.value as Array<{ streamId: string }>).map((event) => event.streamId), ['kept'], 'only the stream that is still there');
});

t.test('close waits for the fsync its appends wait for, and they are acknowledged', async (t) => {
  const { openSqliteEventStore, settle } = await heldStore(t);
  const events = openSqliteEventStore(tempDir(t));
  const append = state(events.append('noted-1', noted(1), 'no_stream'));
  await turns();
  const closed = state(events.close());
  await turns();
  t.notOk(closed.done, 'the close waits');
  await settle();
  await turns();
  t.ok(append.done, 'the append is acknowledged');
  t.ok(closed.done, 'then the store is closed');
  t.equal(append.failed, undefined);
});
