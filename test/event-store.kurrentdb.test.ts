import t from 'tap';
import { openKurrentEventStore } from '../src/infra/event-store/kurrent.js';
import { eventStoreContract } from './contracts/event-store.js';

const url = process.env.EVENTSTORE_URL;

if (url) {
  eventStoreContract(t, { open: () => openKurrentEventStore(url), erasesFromFeedAtOnce: false });
} else {
  t.plan(0, 'skipped: EVENTSTORE_URL is not set, so there is no EventStoreDB/KurrentDB server to run the contract against');
}
