import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

export const DATABASE_FILE = 'feedback.db';

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
  // The admin CLI and the server share the file; a writer waits for the other's lock.
  db.pragma('busy_timeout = 5000');
  return db;
}
