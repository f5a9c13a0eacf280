import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { KEYS_FILE } from '../src/infra/subject-keys/port.js';
import { openSqliteSubjectKeys } from '../src/infra/subject-keys/sqlite.js';
import { openMongoSubjectKeys } from '../src/infra/subject-keys/mongo.js';
import { subjectKeyContract } from './contracts/subject-keys.js';
import { tempDir } from './support/services.js';

subjectKeyContract(t, async () => openSqliteSubjectKeys(tempDir(t)));

const url = process.env.MONGODB_URL;
if (url) subjectKeyContract(t, () => openMongoSubjectKeys(url));
else t.comment('MongoDB subject keys skipped: MONGODB_URL is not set, so there is no MongoDB server to run the contract against');

/** The files of the key store (the file, its log, its shared memory) that hold these bytes. */
const holding = (dir: string, bytes: Buffer) =>
  readdirSync(dir)
    .filter((name) => name.startsWith(KEYS_FILE) && readFileSync(join(dir, name)).includes(bytes))
    .sort();

t.test('keys.db: a key added is in a file at once; an erased one is in none once erase answers', async (t) => {
  const dir = tempDir(t);
  const keys = openSqliteSubjectKeys(dir);
  t.teardown(() => keys.close());
  const salts = new Map(Array.from({ length: 50 }, (_, i) => [`rsp_${i}`, randomBytes(32)] as const));
  for (const [subject, salt] of salts) await keys.add(new Map([[subject, salt]]));
  t.same(holding(dir, salts.get('rsp_7')!), [`${KEYS_FILE}-wal`], 'committed: in the write-ahead log, as another process reads it');
  await keys.erase(['rsp_7', 'rsp_8']);
  t.same(holding(dir, salts.get('rsp_7')!), [], 'erased: in no file of the key store');
  t.same(holding(dir, salts.get('rsp_8')!), []);
  t.same(holding(dir, salts.get('rsp_9')!), [KEYS_FILE], 'the others kept');
  t.same([...(await keys.find(['rsp_7', 'rsp_9']))].map(([subject]) => subject), ['rsp_9']);
});

t.test('keys.db: an erasure a reader keeps from clearing the log says so, and clears it when run again', async (t) => {
  const dir = tempDir(t);
  const keys = openSqliteSubjectKeys(dir, { busyTimeoutMs: 50 });
  t.teardown(() => keys.close());
  const salt = randomBytes(32);
  await keys.add(new Map([['rsp_a', salt], ['rsp_b', randomBytes(32)]]));
  // Another process in the middle of a read: its snapshot holds the log.
  const reader = new Database(join(dir, KEYS_FILE), { readonly: true });
  reader.pragma('busy_timeout = 0');
  const reading = reader.prepare('SELECT subject FROM subject_keys').iterate();
  reading.next();
  await t.rejects(keys.erase(['rsp_a']), /erase them again/, 'the erasure does not answer as done');
  t.same(await keys.find(['rsp_a']), new Map(), 'the key is deleted all the same');
  reading.return?.();
  reader.close();
  await keys.erase(['rsp_a']);
  t.same(holding(dir, salt), [], 'run again, no file holds it');
});

t.test('keys.db: a process stopped between an erasure and its checkpoint leaves the log to be cleared as the file is opened again', async (t) => {
  const dir = tempDir(t);
  const keys = openSqliteSubjectKeys(dir);
  const salt = randomBytes(32);
  await keys.add(new Map([['rsp_a', salt]]));
  await keys.close();
  // The erasure's commit, without the checkpoint that follows it.
  const raw = new Database(join(dir, KEYS_FILE));
  raw.pragma('secure_delete = ON');
  raw.pragma('wal_autocheckpoint = 0');
  raw.prepare('DELETE FROM subject_keys WHERE subject = ?').run('rsp_a');
  t.ok(holding(dir, salt).length > 0, 'its old page is still in a file');
  const reopened = openSqliteSubjectKeys(dir);
  t.teardown(() => reopened.close());
  t.same(holding(dir, salt), [], 'opened again, no file holds it');
  raw.close();
});

t.test('the key store waits for another writer of keys.db as long as STORE_TIMEOUT_MS says, then fails', async (t) => {
  const dir = tempDir(t);
  const { subjectKeysAt } = await import('../src/services.js');
  const { loadConfig } = await import('../src/config.js');
  const at = subjectKeysAt(loadConfig({ DATA_DIR: dir, STORE_TIMEOUT_MS: '300' }), undefined);
  t.match(at, { kind: 'sqlite', waitMs: 300 });
  const { openSubjectKeysAt } = await import('../src/infra/subject-keys/open.js');
  const keys = await openSubjectKeysAt(at);
  t.teardown(() => keys.close());
  const other = new Database(join(dir, KEYS_FILE));
  t.teardown(() => other.close());
  other.prepare('BEGIN IMMEDIATE').run();
  const asked = Date.now();
  await t.rejects(keys.add(new Map([['rsp_held', randomBytes(32)]])), { code: 'SQLITE_BUSY' });
  t.ok(Date.now() - asked < 4000, 'after the configured wait, not the default 5 s');
  other.prepare('ROLLBACK').run();
  t.equal((await keys.add(new Map([['rsp_held', randomBytes(32)]]))).size, 1, 'stored once the file is free');
});
