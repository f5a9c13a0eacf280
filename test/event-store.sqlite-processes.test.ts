import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import t from 'tap';
import { openSqliteEventStore } from '../src/infra/event-store/sqlite.js';
import { childEnv } from './support/processes.js';
import { tempDir } from './support/services.js';

const APPENDER = new URL('./support/appender.ts', import.meta.url).pathname;
const appender = (...args: string[]) =>
  spawn(process.execPath, [APPENDER, ...args], { stdio: ['ignore', 'pipe', 'inherit'], env: childEnv({}) });

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

t.test("a live subscription sees another process's events within a second", async (t) => {
  const dir = tempDir(t);
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  const subscription = store.subscribe({ after: 0n, batchSize: 100 });
  const seen = new Map<string, number>();
  const reading = (async () => {
    for await (const batch of subscription) for (const e of batch) seen.set(String((e.data as { n: number }).n), Date.now());
  })();
  const child = appender(dir, 'forever', 'other');
  const acks = new Map<string, number>();
  for await (const line of createInterface({ input: child.stdout! })) {
    acks.set(line.split(' ')[1]!, Date.now());
    if (acks.size === 20) break;
  }
  child.kill('SIGKILL');
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await subscription.close();
  await reading;
  for (const [n, ackedAt] of acks) {
    const seenAt = seen.get(n);
    t.ok(seenAt !== undefined && seenAt - ackedAt <= 1000, `event ${n} seen ${seenAt === undefined ? 'never' : `${seenAt - ackedAt} ms after its ack`}`);
  }
});

t.test('two processes appending with expected revisions never both win', async (t) => {
  const dir = tempDir(t);
  const children = [appender(dir, 'contend', 'shared', '150'), appender(dir, 'contend', 'shared', '150')];
  const outputs = await Promise.all(
    children.map(async (child) => {
      let out = '';
      child.stdout!.on('data', (chunk) => (out += chunk));
      const [code] = await once(child, 'exit');
      return { code, out };
    }),
  );
  for (const { code, out } of outputs) t.match({ code, out }, { code: 0, out: /^done \d+/ });
  const store = openSqliteEventStore(dir);
  t.teardown(() => store.close());
  const events = await store.readStream('shared');
  t.equal(events.length, 300, 'all 300 appends landed, none twice');
  t.same(events.map((e) => e.revision), Array.from({ length: 300 }, (_, i) => BigInt(i)), 'revisions have no gap or repeat');
});
