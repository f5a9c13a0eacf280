import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { openSqliteReadModels } from '../src/infra/read-models/sqlite.js';
import { readModelContract } from './contracts/read-models.js';

const dir = mkdtempSync(join(tmpdir(), 'read-models-'));
t.teardown(() => rmSync(dir, { recursive: true, force: true }));

readModelContract(t, async () => openSqliteReadModels(dir));

t.test('indexes follow the declaration: one no longer declared is dropped', async (t) => {
  const Database = (await import('better-sqlite3')).default;
  const store = openSqliteReadModels(dir);
  t.teardown(() => store.close());
  await store.ensureCollections([{ name: 'shrinking', indexes: [['a', 'b'], ['c']] }]);
  await store.ensureCollections([{ name: 'shrinking', indexes: [['c']], rankWithin: 'g' }]);
  const db = new Database(join(dir, 'feedback.db'), { readonly: true });
  t.teardown(() => db.close());
  const names = db.prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'rm_shrinking' ORDER BY name").pluck().all();
  t.same(names, ['ix_shrinking_c', 'ix_shrinking_rank']);
});
