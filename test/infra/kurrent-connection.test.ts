import { createServer } from 'node:net';
import { KurrentDBClient } from '@kurrent/kurrentdb-client';
import t from 'tap';
import { DEFAULT_DEADLINE_MS, KurrentEventStore, leader, prepareConnectionString } from '../../src/infra/event-store/kurrent.js';
import { isStoreUnavailable } from '../../src/infra/outage.js';

t.test('the connection string asks for the leader and bounds each call, unless it says otherwise', async (t) => {
  t.equal(prepareConnectionString('kurrentdb://node1:2113?tls=false').connectionString, `kurrentdb://node1:2113?tls=false&nodePreference=leader&defaultDeadline=${DEFAULT_DEADLINE_MS}`);
  t.equal(prepareConnectionString('esdb://a:1,b:2,c:3', { deadlineMs: 2500 }).connectionString, 'kurrentdb://a:1,b:2,c:3?nodePreference=leader&defaultDeadline=2500', 'the configured deadline');
  t.equal(
    prepareConnectionString('kurrentdb+discover://admin:changeit@cluster:2113?NodePreference=follower&default_deadline=20000').connectionString,
    'kurrentdb+discover://admin:changeit@cluster:2113?NodePreference=follower&default_deadline=20000',
    'what the string says wins, however it spells the keys',
  );
  t.equal(prepareConnectionString('kurrentdb://admin:changeit@node1:2113').redacted, 'kurrentdb://***:***@node1:2113', 'still without credentials in messages');
  // The client's own parser takes what the adapter adds.
  const client = KurrentDBClient.connectionString(prepareConnectionString('kurrentdb://127.0.0.1:2113?tls=false').connectionString);
  await client.dispose();
});

t.test('every read and subscription asks for the leader', async (t) => {
  t.same(leader({ direction: 'forwards', maxCount: 1 }), { direction: 'forwards', maxCount: 1, requiresLeader: true });
});

t.test('a server out of reach: appends and reads fail as a store unavailable (503), not as an unknown error', async (t) => {
  // A port nobody listens on: bound, then closed.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
  const store = new KurrentEventStore(KurrentDBClient.connectionString(prepareConnectionString(`kurrentdb://127.0.0.1:${port}?tls=false`, { deadlineMs: 1000 }).connectionString));
  t.teardown(() => store.close());
  // The adapter's waits between attempts do not hold the process open (a server's listener does): this test's interval does.
  const open = setInterval(() => undefined, 1000);
  t.teardown(() => clearInterval(open));
  const append = await store.append('s-1', [{ type: 'Tested', data: {}, metadata: {} }], 'any').then(
    () => undefined,
    (error: unknown) => error,
  );
  t.ok(append, 'the append fails');
  t.ok(isStoreUnavailable(append), 'as a store unavailable');
  const read = await store.readStream('s-1').then(
    () => undefined,
    (error: unknown) => error,
  );
  t.ok(read && isStoreUnavailable(read), 'and so does a read');
  const feed = await store.readAll({ after: 0n, limit: 10 }).then(
    () => undefined,
    (error: unknown) => error,
  );
  t.ok(feed && isStoreUnavailable(feed), 'and a read of the feed');
});
