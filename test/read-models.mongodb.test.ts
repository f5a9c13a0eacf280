import t from 'tap';
import { openMongoReadModels } from '../src/infra/read-models/mongo.js';
import { readModelContract } from './contracts/read-models.js';

const url = process.env.MONGODB_URL;

if (url) {
  readModelContract(t, () => openMongoReadModels(url));
  t.test('collections that ask for indexed fields in columns', async (t) => readModelContract(t, () => openMongoReadModels(url), { indexedColumns: true }));
} else {
  t.plan(0, 'skipped: MONGODB_URL is not set, so there is no MongoDB server to run the contract against');
}
