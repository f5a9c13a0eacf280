import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Test } from 'tap';
import { loadConfig } from '../../src/config.js';
import { buildApp, type App } from '../../src/app.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { openServices, type Services } from '../../src/services.js';
import { sealedOf } from '../../src/kernel/personal.js';
import { owner, publishedWidget, tokenFor, type Owner } from '../support/app.js';
import { silent, tempDir } from '../support/services.js';

/** Sealing only when asked (admin seal, sealAll): the tests decide where seals fall. */
export const BY_HAND = { everyEvents: 1_000_000, everyMs: 3_600_000 };

export interface Live {
  dir: string;
  app: App;
  services: Services;
  who: Owner;
  close(): Promise<void>;
}

/**
 * A running service on a fresh embedded store; closed when the test ends
 * unless closed before. With `SEALS: 'off'` in `env`, an erasure does not
 * seal what is not sealed yet before it deletes (as a server with sealing on
 * does), so an erased event can leave a position no seal line names.
 */
export async function live(t: Test, dir = tempDir(t), env: Record<string, string> = {}): Promise<Live> {
  const services = await openServices(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent', ...env }), { logger: silent, sealing: BY_HAND });
  await services.start();
  const app = await buildApp(services);
  let closed = false;
  const close = async () => {
    if (closed) return;
    closed = true;
    await app.close();
    await services.close();
  };
  t.teardown(close);
  servicesOf.set(app, services);
  return { dir, app, services, who: await owner(services), close };
}

const servicesOf = new WeakMap<App, Services>();

/** The sealed text a response's stored event holds (and its read-model document, which keeps the same envelope), if it was sealed. */
async function sealedText(services: Services, id: string): Promise<string | undefined> {
  const store = services.events as Services['events'] & { inner?: Services['events'] };
  const stored = await (store.inner ?? store).readStream(`response-${id}`);
  const sealed = sealedOf(stored.find((event) => event.type === 'ResponseSubmitted')?.data);
  return sealed?.box;
}

/**
 * Submits a response carrying a marker nothing else holds; answers its id and
 * the marker. What a visitor sent is stored sealed: the marker is then the
 * sealed text of the response's stored event, which only its stored event and
 * its read-model document hold, as the answer it seals does not appear.
 */
export async function submit(app: App, widgetId: string): Promise<{ id: string; marker: string; answer: string }> {
  const answer = `marker-${randomBytes(8).toString('hex')}`;
  const reply = await app.inject({
    method: 'POST',
    url: `/api/widgets/${widgetId}/submit`,
    headers: { 'x-forwarded-for': `10.0.${randomBytes(1)[0]}.${randomBytes(1)[0]}` },
    payload: { answers: { rating: 4, comment: answer }, _token: await tokenFor(app, 'widgets', widgetId) },
  });
  if (reply.statusCode !== 200) throw new Error(`not submitted: ${reply.body}`);
  const id = reply.json().id as string;
  const services = servicesOf.get(app);
  const marker = (services && (await sealedText(services, id))) ?? answer;
  return { id, marker, answer };
}

/** Two widgets with responses, sealed in two seals, and one more response left unsealed. */
export async function sealedHistory(t: Test) {
  const service = await live(t);
  const first = await publishedWidget(service.app, service.who);
  const responses = [await submit(service.app, first), await submit(service.app, first)];
  await service.services.seals.sealAll();
  const second = await publishedWidget(service.app, service.who);
  responses.push(await submit(service.app, second), await submit(service.app, second));
  await service.services.seals.sealAll();
  responses.push(await submit(service.app, first));
  return { ...service, widgets: [first, second], responses };
}

export interface Row {
  position: number;
  stream_id: string;
  type: string;
  data: string;
}

/** The store's file, opened as anyone with access to the disk could. */
export function openFile(dir: string): Database.Database {
  return new Database(join(dir, DATABASE_FILE));
}

export function rows(dir: string): Row[] {
  const db = openFile(dir);
  try {
    return db.prepare('SELECT position, stream_id, type, data FROM events ORDER BY position').all() as Row[];
  } finally {
    db.close();
  }
}
