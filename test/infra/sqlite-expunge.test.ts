import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { tempDir } from '../support/services.js';

const submitted = (comment: string) => [{ type: 'ResponseSubmitted', data: { comment }, metadata: {} }];

t.test('expunge empties the write-ahead log; a reader on an older snapshot holds it up without failing it', async (t) => {
  const dir = tempDir(t);
  const warnings: string[] = [];
  const events = openSqliteEventStore(dir, { warn: (_fields, message) => void warnings.push(message) });
  t.teardown(() => events.close());
  await events.append('response-gone', submitted('ERASED-MARKER'), 'no_stream');
  await events.append('response-kept', submitted('KEPT-MARKER'), 'no_stream');
  const wal = join(dir, `${DATABASE_FILE}-wal`);
  const bytes = (file: string) => readFileSync(file);

  // Another connection (the admin CLI, say) reads from a snapshot taken before the delete.
  const reader = new Database(join(dir, DATABASE_FILE));
  t.teardown(() => reader.close());
  reader.exec('BEGIN');
  reader.prepare('SELECT count(*) FROM events').get();
  await events.deleteStreams(['response-gone']);
  await events.expunge();
  t.match(warnings, [/older snapshot/], 'the store says it could not finish, and the erasure goes on');
  t.ok(bytes(wal).includes('ERASED-MARKER'), 'the log keeps what the reader may still read');
  t.same(await events.readStream('response-gone'), []);

  reader.exec('COMMIT');
  await events.expunge();
  t.equal(warnings.length, 1, 'once the reader is done, the next expunge finishes');
  t.equal(statSync(wal).size, 0, 'the log is empty');
  t.notOk(bytes(join(dir, DATABASE_FILE)).includes('ERASED-MARKER'), 'and the deleted event is not in the database file');
  t.ok(bytes(join(dir, DATABASE_FILE)).includes('KEPT-MARKER'), 'while the kept one is');
  t.same((await events.readStream('response-kept')).map((e) => e.data.comment), ['KEPT-MARKER']);
});
