import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import t from 'tap';
import { openSqliteEventStore } from '../src/infra/event-store/sqlite.js';
import { eventually } from './support/eventually.js';
import { childEnv } from './support/processes.js';
import { tempDir } from './support/services.js';

const APPENDER = new URL('./support/appender.ts', import.meta.url).pathname;
const appender = (...args: string[]) =>
  spawn(process.execPath, [APPENDER, ...args], { stdio: ['pipe', 'pipe', 'inherit'], env: childEnv({}) });

t.test('every acknowledged append survives kill -9 of the appending process', async (t) => {
  const dir = tempDir(t);
  const child = appender(dir, 'forever', 'counter');
  const acked: number[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    acked.push(Number(line.split(' ')[1]));
    if (acked.length === 300) {
      child.kill('SIGKILL');
      break;
    }
  }
  await once(child, 'exit').catch(() => undefined);
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  const stored = (await store.readStream('counter')).map((e) => (e.data as { n: number }).n);
  t.ok(stored.length >= acked.length, `${stored.length} stored, ${acked.length} acknowledged`);
  t.same(stored.slice(0, acked.length), acked, 'each acknowledged event is there, once, in order');
});

// How soon another process's events are seen is a figure of `npm run bench` (keys made by the CLI), not of this test.
t.test("a live subscription sees another process's events, in order, once each", async (t) => {
  const dir = tempDir(t);
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  const subscription = store.subscribe({ after: 0n, batchSize: 100 });
  const seen: number[] = [];
  const reading = (async () => {
    for await (const batch of subscription) for (const e of batch) seen.push((e.data as { n: number }).n);
  })();
  const child = appender(dir, 'forever', 'other');
  const acked: number[] = [];
  for await (const line of createInterface({ input: child.stdout! })) {
    acked.push(Number(line.split(' ')[1]));
    if (acked.length === 20) break;
  }
  child.kill('SIGKILL');
  await once(child, 'exit').catch(() => undefined);
  const stored = (await store.readStream('other')).length;
  t.ok(await eventually(() => seen.length >= stored), `the subscription delivered all ${stored} stored events`);
  await subscription.close();
  await reading;
  t.same(seen, Array.from({ length: stored }, (_, n) => n), 'in the order appended, none twice, none missing');
  t.same(seen.slice(0, acked.length), acked, 'the acknowledged ones among them');
});

t.test('two processes appending with expected revisions never both win', async (t) => {
  const dir = tempDir(t);
  const children = [appender(dir, 'contend', 'shared', '150'), appender(dir, 'contend', 'shared', '150')];
  const outputs = children.map((child) => {
    let out = '';
    child.stdout!.on('data', (chunk) => (out += chunk));
    return { child, out: () => out };
  });
  t.ok(await eventually(() => outputs.every(({ out }) => out().startsWith('ready\n'))), 'both writers are ready');
  for (const child of children) child.stdin!.end('go\n');
  const ended = await Promise.all(outputs.map(async ({ child, out }) => ({ code: (await once(child, 'exit'))[0], out: out() })));
  for (const { code, out } of ended) t.match({ code, out }, { code: 0, out: /\ndone \d+\n$/ });
  const conflicts = ended.reduce((sum, { out }) => sum + Number(/done (\d+)/.exec(out)![1]), 0);
  // Both made their first append on the empty stream: one of them was refused at least there.
  t.ok(conflicts > 0, `the writers did contend: ${conflicts} appends were refused and retried`);
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  const events = await store.readStream('shared');
  t.equal(events.length, 300, 'all 300 appends landed, none twice');
  t.same(events.map((e) => e.revision), Array.from({ length: 300 }, (_, i) => BigInt(i)), 'revisions have no gap or repeat');
  const stale = events.filter((e) => (e.data as { decided_on: number }).decided_on !== Number(e.revision) - 1);
  t.same(stale.map((e) => e.revision), [], 'each event was decided on the revision right before it: no two writers won on the same one');
});
