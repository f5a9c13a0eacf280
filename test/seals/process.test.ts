import t from 'tap';
import { catalog } from '../../src/domain-events.js';
import type { EventStore } from '../../src/infra/event-store/port.js';
import { parseLines, SEAL_STREAM } from '../../src/seals/chain.js';
import { SealingProcess } from '../../src/seals/process.js';
import { verifyHistory } from '../../src/seals/verify.js';
import { manualClock, owner, publishedWidget, testApp } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { silent } from '../support/services.js';
import { BY_HAND, live, submit } from './support.js';

const sealer = (events: EventStore) => new SealingProcess(events, catalog, () => new Date(), silent, BY_HAND);

/** Every seal's range, in order. */
async function ranges(events: EventStore): Promise<Array<{ seal: number; from: string; through: string; count: number }>> {
  return (await events.readStream(SEAL_STREAM)).map(({ data }) => ({ seal: data.seal as number, from: data.from as string, through: data.through as string, count: data.count as number }));
}

t.test('a sealer that died right after its append: the next one goes on after that seal, nothing sealed twice or skipped', async (t) => {
  const { app, who, services } = await live(t);
  const widget = await publishedWidget(app, who);
  await submit(app, widget);
  // The append lands, then the process is gone before it can do anything more.
  const dying: EventStore = Object.create(services.events, {
    append: { value: async (...args: Parameters<EventStore['append']>) => {
      await services.events.append(...args);
      throw new Error('killed');
    } },
  });
  await t.rejects(sealer(dying).sealAll(), /killed/);
  t.equal((await ranges(services.events)).length, 1, 'the seal was stored');

  await submit(app, widget);
  const restarted = sealer(services.events);
  t.equal(await restarted.sealAll(), 1);
  const [first, second] = await ranges(services.events);
  t.equal(second!.from, first!.through, 'the second seal starts where the first ended');
  t.equal(second!.seal, 1);
  const verified = await verifyHistory(services.events);
  t.equal(verified.firstBreak, undefined);
  t.equal(verified.seals, 2);
});

t.test('events that come while the sealer waits join the same seal, each once and in feed order, beyond a slice of lines', async (t) => {
  const { services } = await live(t);
  const append = (n: number) =>
    Promise.all(
      Array.from({ length: n }, () =>
        services.events.append(`note-${Math.random().toString(36).slice(2)}`, [catalog.serialize({ type: 'AccountOpened', data: { account_id: `acc_${Math.random().toString(36).slice(2)}`, name: 'n', plan: 'free', opened_at: new Date().toISOString() } }, { occurred_at: new Date().toISOString(), actor: 'test' })], 'no_stream'),
      ),
    );
  const clock = { now: Date.now() };
  const sealing = new SealingProcess(services.events, catalog, () => new Date(clock.now), silent, { everyEvents: 400, everyMs: 60_000, pollMs: 5 });
  t.teardown(() => sealing.stop());
  const before = await services.events.headPosition();
  sealing.start();
  // Three rounds the sealer sees while it waits for 400 events or a minute.
  for (const n of [150, 90, 130]) {
    await append(n);
    await new Promise((resolve) => setTimeout(resolve, 60));
  }
  t.same(await ranges(services.events), [], 'still waiting: fewer than N and not yet T');
  clock.now += 60_000;
  t.ok(await eventually(async () => (await ranges(services.events)).length === 1));
  const [seal] = await services.events.readStream(SEAL_STREAM);
  const positions = parseLines(seal!.data.events as string, 2).map((line) => line.position);
  const head = await services.events.headPosition();
  t.equal(positions.length, Number(head - 1n), 'every event before the seal, once');
  t.same(positions, Array.from({ length: positions.length }, (_, i) => BigInt(i + 1)), 'in feed order, none missing or twice');
  t.ok(before < 10n && positions.length >= 370, 'more lines than one slice, read over several polls');
  t.equal((await verifyHistory(services.events)).firstBreak, undefined);
});

t.test('a response erased while the sealer waits is not in the seal, as it would not be in a seal read afresh', async (t) => {
  // The sealer tested is another process's (the service's own seals before it erases): the erasure here does not seal first.
  const { app, who, services } = await live(t, undefined, { SEALS: 'off' });
  const widget = await publishedWidget(app, who);
  const clock = { now: Date.now() };
  const sealing = new SealingProcess(services.events, catalog, () => new Date(clock.now), silent, { everyEvents: 1000, everyMs: 60_000, pollMs: 5 });
  t.teardown(() => sealing.stop());
  const kept = await submit(app, widget);
  const erased = await submit(app, widget);
  const stored = async (id: string) => (await services.events.readAll({ after: 0n, limit: 1000 })).find((e) => e.type === 'ResponseSubmitted' && (e.data as { response_id: string }).response_id === id)!;
  const erasedAt = (await stored(erased.id)).position;
  sealing.start();
  // Long enough for the sealer to have worked out a line for every event so far, while it waits for T.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const gone = await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widget, ids: [erased.id] } });
  t.equal(gone.statusCode, 200, gone.body);
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await new Promise((resolve) => setTimeout(resolve, 100));
  clock.now += 60_000;
  t.ok(await eventually(async () => (await ranges(services.events)).length === 1));
  const [seal] = await services.events.readStream(SEAL_STREAM);
  const positions = parseLines(seal!.data.events as string, 2).map((line) => line.position);
  t.notOk(positions.includes(erasedAt), 'no line for the response erased before the seal');
  t.ok(positions.includes((await stored(kept.id)).position), 'the response kept has its line');
  t.same(positions, [...positions].sort((a, b) => (a < b ? -1 : 1)), 'in feed order');
  t.equal((await verifyHistory(services.events)).firstBreak, undefined);
});

t.test('an erasure recorded several slices after the last seal is sealed over once, the events before it read once', async (t) => {
  const { app, who, services } = await live(t, undefined, { SEALS: 'off' });
  const widget = await publishedWidget(app, who);
  // More events than one slice of the sealer's reading before the erasure's record.
  for (let i = 0; i < 3; i++) await Promise.all(Array.from({ length: 100 }, () => submit(app, widget)));
  const erased = await submit(app, widget);
  const gone = await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widget, ids: [erased.id] } });
  t.equal(gone.statusCode, 200, gone.body);
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  const head = await services.events.headPosition();
  const sealing = new SealingProcess(services.events, catalog, () => new Date(), silent, { everyEvents: 1000, everyMs: 3_600_000 });
  t.equal(await sealing.sealAll(), 1, 'one seal, not a read started afresh at each slice');
  const [seal] = await ranges(services.events);
  t.equal(seal!.through, String(head), 'through the erasure record');
  t.equal((await verifyHistory(services.events)).firstBreak, undefined);
});

t.test('two sealers at once (a projector that lost its lease and does not know yet): one seal per range', async (t) => {
  const { app, who, services } = await live(t);
  const widget = await publishedWidget(app, who);
  const [a, b] = [sealer(services.events), sealer(services.events)];
  t.equal(await a.sealAll(), 1);
  t.equal(await b.sealAll(), 0, 'b now knows the chain up to a’s seal');
  await submit(app, widget);
  t.equal(await a.sealAll(), 1);
  // b still believes the chain ends at the first seal: its append is refused and it reads the chain again.
  t.equal(await b.sealAll(), 0);
  await submit(app, widget);
  t.equal(await b.sealAll(), 1);
  const all = await ranges(services.events);
  t.same(all.map((r) => r.seal), [0, 1, 2]);
  for (let i = 1; i < all.length; i++) t.equal(all[i]!.from, all[i - 1]!.through);
  t.equal((await verifyHistory(services.events)).firstBreak, undefined);
});

t.test('the server seals every N events under the projector lease', async (t) => {
  const { app, services } = await testApp(t, { env: { SEALS: 'on' }, sealing: { everyEvents: 5, everyMs: 3_600_000, pollMs: 10 } });
  const who = await owner(services);
  const widget = await publishedWidget(app, who);
  for (let i = 0; i < 4; i++) await submit(app, widget);
  t.ok(await eventually(async () => (await ranges(services.events)).length >= 1));
  const [first] = await ranges(services.events);
  t.equal(first!.count, 5, 'a full seal of N events');
  t.equal((await verifyHistory(services.events)).firstBreak, undefined);
});

t.test('SEALS=off: the projector seals nothing by itself', async (t) => {
  const { app, services } = await testApp(t, { env: { SEALS: 'off' }, sealing: { everyEvents: 2, everyMs: 3_600_000, pollMs: 10 } });
  const widget = await publishedWidget(app, await owner(services));
  await submit(app, widget);
  // The same wait as a seal of every 5 events took above, many times over.
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.same(await ranges(services.events), []);
  t.ok((await services.seals.sealAll()) >= 1, 'admin seal still seals');
});

t.test('fewer than N events are sealed once T has passed since the last seal, and seals alone are not sealed again', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock, env: { SEALS: 'on' }, sealing: { everyEvents: 1000, everyMs: 10_000, pollMs: 10 } });
  const who = await owner(services);
  await publishedWidget(app, who);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.same(await ranges(services.events), [], 'not before T');
  clock.advance(10_000);
  t.ok(await eventually(async () => (await ranges(services.events)).length === 1));
  clock.advance(60_000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal((await ranges(services.events)).length, 1, 'a history holding only the last seal since is left for the next seal');
});
