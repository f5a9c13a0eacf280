import { randomBytes } from 'node:crypto';
import { MongoClient } from 'mongodb';
import t from 'tap';
import { dbNameOf, openMongoReadModels } from '../src/infra/read-models/mongo.js';
import { readModelContract } from './contracts/read-models.js';

const url = process.env.MONGODB_URL;

if (url) {
  readModelContract(t, () => openMongoReadModels(url));
  t.test('collections that ask for indexed fields in columns', async (t) => readModelContract(t, () => openMongoReadModels(url), { indexedColumns: true }));
  t.test('collections that hold large documents', async (t) => readModelContract(t, () => openMongoReadModels(url), { indexedColumns: true, largeDocuments: true }));

  t.test('a fenced write writes its consumer\'s fence, not the lease: the lease is written once per consumer and holder', async (t) => {
    const store = await openMongoReadModels(url);
    t.teardown(() => store.close());
    const raw = new MongoClient(url);
    t.teardown(() => raw.close());
    const leases = raw.db(dbNameOf(url)).collection<{ _id: string; fenced?: number }>('leases');
    const lease = `l${randomBytes(6).toString('hex')}`;
    const now = new Date();
    t.ok(await store.claimLease({ name: lease, holder: 'p', now, ttlMs: 60_000 }));
    const fenced = async () => (await leases.findOne({ _id: lease }))?.fenced ?? 0;
    for (const consumer of ['projections', 'erasure']) {
      for (let i = 0; i < 3; i++) t.ok(await store.write([], [], { name: lease, holder: 'p', consumer }));
    }
    t.equal(await fenced(), 2, 'once for each consumer\'s first write, never for the ones after');
    await store.releaseLease(lease, 'p');
  });
} else {
  t.plan(0, 'skipped: MONGODB_URL is not set, so there is no MongoDB server to run the contract against');
}
