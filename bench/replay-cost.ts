/**
 * `npm run bench -- replay-cost`: what one webhook replay costs against the
 * replaying account's own history, beside a history of other accounts.
 * In one process on the embedded store: an account on Business with one
 * endpoint (subscribed to votes) replays from 29 days back, each time after
 * its own history has grown (BENCH_REPLAY_OWN, default 1,000, 10,000 and
 * 40,000 votes), once before and then after BENCH_REPLAY_FOREIGN (default
 * 100,000) votes of another account are appended. The figure is the
 * dispatcher's time to handle the replay request: read the account's
 * events, queue a delivery for each (nothing is sent: the dispatcher is not
 * started), and move its checkpoint. Also: the events the replay read, and
 * the longest the event loop was held meanwhile (mostly a write's commit).
 * The first replay also warms the code up: its figure is the least telling.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { pino } from 'pino';
import { openAccount } from '../src/accounts/commands.js';
import { loadConfig } from '../src/config.js';
import { catalog } from '../src/domain-events.js';
import { buildApp } from '../src/app.js';
import type { EventStore } from '../src/infra/event-store/port.js';
import { checkpointInBackground } from '../src/infra/sqlite.js';
import { openServices, type Services } from '../src/services.js';

const OWN = (process.env.BENCH_REPLAY_OWN ?? '1000,10000,40000').split(',').map(Number);
const FOREIGN = Number(process.env.BENCH_REPLAY_FOREIGN ?? 100_000);
const SECRET = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const DAY = 86_400_000;
const log = (line: string) => process.stderr.write(`${line}\n`);

interface Row {
  own: number;
  foreign: number;
  ms: number;
  read: number;
  maxBlockMs: number;
}

/** Appends `count` votes of the account on its poll, 500 to a stream, as the service stores votes. */
async function seedVotes(services: Services, accountId: string, poll: string, option: string, count: number, tag: string): Promise<void> {
  const meta = { occurred_at: new Date().toISOString(), actor: 'bench' };
  for (let done = 0, batch = 0; done < count; done += 500, batch++) {
    const votes = Array.from({ length: Math.min(500, count - done) }, (_, i) =>
      catalog.serialize({ type: 'VoteCast', data: { vote_id: `vot_${tag}_${batch}_${i}`, poll_id: poll, account_id: accountId, option_ids: [option], cast_at: meta.occurred_at } }, meta),
    );
    await services.events.append(`vote-${poll}-${tag}-${batch}`, votes, 'no_stream');
  }
}

export async function replayCostOnly(): Promise<void> {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  log(`machine: ${machine}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-replay-'));
  const services = await openServices(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SECRET, SEALS: 'off', WEBHOOK_ALLOW_PRIVATE: 'true' }), { logger: pino({ level: 'silent' }), projectionWaitMs: 0 });
  const app = await buildApp(services);
  // As a server does: the write-ahead log is copied into the file on a thread of its own, not by a commit.
  const checkpoints = checkpointInBackground(dataDir);
  try {
    const scopes = ['forms:read', 'forms:write', 'webhooks:read', 'webhooks:write'] as const;
    const replaying = await openAccount(services, { name: 'Replaying', plan: 'business', scopes: [...scopes] });
    const other = await openAccount(services, { name: 'Other', plan: 'business', scopes: ['forms:read', 'forms:write'] });
    const headers = (key: string) => ({ authorization: `Bearer ${key}` });
    const poll = async (key: string) => {
      const reply = await app.inject({ method: 'POST', url: '/api/polls', headers: headers(key), payload: { question: 'Bench?', options: [{ text: 'A' }, { text: 'B' }] } });
      if (reply.statusCode !== 201) throw new Error(reply.body);
      const created = reply.json() as { id: string; options: Array<{ id: string }> };
      return { id: created.id, option: created.options[0]!.id };
    };
    const mine = await poll(replaying.api_key);
    const theirs = await poll(other.api_key);
    const endpoint = (await app.inject({ method: 'POST', url: '/api/webhooks', headers: headers(replaying.api_key), payload: { url: 'http://127.0.0.1:9/hook', events: ['vote.cast'] } })).json().id as string;
    await services.projections.catchUp();

    // Every event the dispatcher reads, counted.
    const holder = services.webhooks as unknown as { events: EventStore };
    let read = 0;
    const store = holder.events;
    holder.events = Object.assign(Object.create(store) as EventStore, {
      readAccount: async (...args: Parameters<EventStore['readAccount']>) => {
        const page = await store.readAccount(...args);
        read += page.length;
        return page;
      },
      readAll: async (...args: Parameters<EventStore['readAll']>) => {
        const page = await store.readAll(...args);
        read += page.length;
        return page;
      },
    });

    const rows: Row[] = [];
    let own = 0;
    let foreign = 0;
    const measure = async () => {
      await services.webhooks.catchUp();
      const since = new Date(Date.now() - 29 * DAY).toISOString();
      const reply = await app.inject({ method: 'POST', url: `/api/webhooks/${endpoint}/replay`, headers: headers(replaying.api_key), payload: { since } });
      if (reply.statusCode !== 202) throw new Error(reply.body);
      read = 0;
      const delay = monitorEventLoopDelay({ resolution: 1 });
      delay.enable();
      const started = performance.now();
      await services.webhooks.catchUp();
      const ms = performance.now() - started;
      delay.disable();
      const row = { own, foreign, ms: Math.round(ms), read, maxBlockMs: Math.round(delay.max / 1e6) };
      log(`  own ${own}, others' ${foreign}: ${row.ms} ms, ${read} events read, event loop held ${row.maxBlockMs} ms at most`);
      rows.push(row);
    };
    const grow = async (to: number) => {
      log(`seeding: the account's own history to ${to} votes`);
      await seedVotes(services, replaying.account_id, mine.id, mine.option, to - own, `own${to}`);
      own = to;
    };
    await grow(OWN[0]!);
    await measure();
    log(`seeding: ${FOREIGN} votes of another account`);
    await seedVotes(services, other.account_id, theirs.id, theirs.option, FOREIGN, 'foreign');
    foreign = FOREIGN;
    await measure();
    for (const size of OWN.slice(1)) {
      await grow(size);
      await measure();
    }
    const table = rows.map((r) => `| ${r.own} | ${r.foreign} | ${r.ms} | ${(r.ms / Math.max(1, r.own)).toFixed(3)} | ${r.read} | ${r.maxBlockMs} |`);
    process.stdout.write(
      `\nmachine: ${machine}\n\n| own events | others' events | replay ms | ms per own event | events read | event loop held (max ms) |\n| ---: | ---: | ---: | ---: | ---: | ---: |\n${table.join('\n')}\n\n`,
    );
    process.stdout.write(`${JSON.stringify({ machine, date: new Date().toISOString(), rows })}\n`);
  } finally {
    await checkpoints.stop();
    await app.close();
    await services.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
