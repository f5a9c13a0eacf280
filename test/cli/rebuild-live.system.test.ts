/**
 * `admin rebuild` beside a running server: every read while it runs answers
 * as before, and the read models come out the same.
 *
 * To count reads that really happened during the rebuild without timing
 * anything, the test looks into the data file only to learn whether a
 * rebuild is under way (its shadow has an owner) and how far it got, and it
 * freezes the CLI there (SIGSTOP, never while it holds the write lock) to
 * read while the rebuild is certainly half done. The answers themselves are
 * judged through HTTP only.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { createKey } from '../../src/accounts/commands.js';
import { loadConfig } from '../../src/config.js';
import { catalog } from '../../src/domain-events.js';
import { buildApp } from '../../src/app.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { openServices, type Services } from '../../src/services.js';
import { ALL_SCOPES, owner, publishedWidget } from '../support/app.js';
import { json, startAdmin, startServer } from '../support/processes.js';
import { silent, snapshotReadModels, tempDir } from '../support/services.js';

/** Enough history that the replay takes many batches. */
const SEEDED = 40_000;
/** Keys to take turns with: requests of several keys of one account are counted together. */
const KEYS = 3;
/**
 * At least this long between read rounds: a round makes three requests with
 * the account's keys, and the account's plan takes 1000 a minute in all
 * (900 at this pace), so no answer is a refusal for the rate.
 */
const ROUND_EVERY_MS = 200;
/** Times the rebuild is frozen half way, and the read rounds made each time. */
const PAUSES = 3;
const ROUNDS_PER_PAUSE = 15;

const METADATA = { browser: 'Chrome', browser_version: '126.0', device: 'Desktop' as const, os: 'Linux', ip_hash: 'a'.repeat(64), language: 'en', completion_time_ms: 4200, page_url: 'https://shop.example/', page_title: 'Shop' };

/** Responses appended straight into the event store, as a long-lived widget collects them. */
async function seedResponses(services: Services, accountId: string, widget: string, count: number): Promise<void> {
  const meta = { occurred_at: new Date(1_790_000_000_000).toISOString(), actor: 'test' };
  for (let done = 0; done < count; done += 2000) {
    await Promise.all(
      Array.from({ length: Math.min(2000, count - done) }, (_, i) => {
        const n = done + i;
        const data = { response_id: `rsp_seed${String(n).padStart(9, '0')}`, account_id: accountId, widget_id: widget, answers: { rating: 1 + (n % 5) }, metadata: METADATA, submitted_at: new Date(1_790_000_000_000 + n).toISOString() };
        return services.events.append(`response-seed${n}`, [catalog.serialize({ type: 'ResponseSubmitted', data }, meta)], 'no_stream');
      }),
    );
  }
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('admin rebuild beside a live server: no wrong answer while it runs, the same read models after', async (t) => {
  const dir = tempDir(t);
  const given = await (async () => {
    const services = await openServices(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' }), { logger: silent });
    try {
      const app = await buildApp(services);
      const who = await owner(services);
      const keys = [who.key];
      for (let i = 1; i < KEYS; i++) keys.push((await createKey(services, { accountId: who.accountId, name: `reader ${i}`, scopes: ALL_SCOPES })).api_key);
      const busy = await publishedWidget(app, who, { title: 'Busy' });
      const quiet = await publishedWidget(app, who, { title: 'Quiet' });
      await seedResponses(services, who.accountId, busy, SEEDED);
      await services.projections.catchUp();
      const before = await snapshotReadModels(services);
      await app.close();
      return { keys, busy, quiet, before };
    } finally {
      await services.close();
    }
  })();
  t.equal(given.before.responses?.length, SEEDED, 'the history reached the read models');

  const server = await startServer({ DATA_DIR: dir, TRUST_PROXY: 'true' });
  let stopped = false;
  t.teardown(async () => {
    if (!stopped) await server.stop();
  });

  const wrong: string[] = [];
  const check = async (what: string, path: string, headers: Record<string, string>, ok: (body: any) => boolean) => {
    const reply = await fetch(`${server.url}${path}`, { headers });
    const body = await reply.json().catch(() => undefined);
    if (reply.status !== 200 || !ok(body)) wrong.push(`${what}: ${reply.status} ${JSON.stringify(body).slice(0, 200)}`);
  };
  /** One read round: a key's list, widget and responses, and a visitor's widget (each from its own address). */
  let nextRound = 0;
  const round = async (n: number) => {
    await pause(Math.max(0, nextRound - Date.now()));
    nextRound = Date.now() + ROUND_EVERY_MS;
    const keyed = { authorization: `Bearer ${given.keys[n % KEYS]}`, 'x-forwarded-for': `10.1.${(n >> 8) & 255}.${n & 255}` };
    const visitor = { 'x-forwarded-for': `10.2.${(n >> 8) & 255}.${n & 255}` };
    await Promise.all([
      check('list', '/api/widgets', keyed, (b) => [given.busy, given.quiet].every((id) => b.widgets.some((w: { id: string }) => w.id === id))),
      check('own widget', `/api/widgets/${given.busy}`, keyed, (b) => b.id === given.busy),
      check('responses', `/api/widgets/${given.busy}/responses?limit=5`, keyed, (b) => b.responses.length === 5 && b.pagination.total === SEEDED),
      check('public widget', `/api/widgets/${given.quiet}`, visitor, (b) => b.id === given.quiet),
    ]);
  };

  const file = new Database(join(dir, DATABASE_FILE));
  t.teardown(() => file.close());
  file.pragma('busy_timeout = 0');
  const exists = (table: string) => file.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
  /** How far the shadows got while a rebuild is under way, else null. */
  const rebuilding = (): bigint | null => {
    if (!exists('rebuild_shadow') || file.prepare('SELECT 1 FROM rebuild_shadow').get() === undefined) return null;
    return BigInt((file.prepare('SELECT max(position) FROM shadow_checkpoints').pluck().get() as number | null) ?? 0);
  };
  const lockFree = () => {
    try {
      file.exec('BEGIN IMMEDIATE');
      file.exec('ROLLBACK');
      return true;
    } catch {
      return false;
    }
  };

  const rebuild = startAdmin(['rebuild'], { DATA_DIR: dir });
  const pid = rebuild.child.pid!;
  const stoppedState = () => /^\d+ \(.*\) T/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  let exited = false;
  void rebuild.finished.then(() => (exited = true));
  /** Freezes the CLI where it is, unless it holds the write lock there (then it runs on a little and is asked again). */
  const freeze = async (): Promise<boolean> => {
    for (;;) {
      if (exited) return false;
      rebuild.child.kill('SIGSTOP');
      while (!stoppedState()) await pause(1);
      if (lockFree()) return true;
      rebuild.child.kill('SIGCONT');
      await pause(2);
    }
  };

  let rounds = 0;
  let during = 0;
  let pauses = 0;
  let lastPaused = -1n;
  let wrote = false;
  let written: string | undefined;
  while (!exited) {
    const first = rebuilding();
    await round(rounds++);
    const last = rebuilding();
    if (first !== null && last !== null) during++;
    if (last === null || last <= lastPaused || pauses >= PAUSES) continue;
    if (!(await freeze())) break;
    const at = rebuilding();
    if (at !== null) {
      pauses++;
      lastPaused = at;
      for (let i = 0; i < ROUNDS_PER_PAUSE; i++, during++) await round(rounds++);
      if (!wrote) {
        wrote = true;
        // A write while the rebuild is half done: the live read models take it now, the shadows later.
        const headers = { authorization: `Bearer ${given.keys[0]}`, 'content-type': 'application/json' };
        const created = await fetch(`${server.url}/api/widgets`, { method: 'POST', headers, body: JSON.stringify({ widget_type: 'feedback', title: 'Made during the rebuild' }) });
        t.equal(created.status, 201, 'a widget is created during the rebuild');
        written = ((await created.json()) as { id: string }).id;
        const published = await fetch(`${server.url}/api/widgets/${written}`, { method: 'PUT', headers, body: JSON.stringify({ published: true }) });
        t.equal(published.status, 200, 'and published');
        const read = await fetch(`${server.url}/api/widgets/${written}`);
        t.equal(read.status, 200, 'and readable at once');
      }
    }
    rebuild.child.kill('SIGCONT');
  }
  const run = await rebuild.finished;
  for (let i = 0; i < 5; i++) await round(rounds++);

  t.equal(run.code, 0, run.stderr);
  t.same(wrong, [], `no wrong answer in ${rounds} read rounds`);
  t.ok(pauses >= 1, `the rebuild was caught half way ${pauses} times`);
  t.ok(during >= ROUNDS_PER_PAUSE, `${during} read rounds happened while the rebuild was under way`);
  t.ok(written, 'a write was made during the rebuild');
  const read = await fetch(`${server.url}/api/widgets/${written}`);
  t.equal(read.status, 200, 'the write made during the rebuild is readable after it');
  t.match(await read.json(), { id: written, title: 'Made during the rebuild' });

  await server.stop();
  stopped = true;
  const services = await openServices(loadConfig({ DATA_DIR: dir, LOG_LEVEL: 'silent' }), { logger: silent });
  t.teardown(() => services.close());
  const events = (await services.events.readAll({ after: 0n, limit: 1_000_000 })).length;
  t.match(json(run), { rebuilt: true, events, seconds: Number }, 'the CLI reports every event replayed');
  const after = await snapshotReadModels(services);
  const made = after.widgets?.find((w) => (w as { id: string }).id === written);
  t.match(made, { published: true }, 'the write is in the rebuilt read models');
  const others = (docs: unknown[] | undefined) => docs?.filter((w) => (w as { id: string }).id !== written);
  t.same({ ...after, widgets: others(after.widgets), widget_summaries: others(after.widget_summaries) }, given.before, 'and everything else is as it was');
});
