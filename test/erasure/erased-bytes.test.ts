/**
 * What a visitor sent is never at rest in plain bytes: the events and the
 * read models keep it sealed under the response's own key, and the API
 * opens it as it serves it. Erasure deletes the key and then the bytes:
 * after responses are erased, no file of the embedded store holds what they
 * said, neither while the server runs nor after it stopped. Each response
 * carries its own markers in its answers and in its page metadata, and the
 * scan looks for them as raw bytes in every file under DATA_DIR; the scan
 * finds the responses' ids, which are stored plain, so it could find the
 * markers were they there. A form's partial responses (pages kept before a
 * submission) carry markers in their answers and hidden values.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import type { App } from '../../src/app.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { owner, publishedWidget, testApp, tokenFor, type Owner } from '../support/app.js';
import { tempDir } from '../support/services.js';

const CONSENT = { id: 'gdpr', type: 'consent', title: 'Privacy', text: 'I agree that Acme stores my answers.', required: true };

async function publishedForm(app: App, who: Owner): Promise<string> {
  const created = await app.inject({
    method: 'POST',
    url: '/api/forms',
    headers: who.headers,
    payload: { title: 'Signup', questions: [{ id: 'name', type: 'short_text', title: 'Your name', required: true }, CONSENT], hidden_fields: ['ref'], settings: { keep_partial: true } },
  });
  if (created.statusCode !== 201) throw new Error(created.body);
  const id = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: who.headers, payload: { published: true } });
  return id;
}

interface Planted {
  id: string;
  /** One per place the response carries visitor text: the answer, the page URL, its title, the referrer. */
  markers: string[];
  /** The page's campaign, which the analytics count responses by, by name, in the clear (a statistic of the object): gone once erased. */
  counted: string[];
}

/** Submits a response whose answer and metadata each carry a marker nothing else contains. */
async function plant(app: App, kind: 'widgets' | 'forms', parentId: string, label: string): Promise<Planted> {
  const marker = (field: string) => `${label}-${field}-${randomBytes(8).toString('hex')}`;
  const [answer, page, title, referrer, campaign] = [marker('answer'), marker('page'), marker('title'), marker('referrer'), marker('campaign')];
  const reply = await app.inject({
    method: 'POST',
    url: `/api/${kind}/${parentId}/submit`,
    payload: {
      answers: kind === 'widgets' ? { rating: 4, comment: answer } : { name: answer, gdpr: true },
      _token: await tokenFor(app, kind, parentId),
      metadata: { pageUrl: `https://shop.example/${page}?utm_campaign=${campaign}`, pageTitle: title, referrer: `https://elsewhere.example/${referrer}` },
    },
  });
  if (reply.statusCode !== 200) throw new Error(`not submitted: ${reply.body}`);
  return { id: reply.json().id, markers: [answer, page, title, referrer], counted: [campaign] };
}

/** Keeps a page of a form as a partial response, its answer and hidden value each carrying a marker. */
async function plantPartial(app: App, parentId: string, label: string, who: Owner): Promise<Planted> {
  const marker = (field: string) => `${label}-${field}-${randomBytes(8).toString('hex')}`;
  const [answer, ref] = [marker('answer'), marker('ref')];
  const session = `${label}-session-${randomBytes(12).toString('hex')}`;
  const reply = await app.inject({ method: 'POST', url: `/api/forms/${parentId}/progress`, payload: { session, page: 'page_1', answers: { name: answer }, hidden: { ref }, _token: await tokenFor(app, 'forms', parentId) } });
  if (reply.statusCode !== 200) throw new Error(`not kept: ${reply.body}`);
  const partial = (await app.inject({ method: 'GET', url: `/api/forms/${parentId}/responses?status=partial`, headers: who.headers })).json().responses.find((r: { answers: { name: string } }) => r.answers.name === answer);
  return { id: partial.id, markers: [answer, ref], counted: [] };
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

/** Every marker found in the files, with the files it was found in. */
function foundIn(files: string[], markers: string[]): Record<string, string[]> {
  const contents = files.map((file) => ({ file: file.split('/').pop()!, bytes: readFileSync(file) }));
  const found: Record<string, string[]> = {};
  for (const marker of markers) {
    const where = contents.filter(({ bytes }) => bytes.includes(Buffer.from(marker, 'utf8'))).map(({ file }) => file);
    if (where.length > 0) found[marker] = where;
  }
  return found;
}

t.test('erased responses leave no byte in the embedded store files, while running and after a clean stop', async (t) => {
  const dataDir = tempDir(t);
  const { app, services } = await testApp(t, { dataDir });
  const biz = await owner(services);
  const parents = {
    widgetBulk: await publishedWidget(app, biz),
    widgetDeleted: await publishedWidget(app, biz),
    formBulk: await publishedForm(app, biz),
    formDeleted: await publishedForm(app, biz),
  };
  const erased = {
    widgetBulk: [await plant(app, 'widgets', parents.widgetBulk, 'WB1'), await plant(app, 'widgets', parents.widgetBulk, 'WB2'), await plant(app, 'widgets', parents.widgetBulk, 'WB3')],
    widgetDeleted: [await plant(app, 'widgets', parents.widgetDeleted, 'WD1'), await plant(app, 'widgets', parents.widgetDeleted, 'WD2'), await plant(app, 'widgets', parents.widgetDeleted, 'WD3')],
    formBulk: [await plant(app, 'forms', parents.formBulk, 'FB1'), await plant(app, 'forms', parents.formBulk, 'FB2'), await plantPartial(app, parents.formBulk, 'FBP', biz)],
    formDeleted: [await plant(app, 'forms', parents.formDeleted, 'FD1'), await plant(app, 'forms', parents.formDeleted, 'FD2'), await plantPartial(app, parents.formDeleted, 'FDP', biz)],
  };
  // Kept responses next to erased ones: the scan must find these, or it could not fail.
  const kept = [await plant(app, 'widgets', parents.widgetBulk, 'KEPTW'), await plant(app, 'forms', parents.formBulk, 'KEPTF'), await plantPartial(app, parents.formBulk, 'KEPTP', biz)];
  const erasedMarkers = Object.values(erased).flat().flatMap((response) => response.markers);
  const erasedCounted = Object.values(erased).flat().flatMap((response) => response.counted);
  const keptMarkers = kept.flatMap((response) => response.markers);
  const store = [join(dataDir, DATABASE_FILE), join(dataDir, `${DATABASE_FILE}-wal`)];

  const served = async () => {
    let text = '';
    for (const [kind, id] of [['widgets', parents.widgetBulk], ['widgets', parents.widgetDeleted], ['forms', parents.formBulk], ['forms', parents.formDeleted]] as const) {
      const reply = await app.inject({ method: 'GET', url: `/api/${kind}/${id}/responses?limit=100&status=all`, headers: biz.headers });
      if (reply.statusCode === 200) text += reply.body;
    }
    return text;
  };
  const ids = [...Object.values(erased).flat(), ...kept].map((response) => response.id);
  t.same(Object.keys(foundIn(filesUnder(dataDir), ids)).sort(), [...ids].sort(), 'the scan finds what is stored plain: every response id');
  t.same(foundIn(filesUnder(dataDir), [...erasedMarkers, ...keptMarkers]), {}, 'before: no marker in any file under DATA_DIR (the write-ahead log included)');
  const before = await served();
  t.ok([...erasedMarkers, ...keptMarkers].every((marker) => before.includes(marker)), 'while the API serves every one of them');

  const bulk = (payload: object) => app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload });
  t.match((await bulk({ widgetId: parents.widgetBulk, ids: erased.widgetBulk.map((r) => r.id) })).json(), { success: true, deleted: 3, erasure_id: /^ers_/ });
  t.match((await bulk({ formId: parents.formBulk, ids: erased.formBulk.map((r) => r.id) })).json(), { success: true, deleted: 3, erasure_id: /^ers_/ });
  t.same((await app.inject({ method: 'DELETE', url: `/api/widgets/${parents.widgetDeleted}`, headers: biz.headers })).json(), { success: true });
  t.same((await app.inject({ method: 'DELETE', url: `/api/forms/${parents.formDeleted}`, headers: biz.headers })).json(), { success: true });

  t.same(foundIn(store, [...erasedMarkers, ...erasedCounted]), {}, 'while running: no erased marker in the database file or its write-ahead log');
  const after = await served();
  t.ok(keptMarkers.every((marker) => after.includes(marker)), 'while running: every kept response is still served');
  t.notOk(erasedMarkers.some((marker) => after.includes(marker)), 'and no erased one');

  await app.close();
  await services.close();
  const files = filesUnder(dataDir);
  t.ok(files.some((file) => file.endsWith(DATABASE_FILE)), 'the database file is there to scan');
  t.same(foundIn(files, [...erasedMarkers, ...erasedCounted]), {}, 'after a clean stop: no erased marker in any file under DATA_DIR');
  t.same(foundIn(files, keptMarkers), {}, 'after a clean stop: no kept marker either, in plain bytes');
});
