import { join } from 'node:path';
import { Writable } from 'node:stream';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { judgeStore } from '../../src/kernel/feed/store-identity.js';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/config.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { createLogger, openServices } from '../../src/services.js';
import { eventually } from '../support/eventually.js';
import { admin, json } from '../support/processes.js';
import { METRICS_TOKEN, metricsHeaders, tempDir } from '../support/services.js';

const first = { id: 'e-1', position: 1n };

t.test('the verdict: go on, bind, or stop and say why', async (t) => {
  t.same(judgeStore({ bound: null, first: null, end: 0n, checkpoint: 0n }), { go: true, bind: null }, 'an empty store, nothing built: nothing to bind yet');
  t.same(judgeStore({ bound: null, first, end: 9n, checkpoint: 9n }), { go: true, bind: first }, 'not bound yet (a first start, or read models of an earlier version): bound now');
  t.same(judgeStore({ bound: first, first, end: 9n, checkpoint: 4n }), { go: true, bind: null }, 'the store they were built from');
  t.match(judgeStore({ bound: first, first, end: 4n, checkpoint: 9n }), { go: false, reason: /up to position 9, past the end of this event store \(4\)/ }, 'the same first event, but shorter: restored from an older backup');
  t.match(judgeStore({ bound: null, first, end: 4n, checkpoint: 9n }), { go: false, reason: /past the end/ }, 'past the end, bound or not');
  t.match(judgeStore({ bound: first, first: { id: 'e-other', position: 1n }, end: 99n, checkpoint: 9n }), { go: false, reason: /first event is e-1, and this one's is e-other/ }, 'another first event');
  t.match(judgeStore({ bound: first, first: null, end: 0n, checkpoint: 0n }), { go: false, reason: /this one is empty/ }, 'a wiped store');
});

/** The server's services and HTTP API over the directory, with its log lines; closed by the caller (a restart is a new one). */
async function start(dir: string) {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  const logger = createLogger({ LOG_LEVEL: 'warn' }, sink);
  const services = await openServices(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'warn', METRICS_TOKEN }), { logger });
  services.start();
  const app = await buildApp(services);
  const readyz = async () => {
    const reply = await app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders });
    return { status: reply.statusCode, body: reply.json() };
  };
  const logged = () => lines.map((line) => JSON.parse(line) as { level: number; msg: string });
  return { services, app, readyz, logged, close: async () => (await app.close(), await services.close()) };
}

const env = (dir: string) => ({ DATA_DIR: dir });

/** Runs the server until its projections and its erasure process have followed the whole feed. */
async function serve(dir: string) {
  const server = await start(dir);
  try {
    const head = await server.services.events.headPosition();
    await eventually(async () => (await server.readyz()).status === 200 && server.services.erasure.position >= head);
  } finally {
    await server.close();
  }
}
const accounts = async (dir: string, n: number) => {
  for (let i = 0; i < n; i++) json(await admin(['create-account', '--name', `Account ${i}`, '--plan', 'business'], env(dir)));
};

/** Rewrites the event store in the data directory, as an operator's restore or swap would. */
function onEvents(dir: string, sql: string): void {
  const db = new Database(join(dir, DATABASE_FILE));
  try {
    db.exec(sql);
  } finally {
    db.close();
  }
}

async function haltedUntilRebuild(t: Test, dir: string, reason: RegExp) {
  const server = await start(dir);
  try {
    const ready = await server.readyz();
    t.equal(ready.status, 503, 'not ready');
    t.match(ready.body, {
      code: 'not_ready',
      message: /^The projections halted: .*`admin rebuild` rebuilds the read models from this event store$/,
      projections: { halted: { cause: 'event_store_changed', position: null, stream: null, type: null, reason } },
    }, 'readiness says why, and what to do');
    t.equal((await server.readyz()).status, 503, 'and stays so');
    const halts = server.logged().filter((line) => line.level === 50 && /^projections halted: /.test(line.msg));
    t.equal(halts.length, 1, 'the halt is logged once');
    t.match(halts[0]!.msg, reason);
    t.equal(await server.services.projections.waitFor(server.services.projections.position + 1n, 2 ** 31 - 1), false, 'a command does not wait for read models that will not move');
  } finally {
    await server.close();
  }

  const status = json(await admin(['status'], env(dir)));
  t.match(status, { halted: { cause: 'event_store_changed', reason } }, 'admin status says so too');
  t.match(json(await admin(['rebuild'], env(dir))), { rebuilt: true });
  const after = json(await admin(['status'], env(dir)));
  t.equal(after.halted, null, 'the rebuild bound the read models to this store');
  t.ok(after.projections.every((p: { checkpoint: string }) => p.checkpoint === after.head), 'and built them from its whole feed');

  const restarted = await start(dir);
  try {
    t.ok(await eventually(async () => (await restarted.readyz()).status === 200), 'ready once started again');
    t.equal(restarted.services.erasure.halted, undefined, 'the erasure process goes on too');
  } finally {
    await restarted.close();
  }
}

t.test('an event store restored from an older backup: read models past its end halt until admin rebuild', async (t) => {
  const dir = tempDir(t);
  await accounts(dir, 1);
  const backup = json(await admin(['status'], env(dir))).head;
  await accounts(dir, 2);
  await serve(dir);
  t.equal(json(await admin(['status'], env(dir))).head, '6', 'the read models hold six events');
  // The events as they were at the backup; the read models as they are.
  onEvents(dir, `DELETE FROM events WHERE position > ${backup}; UPDATE sqlite_sequence SET seq = ${backup} WHERE name = 'events'`);
  await haltedUntilRebuild(t, dir, /up to position 6, past the end of this event store \(2\)/);
  t.equal((await admin(['events'], env(dir))).stdout.trim().split('\n').length, 2, 'the store is the backup');
});

t.test('another event store, longer than the one the read models came from: its first event tells them apart', async (t) => {
  const dir = tempDir(t);
  await accounts(dir, 1);
  await serve(dir);
  t.equal(json(await admin(['status'], env(dir))).head, '2');
  onEvents(dir, 'DROP TABLE events; DROP TABLE deleted_streams');
  await accounts(dir, 3);
  t.equal(json(await admin(['status'], env(dir))).head, '6', 'the new store is further along than the read models');
  await haltedUntilRebuild(t, dir, /built from an event store whose first event is [0-9a-f-]{36}, and this one's is [0-9a-f-]{36}/);
});
