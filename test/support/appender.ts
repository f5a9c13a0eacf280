/**
 * A second process on the embedded event store, for the multi-process tests.
 *   appender.ts DIR forever STREAM         append one event at a time, print "ack N" after each
 *   appender.ts DIR contend STREAM COUNT   read the stream, print "ready", wait for a line on stdin, then append COUNT
 *                                          events with expected revisions, retrying on conflict; each
 *                                          event records the revision it was decided on (-1: none)
 */
import { once } from 'node:events';
import { WrongExpectedRevision } from '../../src/infra/event-store/port.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';

const [dir, mode, stream, count] = process.argv.slice(2);
const store = openSqliteEventStore(dir!);
const event = (n: number, decidedOn?: bigint) => ({ type: 'Counted', data: { n, pid: process.pid, decided_on: Number(decidedOn ?? -1n) }, metadata: { schema_version: 1 } });

if (mode === 'forever') {
  for (let n = 0; ; n++) {
    const { position } = await store.append(stream!, [event(n)], 'any');
    process.stdout.write(`ack ${n} ${position}\n`);
  }
}

if (mode === 'contend') {
  // Every writer reads the stream before any of them appends, so their first
  // appends all expect the same revision: at most one of them may win.
  let last = (await store.readStream(stream!)).at(-1);
  process.stdout.write('ready\n');
  await once(process.stdin, 'data');
  process.stdin.destroy();
  let conflicts = 0;
  for (let n = 0; n < Number(count); last = (await store.readStream(stream!)).at(-1)) {
    try {
      await store.append(stream!, [event(n, last?.revision)], last ? last.revision : 'no_stream');
      n++;
    } catch (error) {
      if (!(error instanceof WrongExpectedRevision)) throw error;
      conflicts++;
    }
  }
  process.stdout.write(`done ${conflicts}\n`);
  await store.close();
}
