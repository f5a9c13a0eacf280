import { randomUUID } from 'node:crypto';
import t from 'tap';
import { openKurrentEventStore } from '../src/infra/event-store/kurrent.js';
import { eventStoreContract } from './contracts/event-store.js';

const url = process.env.EVENTSTORE_URL;

if (url) {
  eventStoreContract(t, { open: () => openKurrentEventStore(url), erasesFromFeedAtOnce: false });

  t.test('every read sees the append before it at once, on a cluster too: reads go to the leader', async (t) => {
    const store = await openKurrentEventStore(url);
    t.teardown(() => store.close());
    const stream = `leader-${randomUUID()}`;
    for (let i = 0; i < 20; i++) {
      const { position, nextRevision } = await store.append(stream, [{ type: 'LeaderRead', data: { i }, metadata: {} }], i === 0 ? 'no_stream' : BigInt(i - 1));
      t.equal(await store.streamState(stream), nextRevision, `append ${i}: the stream's revision`);
      t.equal((await store.readStream(stream)).length, i + 1, `append ${i}: the stream`);
      t.ok((await store.headPosition()) >= position, `append ${i}: the head of the feed`);
      const [last] = (await store.readAll({ after: position > 0n ? position - 1n : 0n, limit: 1 })).filter((event) => event.streamId === stream);
      t.equal(last?.data.i, i, `append ${i}: the feed`);
    }
  });
} else {
  t.plan(0, 'skipped: EVENTSTORE_URL is not set, so there is no EventStoreDB/KurrentDB server to run the contract against');
}
