/**
 * What the MongoDB read-model adapter asks of the server, checked where no
 * server runs: that its indexes serve every sort the service asks for, and
 * that its rank shifts leave a ranked group dense and in order.
 */
import fc from '../support/properties.js';
import t from 'tap';
import { projections } from '../../projections/index.js';
import { listKeys } from '../../src/accounts/commands.js';
import { KeyUsage } from '../../src/accounts/key-usage.js';
import { indexKey, indexName, rankShifts, sortKey, storedField, type KeySpec } from '../../src/infra/read-models/mongo-plan.js';
import type { CollectionSpec, Filter, FindOptions, ReadModelStore } from '../../src/infra/read-models/port.js';
import { owner, testApp } from '../support/app.js';

/**
 * MongoDB's rule for reading a sort from an index ("Use Indexes to Sort
 * Query Results" in its manual): the sort's fields follow each other in the
 * index, in its order, after index fields the query pins by equality, with
 * every direction as in the index or every one reversed.
 */
function servedBy(index: KeySpec, pinned: Set<string>, sort: KeySpec): boolean {
  const keys = Object.entries(index);
  const wanted = Object.entries(sort);
  let start = 0;
  while (start < keys.length && pinned.has(keys[start]![0]) && !(keys[start]![0] in sort)) start++;
  if (wanted.length === 0 || wanted.length > keys.length - start) return false;
  const flip = wanted[0]![1] !== keys[start]![1];
  return wanted.every(([field, direction], i) => {
    const [indexed, order] = keys[start + i]!;
    return indexed === field && (flip ? -order : order) === direction;
  });
}

t.test('every sort the service asks for is read from an index on MongoDB', async (t) => {
  const { app, services } = await testApp(t);
  const asked: Array<{ collection: string; filter: Filter; sort: NonNullable<FindOptions['sort']> }> = [];
  const store = services.readModels;
  services.readModels = new Proxy(store, {
    get(target, property, receiver) {
      if (property !== 'find') return Reflect.get(target, property, receiver);
      return (collection: string, filter: Filter, options?: FindOptions) => {
        if (options?.sort) asked.push({ collection, filter, sort: options.sort });
        return target.find(collection, filter, options);
      };
    },
  }) as ReadModelStore;
  const who = await owner(services);
  for (const kind of ['widgets', 'forms', 'polls']) {
    for (const query of ['', '?page=3&limit=5']) {
      const reply = await app.inject({ method: 'GET', url: `/api/${kind}${query}`, headers: who.headers });
      t.equal(reply.statusCode, 200, `GET /api/${kind}${query}`);
    }
  }
  await listKeys(services, who.accountId);
  t.ok(asked.length >= 7, `${asked.length} sorted reads`);

  const specs = new Map<string, CollectionSpec>([...projections.flatMap((p) => p.collections), ...KeyUsage.collections].map((spec) => [spec.name, spec]));
  for (const { collection, filter, sort } of asked) {
    const spec = specs.get(collection);
    if (!spec) {
      t.fail(`${collection} is no collection of the service`);
      continue;
    }
    const indexes = [{ _id: 1 } as KeySpec, ...spec.indexes.map(indexKey)];
    const pinned = new Set(Object.keys(filter).map(storedField));
    t.ok(
      indexes.some((index) => servedBy(index, pinned, sortKey(sort))),
      `${collection} where ${JSON.stringify(filter)} sorted by ${JSON.stringify(sort)}: served by one of ${JSON.stringify(indexes)}`,
    );
  }
});

t.test('every index ends with _id, and every sort with _id in the direction before it', async (t) => {
  t.same(indexKey(['account_id', 'created_at']), { account_id: 1, created_at: 1, _id: 1 });
  t.same(indexKey(['id']), { _id: 1 }, 'the id alone is the _id index');
  t.same(indexKey(['poll_id', 'id']), { poll_id: 1, _id: 1 }, 'an index naming the id already keeps it where it is');
  t.throws(() => indexKey(['a', 'a']), 'a field twice is refused');
  t.throws(() => indexKey(['a.b']), 'a field name from outside the code is refused');
  t.equal(indexName(indexKey(['account_id', 'created_at'])), 'account_id_1_created_at_1__id_1', "named as the server names an index by default, as the index without _id was named before");
  t.same(sortKey([['created_at', -1]]), { created_at: -1, _id: -1 });
  t.same(sortKey([['created_at', 1], ['n', -1]]), { created_at: 1, n: -1, _id: -1 });
  t.same(sortKey([['id', 1]]), { _id: 1 });
  t.same(sortKey([]), { _id: 1 });
  t.throws(() => sortKey([['n', 2 as 1]]), 'a direction other than 1 or -1 is refused');
});

t.test('rank shifts, run in their order, close every gap deletes leave and keep the rest in order', async (t) => {
  t.same(rankShifts([3, 4, 5], 5), [], 'a run of ranks freed at the top needs no shift');
  t.same(rankShifts([2, 3], 6), [{ above: 3, below: 7, by: 2 }], 'a run freed inside needs one');
  t.same(rankShifts([5, 2], 6), [
    { above: 2, below: 5, by: 1 },
    { above: 5, below: 7, by: 2 },
  ]);
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 80 }), fc.array(fc.nat(), { maxLength: 40 }), (top, picks) => {
      const freed = picks.filter((pick) => pick < top).map((pick) => pick + 1);
      const kept = Array.from({ length: top }, (_, i) => i + 1).filter((rank) => !freed.includes(rank));
      const shifts = rankShifts(freed, top);
      let ranks = kept;
      for (const { above, below, by } of shifts) {
        ranks = ranks.map((rank) => (rank > above && rank < below ? rank - by : rank));
      }
      return ranks.join() === kept.map((_, i) => i + 1).join();
    }),
    { numRuns: 500 },
  );
  t.pass('the ranks left are 1..n in their order');
});
