/**
 * `admin encrypt-existing`: a store written before responses were encrypted
 * (its submissions stored plain) is encrypted in place; every response stays
 * readable, the seals made before still verify, and no file holds the plain
 * text afterwards.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import type { App } from '../../src/app.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import type { PersonalEventStore } from '../../src/kernel/personal-store.js';
import type { Services } from '../../src/services.js';
import { owner, publishedWidget, testApp, tokenFor, type Owner } from '../support/app.js';
import { admin, json } from '../support/processes.js';
import { tempDir } from '../support/services.js';

/** Makes the service store submissions as a version before encryption did: plain. */
export const storePlain = (services: Services) => {
  (services.events as PersonalEventStore).codec.seal = async (events) => events;
};

export async function plantPlain(app: App, widgetId: string, label: string): Promise<{ id: string; marker: string }> {
  const marker = `${label}-${randomBytes(8).toString('hex')}`;
  const reply = await app.inject({ method: 'POST', url: `/api/widgets/${widgetId}/submit`, payload: { answers: { rating: 4, comment: marker }, _token: await tokenFor(app, 'widgets', widgetId) } });
  if (reply.statusCode !== 200) throw new Error(reply.body);
  return { id: reply.json().id, marker };
}

export const storeFiles = (dir: string) => [join(dir, DATABASE_FILE), join(dir, `${DATABASE_FILE}-wal`)].filter((file) => existsSync(file));
export const plainIn = (files: string[], markers: string[]) => markers.filter((marker) => files.some((file) => readFileSync(file).includes(Buffer.from(marker))));

export async function served(app: App, who: Owner, widgetId: string): Promise<string> {
  const reply = await app.inject({ method: 'GET', url: `/api/widgets/${widgetId}/responses?limit=100`, headers: who.headers });
  return reply.body;
}

t.test('plain responses encrypted in place: readable, sealed history verifies, no plain byte left', async (t) => {
  const dataDir = tempDir(t);
  const env = { DATA_DIR: dataDir };
  let widgetId: string;
  let planted: Array<{ id: string; marker: string }>;
  let biz: Owner;
  {
    const { app, services } = await testApp(t, { dataDir });
    storePlain(services);
    biz = await owner(services);
    widgetId = await publishedWidget(app, biz);
    planted = [await plantPlain(app, widgetId, 'A'), await plantPlain(app, widgetId, 'B'), await plantPlain(app, widgetId, 'C')];
    await app.close();
    await services.close();
  }
  const markers = planted.map((p) => p.marker);
  t.same(json(await admin(['seal'], env)), { seals: 1 }, 'the plain history sealed');
  t.same(plainIn(storeFiles(dataDir), markers), markers, 'before: the answers are in the store in plain text');

  const run = await admin(['encrypt-existing', '--page', '2'], env);
  t.equal(run.code, 0, run.stderr);
  const lines = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
  t.match(lines.at(-1), { done: true, encrypted: 3 }, 'every plain response encrypted');
  t.ok(lines.length > 2, 'a line a page that encrypted some');
  t.same(plainIn(storeFiles(dataDir), markers), [], 'after: no answer in plain text in the event store or its log');
  t.match(json(await admin(['verify'], env)), { verified: true }, 'the seals made of the plain text still verify');
  t.match(JSON.parse((await admin(['encrypt-existing'], env)).stdout.trim().split('\n').at(-1)!), { done: true, encrypted: 0 }, 'run again: nothing left to encrypt');

  {
    const { app, services } = await testApp(t, { dataDir });
    const body = await served(app, biz, widgetId);
    t.ok(markers.every((marker) => body.includes(marker)), 'the API serves every response');
    t.same(plainIn(storeFiles(dataDir), markers), [], 'the read models were rebuilt from the encrypted text');
    await app.close();
    await services.close();
  }

  // The seals take an encrypted-in-place event by the digest its envelope names: verify checks the envelope against it.
  const db = new Database(join(dataDir, DATABASE_FILE));
  const [a, b] = planted.map((p) => db.prepare('SELECT position, data FROM events WHERE stream_id = ?').get(`response-${p.id}`) as { position: number; data: string });
  const tamper = (position: number, data: string) => db.prepare('UPDATE events SET data = ? WHERE position = ?').run(data, position);
  const boxOf = (data: string) => JSON.parse(data).sealed.box as string;
  tamper(a!.position, a!.data.replace(boxOf(a!.data), boxOf(b!.data)));
  const swapped = await admin(['verify'], env);
  t.equal(swapped.code, 1, 'another response\'s box under its digest: a break');
  t.match(JSON.parse(swapped.stdout).break, { position: String(a!.position), problem: /does not open under its key/ });
  tamper(a!.position, a!.data.replace(/"submitted_at":"[^"]+"/, '"submitted_at":"2020-01-01T00:00:00.000Z"'));
  const moved = await admin(['verify'], env);
  t.match(JSON.parse(moved.stdout).break, { position: String(a!.position), problem: /a field it keeps plain differs/ }, 'a plain field changed: a break');
  tamper(a!.position, a!.data);
  t.match(json(await admin(['verify'], env)), { verified: true }, 'put back: verified');
  db.close();
});

t.test('a page size out of range is refused', async (t) => {
  const run = await admin(['encrypt-existing', '--page', '0'], { DATA_DIR: tempDir(t) });
  t.equal(run.code, 2);
  t.match(run.stderr, /--page must be a whole number from 1 to 10000/);
});

t.test('refused where the events cannot be rewritten in place (KurrentDB)', async (t) => {
  const { encryptExisting } = await import('../../src/cli/encrypt-existing.js');
  await t.rejects(encryptExisting({ events: { kind: 'kurrentdb' } } as never, () => undefined), /only the embedded event store can be encrypted in place/);
});
