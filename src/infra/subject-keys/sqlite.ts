import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { DEFAULT_WAIT_MS } from '../sqlite.js';
import { KEYS_FILE, type SubjectKeyStore } from './port.js';

/** Subjects looked up per statement: SQLite's default limit of host parameters is far above it. */
const CHUNK = 500;

/**
 * The subject keys in a SQLite file of their own (`keys.db` beside
 * `feedback.db`): a copy of the event store's file holds none of them, and
 * the key file is backed up on its own. A write-ahead log with
 * `synchronous = FULL`, so that a commit is durable with one flush of the
 * log; `secure_delete`, so that an erased key's bytes are overwritten with
 * zeros; and after every erasure a checkpoint that truncates the log, so
 * that no older copy of the page that held the key is left in it: once
 * `erase` answers, an erased key is in no file.
 */
export function openSqliteSubjectKeys(dataDir: string, options: { readonly?: boolean; path?: string; busyTimeoutMs?: number } = {}): SubjectKeyStore {
  const path = options.path ?? join(dataDir, KEYS_FILE);
  // A read-only copy whose origin never made its key file: no key to find.
  if (options.readonly && !existsSync(path)) return { kind: 'sqlite', find: async () => new Map(), holdsOther: async () => false, add: () => Promise.reject(new Error('the subject keys are open read-only')), erase: () => Promise.reject(new Error('the subject keys are open read-only')), close: async () => undefined };
  if (!options.readonly) mkdirSync(dataDir, { recursive: true });
  const db = new Database(path, options.readonly ? { readonly: true, fileMustExist: true } : {});
  db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs ?? DEFAULT_WAIT_MS)}`);
  if (!options.readonly) {
    // A file another process still holds with a rollback journal stays so (the switch needs it alone): erasure is as thorough either way.
    db.pragma('journal_mode = WAL');
    db.pragma('secure_delete = ON');
    db.pragma('synchronous = FULL');
    db.exec('CREATE TABLE IF NOT EXISTS subject_keys (subject TEXT PRIMARY KEY, salt BLOB NOT NULL) WITHOUT ROWID');
    // A process stopped between an erasure's commit and its checkpoint left the erased keys' old pages in the log.
    truncateLog(db);
  }
  const select = (n: number) => db.prepare<string[], { subject: string; salt: Buffer }>(`SELECT subject, salt FROM subject_keys WHERE subject IN (${Array(n).fill('?').join(',')})`);
  const selects = new Map<number, ReturnType<typeof select>>();
  const one = db.prepare<[string], { salt: Buffer }>('SELECT salt FROM subject_keys WHERE subject = ?');
  const insert = options.readonly ? undefined : db.prepare('INSERT OR IGNORE INTO subject_keys (subject, salt) VALUES (?, ?)');
  const remove = options.readonly ? undefined : db.prepare('DELETE FROM subject_keys WHERE subject = ?');
  const find = (subjects: readonly string[]): Map<string, Buffer> => {
    const found = new Map<string, Buffer>();
    for (let i = 0; i < subjects.length; i += CHUNK) {
      const part = subjects.slice(i, i + CHUNK);
      if (part.length === 1) {
        const row = one.get(part[0]!);
        if (row) found.set(part[0]!, row.salt);
        continue;
      }
      let statement = selects.get(part.length);
      if (!statement) selects.set(part.length, (statement = select(part.length)));
      for (const row of statement.all(...part)) found.set(row.subject, row.salt);
    }
    return found;
  };
  const add = db.transaction((keys: ReadonlyMap<string, Buffer>) => {
    for (const [subject, salt] of keys) insert!.run(subject, salt);
    return find([...keys.keys()]);
  });
  const erase = db.transaction((subjects: readonly string[]) => {
    for (const subject of subjects) remove!.run(subject);
  });
  return {
    kind: 'sqlite',
    async find(subjects) {
      // A read-only copy's origin may not have made the file yet: nothing to find.
      if (options.readonly && !db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'subject_keys'").get()) return new Map();
      return find(subjects);
    },
    async holdsOther(subject) {
      if (options.readonly && !db.prepare("SELECT 1 FROM sqlite_master WHERE name = 'subject_keys'").get()) return false;
      return db.prepare('SELECT 1 FROM subject_keys WHERE subject <> ? LIMIT 1').get(subject) !== undefined;
    },
    async add(keys) {
      if (!insert) throw new Error('the subject keys are open read-only');
      return add(keys);
    },
    async erase(subjects) {
      if (!remove) throw new Error('the subject keys are open read-only');
      erase(subjects);
      if (!truncateLog(db)) throw new Error('the keys are erased, but a reader of keys.db kept their old copies in its write-ahead log: erase them again');
    },
    async close() {
      db.close();
    },
  };
}

/**
 * Copies the write-ahead log into the file and truncates it to nothing;
 * false when a reader's snapshot (another connection, another process)
 * kept it from emptying the log within the busy timeout. On a file with a
 * rollback journal there is no log, and nothing to do.
 */
function truncateLog(db: Database.Database): boolean {
  const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
  return result!.busy === 0;
}
