/**
 * `admin encrypt-existing` killed (SIGKILL) in the middle, then run again:
 * it resumes from its checkpoint and finishes with every response readable,
 * the plain text gone from the store files, and the seals verifying.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import type { JsonObject } from '../../src/infra/event-store/port.js';
import { adapterOf } from '../../src/kernel/personal-store.js';
import { owner, publishedWidget, testApp } from '../support/app.js';
import { admin, json, startAdmin } from '../support/processes.js';
import { tempDir } from '../support/services.js';
import { plainIn, plantPlain, storeFiles, storePlain } from './encrypt-existing.test.js';

const RESPONSES = 600;

/** The submissions whose stored data is still plain. */
const stillPlain = (dir: string): number => {
  const db = new Database(join(dir, DATABASE_FILE), { readonly: true });
  try {
    return (db.prepare(`SELECT count(*) AS n FROM events WHERE type = 'ResponseSubmitted' AND data NOT LIKE '%"sealed":{%'`).get() as { n: number }).n;
  } finally {
    db.close();
  }
};

t.test('killed in the middle of encrypting, then run again: every response readable, verify passes', async (t) => {
  const dataDir = tempDir(t);
  const env = { DATA_DIR: dataDir };
  const markers: string[] = [];
  {
    const { app, services } = await testApp(t, { dataDir });
    storePlain(services);
    const biz = await owner(services);
    const widgetId = await publishedWidget(app, biz);
    const first = await plantPlain(app, widgetId, 'FIRST');
    markers.push(first.marker);
    // Copies of the first as a version before encryption stored them: plain, each its own response.
    const [stored] = await services.events.readStream(`response-${first.id}`);
    const adapter = adapterOf(services.events);
    for (let i = 0; i < RESPONSES - 1; i += 1) {
      const id = `rsp_copy${String(i).padStart(6, '0')}`;
      const marker = `COPY-${randomBytes(8).toString('hex')}`;
      markers.push(marker);
      const data = { ...(stored!.data as JsonObject), response_id: id, answers: { rating: 3, comment: marker } };
      await adapter.append(`response-${id}`, [{ type: stored!.type, data, metadata: stored!.metadata }], 'no_stream');
    }
    await app.close();
    await services.close();
  }
  t.match(json(await admin(['seal'], env)), { seals: Number });

  const { child, finished } = startAdmin(['encrypt-existing', '--page', '5'], env);
  await new Promise<void>((resolve, reject) => {
    child.stdout!.on('data', () => resolve());
    child.on('close', () => reject(new Error('finished before it could be killed')));
  });
  child.kill('SIGKILL');
  const killed = await finished;
  t.equal(killed.code, null, 'killed');
  const left = stillPlain(dataDir);
  t.ok(left > 0 && left < RESPONSES, `killed in the middle: ${left} of ${RESPONSES} still plain`);

  const again = await admin(['encrypt-existing', '--page', '100'], env);
  t.equal(again.code, 0, again.stderr);
  const done = JSON.parse(again.stdout.trim().split('\n').at(-1)!);
  t.match(done, { done: true }, 'the second run finishes');
  t.ok(done.encrypted > 0 && done.encrypted <= left, 'resumed: it encrypted what was left, not what the first run committed');
  t.same(plainIn(storeFiles(dataDir), markers), [], 'no answer left in plain text in the event store or its log');
  t.match(json(await admin(['verify'], env)), { verified: true, erased: 0 }, 'the seals still verify');

  const { services } = await testApp(t, { dataDir });
  const read = new Set<string>();
  for (let after = 0n; ; ) {
    const page = await services.events.readAll({ after, limit: 500 });
    if (page.length === 0) break;
    for (const event of page) if (event.type === 'ResponseSubmitted') read.add(String((event.data.answers as JsonObject).comment));
    after = page.at(-1)!.position;
  }
  t.same([...read].sort(), [...markers].sort(), 'every response reads as it was submitted');
});
