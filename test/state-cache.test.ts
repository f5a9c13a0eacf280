import fc from './support/properties.js';
import t from 'tap';
import { execute, load, type CommandContext } from '../src/kernel/aggregate.js';
import { catalog } from '../src/domain-events.js';
import { openSqliteEventStore } from '../src/infra/event-store/sqlite.js';
import type { EventStore, ReadStreamOptions } from '../src/infra/event-store/port.js';
import { StateCache, stateBytes } from '../src/kernel/state-cache.js';
import { widget, type WidgetState } from '../src/widgets/widget.js';
import { tempDir, testServices } from './support/services.js';

/** A state whose JSON is `bytes` long. */
const weighing = (bytes: number) => ({ text: 'x'.repeat(bytes - '{"text":""}'.length) });

t.test('past its budget the cache forgets the least recently used states', async (t) => {
  const cache = new StateCache(3 * stateBytes(weighing(100)));
  cache.set('a', 0n, weighing(100));
  cache.set('b', 0n, weighing(100));
  cache.set('c', 0n, weighing(100));
  t.equal(cache.bytes, 300);
  t.ok(cache.get('a'), 'a hit makes a the most recently used');
  cache.set('d', 0n, weighing(100));
  t.equal(cache.get('b'), undefined, 'b, the least recently used, went');
  t.same([cache.get('a')?.revision, cache.get('c')?.revision, cache.get('d')?.revision], [0n, 0n, 0n], 'the others stay');
  t.equal(cache.bytes, 300);

  cache.set('e', 0n, weighing(250));
  t.same([cache.get('a'), cache.get('c'), cache.get('d')], [undefined, undefined, undefined], 'a heavy state makes room for itself');
  t.equal(cache.bytes, 250);

  cache.set('f', 0n, weighing(301));
  t.equal(cache.get('f'), undefined, 'a state heavier than the whole budget is not kept');
  t.ok(cache.get('e'), 'and evicts nothing');

  cache.set('e', 1n, weighing(50));
  t.equal(cache.bytes, 50, 'a newer state of a stream replaces its weight');
});

t.test('a state older than the one held does not replace it', async (t) => {
  const cache = new StateCache(1000);
  cache.set('w', 5n, { v: 5 });
  cache.set('w', 3n, { v: 3 });
  t.same(cache.get('w'), { revision: 5n, state: { v: 5 } });
});

t.test('maps and sets weigh what their entries weigh', async (t) => {
  const keys = new Map([['key_1', { revoked: false }], ['key_2', { revoked: true }]]);
  t.ok(stateBytes({ keys }) > stateBytes({ keys: {} }) + 40);
  t.ok(stateBytes({ ids: new Set(['a'.repeat(100)]) }) > 100);
  t.equal(stateBytes({ revision: 12n }), '{"revision":"12"}'.length);
});

t.test('the byte total never exceeds the budget, and eviction is least recently used first', async () => {
  const op = fc.oneof(
    fc.record({ kind: fc.constant('set' as const), key: fc.integer({ min: 0, max: 4 }), revision: fc.integer({ min: 0, max: 5 }), bytes: fc.integer({ min: 11, max: 400 }) }),
    fc.record({ kind: fc.constant('get' as const), key: fc.integer({ min: 0, max: 4 }) }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1000 }), fc.array(op, { maxLength: 200 }), (budget, ops) => {
      const cache = new StateCache(budget);
      // The reference: keys from least to most recently used.
      const model: Array<{ key: string; revision: number; bytes: number }> = [];
      const total = () => model.reduce((sum, entry) => sum + entry.bytes, 0);
      for (const o of ops) {
        const key = `s${o.key}`;
        const at = model.findIndex((entry) => entry.key === key);
        if (o.kind === 'get') {
          const hit = cache.get(key);
          if ((hit !== undefined) !== at >= 0) throw new Error(`get ${key}: cache ${hit !== undefined}, model ${at >= 0}`);
          if (at >= 0) model.push(...model.splice(at, 1));
        } else {
          cache.set(key, BigInt(o.revision), weighing(o.bytes));
          if (at >= 0 && model[at]!.revision >= o.revision) continue;
          if (at >= 0) model.splice(at, 1);
          if (o.bytes <= budget) model.push({ key, revision: o.revision, bytes: o.bytes });
          while (total() > budget) model.shift();
        }
        if (cache.bytes > budget) throw new Error(`${cache.bytes} bytes held over a budget of ${budget}`);
        if (cache.bytes !== total() || cache.size !== model.length) throw new Error(`cache holds ${cache.size} (${cache.bytes} bytes), model ${model.length} (${total()})`);
      }
    }),
    { numRuns: 500 },
  );
});

/** The store, counting the events each read hands back. */
function counting(store: EventStore): EventStore & { eventsRead: number } {
  const counted = Object.create(store) as EventStore & { eventsRead: number };
  counted.eventsRead = 0;
  counted.readStream = async (streamId: string, options?: ReadStreamOptions) => {
    const events = await store.readStream(streamId, options);
    counted.eventsRead += events.length;
    return events;
  };
  return counted;
}

function context(events: EventStore, budget: number): CommandContext {
  return { events, catalog, states: new StateCache(budget), awaitProjections: async () => {} };
}

const at = '2026-11-22T10:00:00.000Z';
const meta = { actor: 'key_1', at: new Date(at) };

t.test('a cached state spares the store a re-read of its stream', async (t) => {
  const store = openSqliteEventStore(tempDir(t));
  t.teardown(() => store.close());
  const events = counting(store);
  const cached = context(events, 1_000_000);
  await execute(cached, widget, 'w1', { type: 'CreateWidget', widget_id: 'w1', account_id: 'a1', body: { widget_type: 'nps', title: 'NPS' }, at }, meta);
  for (const title of ['One', 'Two', 'Three']) await execute(cached, widget, 'w1', { type: 'UpdateWidget', account_id: 'a1', body: { title }, at }, meta);
  events.eventsRead = 0;
  await load(cached, widget, 'w1');
  t.equal(events.eventsRead, 1, 'a command\'s own event is read once, by the next load');

  events.eventsRead = 0;
  const state = (await load(cached, widget, 'w1')) as WidgetState;
  t.equal(state.status === 'active' && state.widget.title, 'Three');
  t.equal(events.eventsRead, 0, 'a hit reads no event again');
  await execute(cached, widget, 'w1', { type: 'UpdateWidget', account_id: 'a1', body: { title: 'Four' }, at }, meta);
  t.equal(events.eventsRead, 0, 'nor does a command on it');
  await load(cached, widget, 'w1');
  t.equal(events.eventsRead, 1, 'then only its new event is read');

  const uncached = context(events, 0);
  events.eventsRead = 0;
  await load(uncached, widget, 'w1');
  await load(uncached, widget, 'w1');
  t.equal(events.eventsRead, 10, 'without room in the cache, every load reads all five events');
});

t.test('instances with caches of their own see each other\'s writes', async (t) => {
  const store = openSqliteEventStore(tempDir(t));
  t.teardown(() => store.close());
  const one = context(store, 1_000_000);
  const two = context(store, 1_000_000);
  await execute(one, widget, 'w1', { type: 'CreateWidget', widget_id: 'w1', account_id: 'a1', body: { widget_type: 'nps', title: 'NPS' }, at }, meta);
  await load(two, widget, 'w1');
  await execute(one, widget, 'w1', { type: 'UpdateWidget', account_id: 'a1', body: { title: 'Renamed' }, at }, meta);
  await execute(two, widget, 'w1', { type: 'UpdateWidget', account_id: 'a1', body: { description: 'Described' }, at }, meta);
  await execute(one, widget, 'w1', { type: 'UpdateWidget', account_id: 'a1', body: { theme: { primaryColor: '#123456' } }, at }, meta);
  for (const instance of [one, two, context(store, 0)]) {
    const state = (await load(instance, widget, 'w1')) as WidgetState;
    t.match(state, { status: 'active', widget: { title: 'Renamed', description: 'Described', theme: { primaryColor: '#123456' } } });
  }
});

t.test('the budget comes from the service options, 64 MB unless told', async (t) => {
  t.equal((await testServices(t)).commands.states.budgetBytes, 64 * 1024 * 1024);
  t.equal((await testServices(t, { stateCacheBytes: 4096 })).commands.states.budgetBytes, 4096);
});
