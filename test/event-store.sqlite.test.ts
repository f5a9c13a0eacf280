import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openSqliteEventStore } from '../src/infra/event-store/sqlite.js';
import { eventStoreContract } from './contracts/event-store.js';

const dir = mkdtempSync(join(tmpdir(), 'events-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

eventStoreContract(t, { open: async () => openSqliteEventStore(dir), erasesFromFeedAtOnce: true });
