import { loadOrCreateSecret } from '../../src/infra/secret.js';
import { subjectKeysAt } from '../../src/services.js';
import { join } from 'node:path';
import { pino } from 'pino';
import t from 'tap';
import { projections, readSide } from '../../projections/index.js';
import { preparedInWorker, type PreparedFeed } from '../../src/kernel/feed/replay.js';
import { ProjectionRunner } from '../../src/kernel/feed/runner.js';
import { checkpointKey } from '../../src/kernel/feed/projection.js';
import { changePlan, createKey, openAccount, revokeKey } from '../../src/accounts/commands.js';
import { catalog } from '../../src/domain-events.js';
import type { EventStore, EventSubscription, StoredEvent } from '../../src/infra/event-store/port.js';
import type { CheckpointMove, ReadModelOp, ReadModelStore } from '../../src/infra/read-models/port.js';
import { openSqliteReadModels } from '../../src/infra/read-models/sqlite.js';
import type { Services } from '../../src/services.js';
import { buildApp } from '../../src/app.js';
import { owner, publishedWidget, tokenFor } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { silent, snapshotReadModels, tempDir, testServices } from '../support/services.js';

/** How the server's rebuild thread opens sealed personal content: the same secret and key store as its services. */
const sealedWith = (services: Services) => ({ secret: services.config.SECRET ?? loadOrCreateSecret(services.config.DATA_DIR), keys: subjectKeysAt(services.config, undefined) });

/** A history that touches every read model: accounts, keys, widgets, counted slots, responses, erasures. */
async function history(services: Services): Promise<void> {
  for (let i = 0; i < 12; i++) {
    const opened = await openAccount(services, { name: `Account ${i}`, plan: i % 2 ? 'pro' : 'free', scopes: ['forms:read'] });
    const second = await createKey(services, { accountId: opened.account_id, name: 'second', scopes: ['responses:read'] });
    if (i % 3 === 0) await revokeKey(services, second.key_id);
    if (i % 4 === 0) await changePlan(services, opened.account_id, 'business');
  }
  const app = await buildApp(services);
  const biz = await owner(services);
  for (const max of [null, 4]) {
    const widget = await publishedWidget(app, biz, { settings: { max_responses: max } });
    const token = await tokenFor(app, 'widgets', widget);
    const ids = [];
    for (let n = 0; n < 6; n++) {
      const reply = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 1 + (n % 5) }, _token: token } });
      if (reply.statusCode === 200) ids.push(reply.json().id);
    }
    await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: ids.slice(0, 2), widgetId: widget } });
  }
  await app.close();
}

/**
 * The port as a flaky transport would serve it: each batch of the live feed
 * arrives with the batch before it in front (a resubscription from an older
 * position), then once more on its own. Counts how often each position was
 * handed over.
 */
function redelivering(store: EventStore, deliveries: Map<bigint, number>): EventStore {
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'subscribe') return Reflect.get(target, property, receiver);
      return (options: Parameters<EventStore['subscribe']>[0]): EventSubscription => {
        const inner = target.subscribe(options);
        return {
          close: () => inner.close(),
          async *[Symbol.asyncIterator]() {
            let previous: StoredEvent[] = [];
            for await (const batch of inner) {
              for (const handed of [[...previous, ...batch], batch]) {
                for (const event of handed) deliveries.set(event.position, (deliveries.get(event.position) ?? 0) + 1);
                yield handed;
              }
              previous = batch;
            }
          },
        };
      };
    },
  });
}

/** Far above any expected wait: it only turns a runner that never gets there into a failure. */
const DEADLINE_MS = 60_000;

t.test('rebuild reproduces the read models exactly', async (t) => {
  const services = await testServices(t);
  await history(services);
  const before = await snapshotReadModels(services);
  t.ok((before.api_keys ?? []).length >= 24, 'the history reached the read models');
  t.same((before.widgets ?? []).map((w) => (w as { slots_taken: number }).slots_taken).sort(), [0, 4], 'slots were counted: 4 taken, the rest refused before taking one');
  t.equal((before.responses ?? []).length, 6, '10 responses, less the 4 erased');
  const replayed = await services.projections.rebuild();
  t.equal(replayed, (await services.events.readAll({ after: 0n, limit: 100_000 })).length, 'every stored event was replayed');
  t.same(await snapshotReadModels(services), before);
});

t.test('a feed that delivers every batch more than once yields the same read models', async (t) => {
  const services = await testServices(t);
  // The runner under test keeps its own read models and follows the feed live
  // from the start, so the whole history reaches it through the subscription.
  const readModels = openSqliteReadModels(tempDir(t));
  t.teardown(() => readModels.close());
  const deliveries = new Map<bigint, number>();
  const runner = new ProjectionRunner(redelivering(services.events, deliveries), readModels, catalog, projections, silent, { batchSize: 7 });
  await runner.init();
  runner.start();
  t.ok(await eventually(() => runner.caughtUp), 'the runner follows the feed live');
  await history(services);
  const head = await services.events.headPosition();
  t.ok(await runner.waitFor(head, DEADLINE_MS), 'the runner caught up');
  await runner.stop();
  const feed = await services.events.readAll({ after: 0n, limit: 100_000 });
  const redelivered = feed.filter((e) => (deliveries.get(e.position) ?? 0) > 1);
  t.ok(redelivered.length > 0, `${redelivered.length} events were handed to the runner more than once`);
  t.equal(redelivered.length, feed.length, 'every event of the history was');
  t.same(await snapshotReadModels({ readModels }), await snapshotReadModels(services), 'the read models equal those of a clean build: nothing counted twice, ranks in order');
});

t.test('two runners on one store (server and CLI) apply each event once', async (t) => {
  const services = await testServices(t);
  await history(services);
  const expected = await snapshotReadModels(services);
  await services.readModels.reset(projections.flatMap((p) => p.collections.map((c) => c.name)), projections.map(checkpointKey));
  // The CLI's runner sees the feed only up to where the server's runner is about to commit
  // (and the first event, which tells it the store is the one its read models came from)...
  let visibleUpTo = 1n;
  const capped = new Proxy(services.events, {
    get(target, property, receiver) {
      if (property !== 'readAll') return Reflect.get(target, property, receiver);
      return async (options: Parameters<EventStore['readAll']>[0]) => (await target.readAll(options)).filter((e) => e.position <= visibleUpTo);
    },
  });
  const cli = new ProjectionRunner(capped, services.readModels, catalog, projections, silent, { batchSize: 3 });
  // ...and gets there first, before every write of the server's runner: each of its batches is then applied twice unless the second write is refused.
  let raced = 0;
  const cliFirst = new Proxy(services.readModels, {
    get(target, property, receiver) {
      if (property !== 'write') return Reflect.get(target, property, receiver);
      return async (ops: ReadModelOp[], moves: CheckpointMove[] = []) => {
        visibleUpTo = moves.reduce((max, move) => (move.next > max ? move.next : max), visibleUpTo);
        if ((await cli.catchUp()) > 0) raced++;
        return target.write(ops, moves);
      };
    },
  });
  const server = new ProjectionRunner(services.events, cliFirst, catalog, projections, silent, { batchSize: 5 });
  // The CLI's starts first: its view hides the store's first event until then, and it would take the store for another one.
  await cli.init();
  await server.init();
  await server.catchUp();
  t.ok(raced > 0, `the CLI's runner applied ${raced} batches just before the server's runner wrote them`);
  t.equal(cli.position, await services.events.headPosition(), 'and reached the head');
  t.same(await snapshotReadModels(services), expected, 'the read models equal a clean build: nothing applied twice');
});

t.test('a store that takes at most N events per write gets no more: catching up, live and rebuilding', async (t) => {
  const services = await testServices(t);
  await history(services);
  const expected = await snapshotReadModels(services);
  const readModels = openSqliteReadModels(tempDir(t));
  t.teardown(() => readModels.close());
  const LIMIT = 4;
  const spans: Record<'live' | 'shadow', CheckpointMove[]> = { live: [], shadow: [] };
  /** The store, declaring the limit, and noting the checkpoint moves of every write. */
  const limited = <S extends ReadModelStore>(store: S, kind: 'live' | 'shadow'): S =>
    new Proxy(store, {
      get(target, property, receiver) {
        if (property === 'maxEventsPerWrite') return LIMIT;
        if (property === 'write') {
          return (ops: ReadModelOp[], moves: CheckpointMove[] = []) => {
            spans[kind].push(...moves);
            return target.write(ops, moves);
          };
        }
        if (property === 'shadow') return async (...args: Parameters<ReadModelStore['shadow']>) => limited(await target.shadow(...args), 'shadow');
        return Reflect.get(target, property, receiver);
      },
    });
  /** The most events a write carried: the feed positions one of its checkpoint moves spans. */
  const largest = async (kind: 'live' | 'shadow') => {
    const positions = (await services.events.readAll({ after: 0n, limit: 100_000 })).map((e) => e.position);
    const most = Math.max(0, ...spans[kind].map((move) => positions.filter((p) => p > move.expected && p <= move.next).length));
    spans[kind] = [];
    return most;
  };
  const asked: number[] = [];
  const feed = new Proxy(services.events, {
    get(target, property, receiver) {
      if (property !== 'subscribe') return Reflect.get(target, property, receiver);
      return (options: Parameters<EventStore['subscribe']>[0]) => {
        asked.push(options.batchSize);
        return target.subscribe(options);
      };
    },
  });
  const runner = new ProjectionRunner(feed, limited(readModels, 'live'), catalog, projections, silent, { batchSize: 100, catchUpBatchSize: 1000 });
  await runner.init();
  runner.start();
  t.ok(await runner.waitFor(await services.events.headPosition(), DEADLINE_MS), 'the runner caught up');
  t.equal(await largest('live'), LIMIT, `catching up, writes carried ${LIMIT} events at most`);
  t.same(await snapshotReadModels({ readModels }), expected, 'and the read models are complete');

  // Appended faster than one by one, so that the feed hands over more than the limit at once.
  await Promise.all(Array.from({ length: 40 }, (_, i) => openAccount(services, { name: `Burst ${i}`, plan: 'pro', scopes: ['forms:read'] })));
  t.ok(await runner.waitFor(await services.events.headPosition(), DEADLINE_MS), 'the runner followed the feed');
  await runner.stop();
  const live = await largest('live');
  t.ok(live > 0 && live <= LIMIT, `following the feed live, writes carried ${live} events at most`);
  t.ok(asked.length > 0 && asked.every((size) => size <= LIMIT), `the feed was asked for batches of ${asked.join(', ')}`);

  await runner.rebuild();
  t.equal(await largest('shadow'), LIMIT, `rebuilding, writes carried ${LIMIT} events at most`);
  t.same(await snapshotReadModels({ readModels }), await snapshotReadModels(services), 'and the rebuilt read models are complete');
});

t.test('a rebuild elsewhere rewinds a running runner instead of leaving a gap', async (t) => {
  const services = await testServices(t);
  await history(services);
  const expected = await snapshotReadModels(services);
  const live = new ProjectionRunner(services.events, services.readModels, catalog, projections, silent, { batchSize: 5 });
  await live.init();
  live.start();
  t.ok(await live.waitFor(await services.events.headPosition(), DEADLINE_MS), 'the live runner caught up');
  // Another process empties the read models and their checkpoints...
  await services.readModels.reset(projections.flatMap((p) => p.collections.map((c) => c.name)), projections.map(checkpointKey));
  // ...and new events arrive before it replays anything.
  const late = await openAccount(services, { name: 'Late', plan: 'pro', scopes: ['forms:read'] });
  const head = await services.events.headPosition();
  t.ok(await live.waitFor(head, DEADLINE_MS), 'the live runner reaches the head');
  await live.stop();
  const after = await snapshotReadModels(services);
  t.ok(after.accounts?.some((a) => (a as { id: string }).id === late.account_id), 'the new account is there');
  t.same({ ...after, accounts: after.accounts?.filter((a) => (a as { id: string }).id !== late.account_id), api_keys: after.api_keys?.filter((k) => (k as { account_id: string }).account_id !== late.account_id) }, expected, 'and everything before it, replayed');
});

/** The store as the rebuilding process reads it: `during` runs once, after the rebuild's second read of the feed. */
function readingWith(store: EventStore, during: () => Promise<void>): EventStore {
  let reads = 0;
  return new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'readAll') return Reflect.get(target, property, receiver);
      return async (options: Parameters<EventStore['readAll']>[0]) => {
        const page = await target.readAll(options);
        if (++reads === 2) await during();
        return page;
      };
    },
  });
}

const allCollections = projections.flatMap((p) => p.collections);

t.test('a rebuild beside a live runner: the live read models stay whole, and what is appended meanwhile is applied once', async (t) => {
  const services = await testServices(t);
  await history(services);
  const live = services.projections;
  live.start();
  t.teardown(() => live.stop());
  const before = await snapshotReadModels(services);
  let late: { account_id: string } | undefined;
  let during: Record<string, unknown[]> | undefined;
  const rebuilder = new ProjectionRunner(
    readingWith(services.events, async () => {
      during = await snapshotReadModels(services);
      // Applied by the live runner to the live read models, and read by the rebuild later on.
      late = await openAccount(services, { name: 'Late', plan: 'pro', scopes: ['forms:read'] });
      await changePlan(services, late.account_id, 'business');
    }),
    services.readModels,
    catalog,
    projections,
    silent,
    { catchUpBatchSize: 10 },
  );
  const replayed = await rebuilder.rebuild();
  t.same(during, before, 'halfway through the rebuild the live read models are all there');
  t.equal(replayed, (await services.events.readAll({ after: 0n, limit: 100_000 })).length, 'the shadows took every event, those appended meanwhile too');
  const after = await snapshotReadModels(services);
  t.match(after.accounts?.find((a) => (a as { id: string }).id === late!.account_id), { plan: 'business' }, 'what was appended during the rebuild is in the swapped-in read models');
  const next = await openAccount(services, { name: 'Next', plan: 'free', scopes: ['forms:read'] });
  t.ok(await live.waitFor(await services.events.headPosition(), 5000), 'the live runner goes on after the swap');
  t.ok((await services.readModels.get('accounts', next.account_id)) !== null);
  await live.stop();
  const settled = await snapshotReadModels(services);
  await services.projections.rebuild();
  t.same(settled, await snapshotReadModels(services), 'the same as a quiet rebuild: nothing applied twice, nothing missed');
});

t.test('a swap forced behind a live runner: it reads the feed again from the swapped-in checkpoints', async (t) => {
  const services = await testServices(t);
  await history(services);
  const live = services.projections;
  live.start();
  t.teardown(() => live.stop());
  t.ok(await live.waitFor(await services.events.headPosition(), 5000));
  const shadow = await services.readModels.shadow(allCollections, projections.map(checkpointKey));
  t.teardown(() => shadow.close());
  await new ProjectionRunner(services.events, shadow, catalog, projections, silent).catchUp();
  // The live runner applies these; the shadow never reads them.
  const late = await openAccount(services, { name: 'Late', plan: 'pro', scopes: ['forms:read'] });
  const app = await buildApp(services);
  t.teardown(() => app.close());
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz, { settings: { max_responses: 10 } });
  const token = await tokenFor(app, 'widgets', widget);
  for (let n = 0; n < 3; n++) await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 5 }, _token: token } });
  t.equal(await shadow.swap(), false, 'an unforced swap waits for the shadow to catch up');
  t.ok(await shadow.swap({ behind: true }));
  t.equal(await services.readModels.get('accounts', late.account_id), null, 'the swapped-in read models lack what the shadow never read');
  // The next event shows the live runner that its checkpoints moved back.
  const next = await openAccount(services, { name: 'Next', plan: 'free', scopes: ['forms:read'] });
  t.ok(await live.waitFor(await services.events.headPosition(), 5000));
  t.ok(await services.readModels.get('accounts', late.account_id), 'the live runner replayed what the shadow lacked');
  t.ok(await services.readModels.get('accounts', next.account_id));
  t.match(await services.readModels.get('widgets', widget), { slots_taken: 3 }, 'each slot counted once');
  await live.stop();
  const settled = await snapshotReadModels(services);
  await services.projections.rebuild();
  t.same(settled, await snapshotReadModels(services), 'the same as a quiet rebuild: nothing applied twice, nothing missed');
});

t.test('a rebuild that live writes keep outrunning swaps anyway after 20 tries, and loses nothing', async (t) => {
  const services = await testServices(t);
  await history(services);
  const live = services.projections;
  live.start();
  t.teardown(() => live.stop());
  let appended = 0;
  // Each time the rebuild has read everything, one more event arrives and the live runner applies it first.
  const outrunning = new Proxy(services.events, {
    get(target, property, receiver) {
      if (property !== 'readAll') return Reflect.get(target, property, receiver);
      return async (options: Parameters<EventStore['readAll']>[0]) => {
        const page = await target.readAll(options);
        if (page.length === 0 && appended < 25) await openAccount(services, { name: `Outrunning ${appended++}`, plan: 'free', scopes: ['forms:read'] });
        return page;
      };
    },
  });
  const warnings: string[] = [];
  const logger = pino({ level: 'warn' }, { write: (line: string) => void warnings.push(JSON.parse(line).msg) });
  await new ProjectionRunner(outrunning, services.readModels, catalog, projections, logger).rebuild();
  t.match(warnings, [/swapping anyway/], 'the forced swap is logged');
  t.ok(appended >= 20, `${appended} events outran the rebuild`);
  t.ok(await live.waitFor(await services.events.headPosition(), 5000));
  t.equal(await services.readModels.count('accounts', {}), (await services.events.readAll({ after: 0n, limit: 100_000 })).filter((e) => e.type === 'AccountOpened').length, 'every account is there');
  await live.stop();
  const settled = await snapshotReadModels(services);
  await services.projections.rebuild();
  t.same(settled, await snapshotReadModels(services), 'the same as a quiet rebuild');
});

t.test('waitFor answers false when the read models do not get there in time', async (t) => {
  const services = await testServices(t);
  t.equal(await services.projections.waitFor(10n ** 12n, 20), false);
});

t.test('a projection renamed for a new shape replays into collections emptied of the old one', async (t) => {
  const services = await testServices(t);
  await history(services);
  const expected = await snapshotReadModels(services);
  const renamed = projections.find((p) => p.collections.some((c) => c.name === 'responses'))!;
  // What an older version left: a document the history does not make, and no checkpoint under the new name.
  await services.readModels.write([{ op: 'put', collection: 'responses', doc: { id: 'rsp_from_an_older_shape', parent_id: 'wgt_gone', listing: 'wgt_gone' } }]);
  await services.readModels.reset([], [checkpointKey(renamed)]);
  const runner = new ProjectionRunner(services.events, services.readModels, catalog, projections, silent);
  await runner.init();
  await runner.catchUp();
  t.same(await snapshotReadModels(services), expected);
});

t.test('two runners starting on a fresh projection together lose nothing', async (t) => {
  const services = await testServices(t);
  await history(services);
  const expected = await snapshotReadModels(services);
  const names = projections.flatMap((p) => p.collections.map((c) => c.name));
  await services.readModels.reset(names, projections.map(checkpointKey));
  const first = new ProjectionRunner(services.events, services.readModels, catalog, projections, silent, { batchSize: 5 });
  await first.init();
  // The second runner has seen no checkpoints; the first applies everything before the second empties the fresh collections.
  const emptyingLate = new Proxy(services.readModels, {
    get(target, property, receiver) {
      if (property !== 'reset') return Reflect.get(target, property, receiver);
      return async (collections: string[], checkpoints: string[]) => {
        await first.catchUp();
        return target.reset(collections, checkpoints);
      };
    },
  });
  const second = new ProjectionRunner(services.events, emptyingLate, catalog, projections, silent, { batchSize: 5 });
  await second.init();
  await second.catchUp();
  await first.catchUp();
  t.same(await snapshotReadModels(services), expected);
});

t.test('the lag metric observes the live feed, not a catch-up of old events', async (t) => {
  const services = await testServices(t);
  await history(services);
  t.notMatch(services.metrics.render(), /feedback_projection_lag_ms/, 'catching up observed nothing');
  services.start();
  await openAccount(services, { name: 'Live', plan: 'free', scopes: ['forms:read'] });
  t.match(services.metrics.render(), /feedback_projection_lag_ms_count [1-9]/, 'a live event was observed');
});

/** Polls, votes and an erased vote on top of `history`, so the vote counters and their retraction are replayed too. */
async function withVotes(services: Services): Promise<void> {
  await history(services);
  const app = await buildApp(services);
  const biz = await owner(services);
  const poll = (await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Tea or coffee?', options: [{ text: 'Tea' }, { text: 'Coffee' }] } })).json();
  await app.inject({ method: 'PUT', url: `/api/polls/${poll.id}`, headers: biz.headers, payload: { published: true } });
  const token = await tokenFor(app, 'polls', poll.id);
  const votes: string[] = [];
  for (let i = 1; i <= 4; i++) {
    const vote = await app.inject({ method: 'POST', url: `/api/polls/${poll.id}/vote`, remoteAddress: `198.51.100.${i}`, payload: { option_ids: [poll.options[i % 2].id], _token: token, metadata: { fingerprint: `v${i}` } } });
    votes.push(vote.json().vote_id ?? vote.json().id);
  }
  const cast = (await services.events.readAll({ after: 0n, limit: 100_000 })).filter((e) => e.type === 'VoteCast');
  await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: [(cast[0]!.data as { vote_id: string }).vote_id], pollId: poll.id } });
  await app.close();
}

t.test('a rebuild prepared on a second thread reproduces the read models exactly', async (t) => {
  const dataDir = tempDir(t);
  const services = await testServices(t, { dataDir });
  await withVotes(services);
  const before = await snapshotReadModels(services);
  t.equal((before.vote_summaries ?? []).filter((c) => (c as { dim: string }).dim === 'option').reduce((n: number, c) => n + (c as { count: number }).count, 0), 3, 'four votes counted, one taken back');
  let batches = 0;
  const feed = preparedInWorker(dataDir, 50, readSide, sealedWith(services));
  const counted: PreparedFeed = (after) => ({
    async *[Symbol.asyncIterator]() {
      for await (const prepared of feed(after)) {
        if (prepared.kind === 'batch') batches++;
        yield prepared;
      }
    },
  });
  const rebuilder = new ProjectionRunner(services.events, services.readModels, catalog, projections, silent, { catchUpBatchSize: 50, prepared: counted, preparedFrom: 0 });
  const replayed = await rebuilder.rebuild();
  // Erasure leaves gaps in the positions: count what is stored.
  const stored = (await services.events.readAll({ after: 0n, limit: 100_000 })).length;
  t.equal(replayed, stored, 'every stored event was replayed');
  t.equal(batches, Math.ceil(stored / 50), 'all of them prepared by the other thread, 50 a batch');
  t.same(await snapshotReadModels(services), before);
  // The cost as a line: the events after the first batch at the margin's rate, the rest fixed.
  const cost = rebuilder.lastRebuild!;
  t.equal(cost.events, replayed, 'the cost counts the events replayed');
  t.ok(cost.marginEventsPerSecond > 0 && cost.fixedSeconds >= 0 && cost.fixedSeconds <= cost.seconds, 'a rate at the margin and a fixed cost within the whole');
  t.ok(Math.abs(cost.fixedSeconds + cost.events / cost.marginEventsPerSecond - cost.seconds) < 0.01 * cost.seconds + 0.001, 'fixed cost and events at the margin add up to the whole');
  t.ok(cost.droppedSeconds >= 0, 'dropping the replaced read models is timed apart');
  const Database = (await import('better-sqlite3')).default;
  const db = new Database(join(dataDir, 'feedback.db'), { readonly: true });
  t.teardown(() => db.close());
  t.same(db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 3) IN ('rs_', 'rr_')").pluck().all(), [], 'no shadow or replaced table is left once the rebuild returns');
});

t.test('a prepared rebuild writes its first positions here while the second thread starts after them', async (t) => {
  const dataDir = tempDir(t);
  const services = await testServices(t, { dataDir });
  await withVotes(services);
  const before = await snapshotReadModels(services);
  const starts: bigint[] = [];
  const feed = preparedInWorker(dataDir, 50, readSide, sealedWith(services));
  const watched: PreparedFeed = (after) => {
    starts.push(after);
    return feed(after);
  };
  const rebuilder = new ProjectionRunner(services.events, services.readModels, catalog, projections, silent, { catchUpBatchSize: 7, prepared: watched, preparedFrom: 0, preparedHeadStart: 30 });
  const replayed = await rebuilder.rebuild();
  t.same(starts, [30n], 'the second thread starts after the head start');
  t.equal(replayed, (await services.events.readAll({ after: 0n, limit: 100_000 })).length, 'every stored event was replayed once');
  t.same(await snapshotReadModels(services), before, 'the same read models');
  const history = await services.events.headPosition();
  const whole = new ProjectionRunner(services.events, services.readModels, catalog, projections, silent, { prepared: watched, preparedFrom: 0, preparedHeadStart: Number(history) + 10 });
  t.equal(await whole.rebuild(), replayed, 'a head start beyond the history: all of it written here');
  t.same(starts.at(-1), history, 'and the second thread starts at its end');
  t.same(await snapshotReadModels(services), before);
});

t.test('a rebuild prepared on a second thread halts before an unreadable event as one read here does, and keeps the live read models', async (t) => {
  const dataDir = tempDir(t);
  const services = await testServices(t, { dataDir });
  await history(services);
  const before = await snapshotReadModels(services);
  const { position } = await services.events.append('widget-wgt_future', [{ type: 'WidgetUpdated', data: { widget_id: 'wgt_future', changes: {}, updated_at: '2026-11-23T00:00:00.000Z' }, metadata: { schema_version: 99, occurred_at: '2026-11-23T00:00:00.000Z', actor: 'x' } }], 'any');
  const rebuilt = async (prepared: boolean, headStart = 0) => {
    const runner = new ProjectionRunner(services.events, services.readModels, catalog, projections, silent, { catchUpBatchSize: 10, ...(prepared ? { prepared: preparedInWorker(dataDir, 10, readSide, sealedWith(services)), preparedFrom: 0, preparedHeadStart: headStart } : {}) });
    const replayed = await runner.rebuild();
    return { replayed, halted: runner.halted };
  };
  const here = await rebuilt(false);
  const there = await rebuilt(true);
  t.match(there.halted, { cause: 'unreadable_event', position, streamId: 'widget-wgt_future', type: 'WidgetUpdated', reason: /version 99/ });
  t.same(there, here, 'the same halt, after the same events');
  t.same(await rebuilt(true, Number(position) + 5), here, 'the same halt met in the head start, written on this thread');
  t.equal(there.replayed, (await services.events.readAll({ after: 0n, limit: 100_000 })).filter((e) => e.position < position).length, 'everything before it replayed');
  t.same(await snapshotReadModels(services), before, 'the live read models stay');
});
