import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { reasonOf } from './threads.js';
import Database from 'better-sqlite3';

export type SqliteDatabase = Database.Database;

export const DATABASE_FILE = 'feedback.db';

/**
 * Pages the write-ahead log grows to (about 40 MB) before a commit copies
 * them into the file. A server's log is copied by a thread of its own long
 * before that (see checkpointInBackground): this is where a commit does it
 * when that thread is not there or falls behind.
 */
export const WAL_CHECKPOINT_PAGES = 10_000;

/** How often a server's checkpoint thread copies the log into the file. */
const BACKGROUND_CHECKPOINT_MS = 100;

/** Where a store reports what it could not finish; pino's `warn` fits. */
export interface StoreLogger {
  warn(fields: object, message: string): void;
}

/** How long a connection waits for another writer's lock unless told otherwise (STORE_TIMEOUT_MS's default). */
export const DEFAULT_WAIT_MS = 5000;

/**
 * Opens the embedded database file that both SQLite adapters share. Each
 * adapter has its own connection: `synchronous` is per connection, and only
 * the event store needs every commit on disk before it answers.
 */
export function openDatabase(dataDir: string, synchronous: 'FULL' | 'NORMAL', waitMs = DEFAULT_WAIT_MS): SqliteDatabase {
  mkdirSync(dataDir, { recursive: true });
  const db = openInWal(join(dataDir, DATABASE_FILE));
  db.pragma(`synchronous = ${synchronous}`);
  // A checkpoint copies every page the log holds back into the file: the pages
  // a stream of appends touches (the feed's tail, its index of random ids, the
  // read models') are mostly the same ones again, so a longer log copies each
  // once for many commits. SQLite's default of 1,000 pages made the commits
  // of a steady stream of submissions take twice as long. Per connection: both
  // adapters' commits trigger it.
  db.pragma(`wal_autocheckpoint = ${WAL_CHECKPOINT_PAGES}`);
  // The admin CLI and the server share the file; a writer waits for the other's
  // lock, as long as a call to either store may take (STORE_TIMEOUT_MS).
  db.pragma(`busy_timeout = ${Math.round(waitMs)}`);
  // Erased responses must not linger in free pages or free space inside a page,
  // where a look at the raw file would still find them. Per connection, so every
  // connection that may delete sets it.
  db.pragma('secure_delete = ON');
  return db;
}

/**
 * Whether the database file holds the table, read without writing to it;
 * undefined when the file cannot be read as a database at all (opening it
 * for use then says why).
 */
export function holdsTable(path: string, table: string): boolean | undefined {
  let db: SqliteDatabase | undefined;
  try {
    db = new Database(path, { readonly: true, fileMustExist: true });
    return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(table) !== undefined;
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

function openInWal(path: string): SqliteDatabase {
  let db: SqliteDatabase | undefined;
  try {
    db = new Database(path);
    db.pragma('journal_mode = WAL');
    return db;
  } catch (error) {
    db?.close();
    // SQLite's own words ("file is not a database") do not say which file.
    // The driver's code is kept: a file another process holds locked is told apart by it.
    throw Object.assign(new Error(`${path}: ${(error as Error).message}`), { code: (error as { code?: unknown }).code });
  }
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

/**
 * The checkpoint thread (CommonJS, evaluated as the worker's script: it needs
 * nothing of this project but the driver, so it starts in milliseconds, from
 * the sources or from the build alike). A PASSIVE checkpoint never waits for
 * a reader or writer, and syncs at any `synchronous` level: the log is on
 * disk before its pages are copied, and the file before the log may start
 * over.
 */
const CHECKPOINT_THREAD = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { fileMustExist: true });
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (error) {
    // Another connection is checkpointing (a TRUNCATE after an erasure, another process's thread): next time.
    if (error.code !== 'SQLITE_BUSY' && error.code !== 'SQLITE_LOCKED') throw error;
  }
}, workerData.everyMs);
parentPort.once('message', () => {
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface BackgroundCheckpoints {
  /** Ends the thread after its checkpoint in progress, if any. */
  stop(): Promise<void>;
}

/**
 * Copies the write-ahead log into the database file every `everyMs` on a
 * thread of its own. Without it the commit that takes the log past
 * WAL_CHECKPOINT_PAGES copies it, on the event loop: under a steady stream
 * of submissions that held every request for 40-140 ms about once a second,
 * most of a submit's p99. Should the thread fail, it says so and the commits
 * checkpoint as before.
 */
export function checkpointInBackground(dataDir: string, logger?: StoreLogger, everyMs = BACKGROUND_CHECKPOINT_MS): BackgroundCheckpoints {
  return checkpointFileInBackground(join(dataDir, DATABASE_FILE), logger, everyMs);
}

/** The same, for the database file at `file`. */
export function checkpointFileInBackground(file: string, logger?: StoreLogger, everyMs = BACKGROUND_CHECKPOINT_MS): BackgroundCheckpoints {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const worker = new Worker(CHECKPOINT_THREAD, { eval: true, workerData: { driver, file, everyMs } });
  // A process that ends without stop() is not held open by it.
  worker.unref();
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.on('error', (error: unknown) => logger?.warn({ err: reasonOf(error) }, 'the checkpoint thread stopped: commits copy the write-ahead log into the file themselves'));
  return {
    async stop() {
      // Held open until the thread has closed its connection.
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}
