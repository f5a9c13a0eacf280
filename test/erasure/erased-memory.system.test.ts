/**
 * Erasure reaches the server's memory too: once a response is erased, a
 * snapshot of the server's heap (taken after a full collection, as V8 takes
 * one) holds nothing it said. Before the erasure, the same snapshot finds
 * the answers, so the search is one that can find them.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { owner, publishedWidget, tokenFor } from '../support/app.js';
import { startServer, type Server } from '../support/processes.js';
import { tempDir, testServices } from '../support/services.js';

const SECRET = 'erased-memory-test-secret-0123456789abcdef';

/** Has the server write a heap snapshot into `dir`, and answers its text once written. */
async function heapOf(server: Server, dir: string): Promise<string> {
  const before = new Set(readdirSync(dir));
  server.signal('SIGUSR2');
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const made = readdirSync(dir).find((name) => !before.has(name) && name.endsWith('.heapsnapshot'));
    // The server writes it on its main thread: once it answers again, the file is whole.
    if (made && statSync(join(dir, made)).size > 0 && (await fetch(`${server.url}/healthz`)).ok) return readFileSync(join(dir, made), 'utf8');
  }
}

t.test("after an erasure, the server's heap holds nothing of the erased answers", async (t) => {
  const dir = tempDir(t);
  const heaps = tempDir(t, 'heap');
  const services = await testServices(t, { dataDir: dir, env: { SECRET } });
  const app = await buildApp(services);
  t.teardown(() => app.close());
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const token = await tokenFor(app, 'widgets', widget);
  const server = await startServer({ DATA_DIR: dir, SECRET, NODE_OPTIONS: `--import=tsx --heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${heaps}` });
  t.teardown(() => server.stop());

  // A one-word answer (the kind the summaries count) and a sentence.
  const word = `Word${randomBytes(8).toString('hex')}`;
  const sentence = `Said ${randomBytes(8).toString('hex')} in a sentence`;
  const sent = await fetch(`${server.url}/api/widgets/${widget}/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ answers: { rating: 4, comment: word }, _token: token }),
  });
  t.equal(sent.status, 200);
  const other = await fetch(`${server.url}/api/widgets/${widget}/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '10.9.8.7' },
    body: JSON.stringify({ answers: { rating: 2, comment: sentence }, _token: token }),
  });
  t.equal(other.status, 200);
  const ids = [((await sent.json()) as { id: string }).id, ((await other.json()) as { id: string }).id];
  const listed = await fetch(`${server.url}/api/widgets/${widget}/responses`, { headers: biz.headers });
  t.match(await listed.text(), word, 'the owner reads the answers back');
  t.ok((await heapOf(server, heaps)).includes(word), 'before the erasure, the snapshot finds the one-word answer the summaries count');

  const erased = await fetch(`${server.url}/api/responses`, { method: 'DELETE', headers: { ...biz.headers, 'content-type': 'application/json' }, body: JSON.stringify({ widgetId: widget, ids }) });
  t.equal(erased.status, 200, await erased.text());
  const heap = await heapOf(server, heaps);
  t.notOk(heap.includes(word), 'the one-word answer is gone from the heap');
  t.notOk(heap.includes(sentence), 'the sentence is gone from the heap');
});
