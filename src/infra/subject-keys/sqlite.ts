import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { KEYS_FILE, type SubjectKeyStore } from './port.js';

/** Subjects looked up per statement: SQLite's default limit of host parameters is far above it. */
const CHUNK = 500;

/**
 * The subject keys in a SQLite file of their own (`keys.db` beside
 * `feedback.db`): a copy of the event store's file holds none of them, and
 * the key file is backed up on its own. Rollback journal rather than a
 * write-ahead log, and `secure_delete`, so that an erased key is in no
 * file once its transaction commits: the journal goes with the commit, and
 * the freed bytes are overwritten with zeros.
 */
export function openSqliteSubjectKeys(dataDir: string, options: { readonly?: boolean; path?: string } = {}): SubjectKeyStore {
  const path = options.path ?? join(dataDir, KEYS_FILE);
  // A read-only copy whose origin never made its key file: no key to find.
  if (options.readonly && !existsSync(path)) return { kind: 'sqlite', find: async () => new Map(), add: () => Promise.reject(new Error('the subject keys are open read-only')), erase: () => Promise.reject(new Error('the subject keys are open read-only')), close: async () => undefined };
  if (!options.readonly) mkdirSync(dataDir, { recursive: true });
  const db = new Database(path, options.readonly ? { readonly: true, fileMustExist: true } : {});
  if (!options.readonly) {
    db.pragma('journal_mode = DELETE');
    db.pragma('secure_delete = ON');
    db.pragma('synchronous = FULL');
    db.pragma('busy_timeout = 5000');
    db.exec('CREATE TABLE IF NOT EXISTS subject_keys (subject TEXT PRIMARY KEY, salt BLOB NOT NULL) WITHOUT ROWID');
  } else {
    db.pragma('busy_timeout = 5000');
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
    async add(keys) {
      if (!insert) throw new Error('the subject keys are open read-only');
      return add(keys);
    },
    async erase(subjects) {
      if (!remove) throw new Error('the subject keys are open read-only');
      erase(subjects);
    },
    async close() {
      db.close();
    },
  };
}
