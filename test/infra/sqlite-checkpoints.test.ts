import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { checkpointInBackground, DATABASE_FILE } from '../../src/infra/sqlite.js';
import { eventually } from '../support/eventually.js';
import { tempDir, testServices } from '../support/services.js';

const noted = (marker: string) => [{ type: 'Noted', data: { marker }, metadata: {} }];
const inFile = (dir: string, marker: string) => readFileSync(join(dir, DATABASE_FILE)).includes(marker);

t.test('the checkpoint thread copies an appended event into the database file while no commit is near the log limit', async (t) => {
  const dir = tempDir(t);
  const events = openSqliteEventStore(dir);
  t.teardown(() => events.close());
  await events.append('noted-1', noted('FIRST-MARKER'), 'no_stream');
  t.notOk(inFile(dir, 'FIRST-MARKER'), 'acknowledged, the event is in the write-ahead log only');

  const thread = checkpointInBackground(dir, undefined, 20);
  t.ok(await eventually(() => inFile(dir, 'FIRST-MARKER')), 'the thread copies it into the file');
  await thread.stop();

  await events.append('noted-2', noted('SECOND-MARKER'), 'no_stream');
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.notOk(inFile(dir, 'SECOND-MARKER'), 'a stopped thread copies nothing more');
  t.same((await events.readAll({ after: 0n, limit: 10 })).map((event) => event.data.marker), ['FIRST-MARKER', 'SECOND-MARKER'], 'and the store reads both');
});

t.test('a server on the embedded store runs the checkpoint thread from start to close', async (t) => {
  const dir = tempDir(t);
  const services = await testServices(t, { dataDir: dir });
  await services.events.append('noted-1', noted('BEFORE-START'), 'no_stream');
  await new Promise((resolve) => setTimeout(resolve, 200));
  t.notOk(inFile(dir, 'BEFORE-START'), 'services not started (as under the admin CLI) run no thread');
  await services.start();
  t.ok(await eventually(() => inFile(dir, 'BEFORE-START')), 'started, the server copies the log into the file');
  await services.close();

  // Another connection appends once the server is closed: only a thread still running would copy it.
  const events = openSqliteEventStore(dir);
  t.teardown(() => events.close());
  await events.append('noted-2', noted('AFTER-CLOSE'), 'no_stream');
  await new Promise((resolve) => setTimeout(resolve, 300));
  t.notOk(inFile(dir, 'AFTER-CLOSE'), 'closed, the server left no thread behind');
});

t.test('a checkpoint thread that fails says so, takes nothing down with it, and stops when asked', async (t) => {
  // No database file in the directory: the thread's connection (fileMustExist) fails as it opens.
  const dir = tempDir(t);
  const warned: Array<{ fields: object; message: string }> = [];
  const thread = checkpointInBackground(dir, { warn: (fields, message) => warned.push({ fields, message }) }, 20);
  t.ok(await eventually(() => warned.length > 0), 'the failure is logged');
  t.match(warned[0]!.message, /checkpoint thread stopped: commits copy the write-ahead log into the file themselves/);
  t.match(warned[0]!.fields, { err: 'SQLITE_CANTOPEN' }, 'with what stopped it');
  await thread.stop();
  t.pass('stop() returns for a thread that is gone already');

  const events = openSqliteEventStore(dir);
  t.teardown(() => events.close());
  await events.append('noted-1', noted('AFTER-FAILURE'), 'no_stream');
  t.same((await events.readAll({ after: 0n, limit: 10 })).map((event) => event.data.marker), ['AFTER-FAILURE'], 'the store appends and reads as before');
});
