import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

export const DATABASE_FILE = 'feedback.db';

/** Pages the write-ahead log grows to (about 40 MB) before a commit copies them into the file. */
export const WAL_CHECKPOINT_PAGES = 10_000;

/** Where a store reports what it could not finish; pino's `warn` fits. */
export interface StoreLogger {
  warn(fields: object, message: string): void;
}

/**
 * Opens the embedded database file that both SQLite adapters share. Each
 * adapter has its own connection: `synchronous` is per connection, and only
 * the event store needs every commit on disk before it answers.
 */
export function openDatabase(dataDir: string, synchronous: 'FULL' | 'NORMAL'): SqliteDatabase {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, DATABASE_FILE));
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${synchronous}`);
  // A checkpoint copies every page the log holds back into the file: the pages
  // a stream of appends touches (the feed's tail, its index of random ids, the
  // read models') are mostly the same ones again, so a longer log copies each
  // once for many commits. SQLite's default of 1,000 pages made the commits
  // of a steady stream of submissions take twice as long. Per connection: both
  // adapters' commits trigger it.
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  // The admin CLI and the server share the file; a writer waits for the other's lock.
  db.pragma('busy_timeout = 5000');
  // Erased responses must not linger in free pages or free space inside a page,
  // where a look at the raw file would still find them. Per connection, so every
  // connection that may delete sets it.
  db.pragma('secure_delete = ON');
  return db;
}

/** How often, and how far apart, a checkpoint that another connection holds up is tried again. */
const CHECKPOINT_ATTEMPTS = 5;
const CHECKPOINT_RETRY_MS = 40;

/**
 * Copies every page of the write-ahead log into the database file and empties
 * the log file, so that page versions written before a delete (which still
 * hold what was deleted) are in neither file. Answers false when a reader in
 * another connection or process kept its snapshot through every attempt; the
 * log is then checkpointed as far as that reader allows and the rest waits
 * for the next checkpoint (at the latest when the last connection closes).
 */
export async function truncateWriteAheadLog(db: SqliteDatabase): Promise<boolean> {
  for (let attempt = 1; ; attempt++) {
    if (checkpointOnce(db)) return true;
    if (attempt === CHECKPOINT_ATTEMPTS) return false;
    await new Promise((resolve) => setTimeout(resolve, CHECKPOINT_RETRY_MS));
  }
}

function checkpointOnce(db: SqliteDatabase): boolean {
  if (!db.open) return true;
  // better-sqlite3 is synchronous: waiting out a reader here would stall every
  // request of the process, so the checkpoint gives up at once and is retried
  // between turns. Only for this call: other statements keep their patience.
  const patience = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma('busy_timeout = 0');
  try {
    const [result] = db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number; log: number; checkpointed: number }>;
    return result?.busy === 0;
  } catch (error) {
    if ((error as { code?: string }).code === 'SQLITE_BUSY' || (error as { code?: string }).code === 'SQLITE_LOCKED') return false;
    throw error;
  } finally {
    db.pragma(`busy_timeout = ${patience}`);
  }
}
