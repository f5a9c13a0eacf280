import { cpSync, existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { formatLine, leafOf, SEAL_STREAM, sealHash } from '../../src/seals/chain.js';
import { catalog } from '../../src/domain-events.js';
import { ErasureProcess } from '../../src/erasure/process.js';
import { leavesInThreads } from '../../src/seals/leaves.js';
import { verifyHistory } from '../../src/seals/verify.js';
import { silent, tempDir, testServices } from '../support/services.js';
import { admin } from '../support/processes.js';
import { publishedWidget } from '../support/app.js';
import { live, openFile, rows, sealedHistory, submit } from './support.js';

const verifyRun = async (dir: string, args: string[] = []) => {
  const run = await admin(['verify', ...args], { DATA_DIR: dir });
  return { ...run, result: JSON.parse(run.stdout.trim().split('\n').pop() || 'null') };
};

/** Flips the lowest bit of one character in the middle of the text: still ASCII, one byte different. */
const flipped = (text: string): string => {
  const i = Math.floor(text.length / 2);
  return text.slice(0, i) + String.fromCharCode(text.charCodeAt(i) ^ 1) + text.slice(i + 1);
};

t.test('an untouched history verifies: exit 0, the counts and the last sealed position', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const all = rows(dir);
  const seals = all.filter((row) => row.stream_id === SEAL_STREAM);
  const { code, result } = await verifyRun(dir);
  t.equal(code, 0);
  t.equal(seals.length, 2);
  t.match(result, { verified: true, events: all.length, seals: 2, erased: 0, last_sealed_position: String(seals[1]!.position - 1), last_seal_hash: /^[0-9a-f]{64}$/ });
  t.equal(result.unsealed, all.filter((row) => row.position > seals[1]!.position - 1).length, 'what came after the last seal is counted as unsealed');
  t.equal(result.sealed + result.unsealed, all.length);
  t.type(result.events_per_second, 'number');

  const expected = await verifyRun(dir, ['--expect', result.last_seal_hash]);
  t.equal(expected.code, 0, 'the chain holds the seal noted earlier');
  const unknown = await verifyRun(dir, ['--expect', 'a'.repeat(64)]);
  t.equal(unknown.code, 1, 'a noted seal the chain no longer holds is a break');
  t.match(unknown.result.break, { position: String(seals[1]!.position), stream: SEAL_STREAM, type: 'LogSealed', problem: /no longer holds the seal/ }, 'named at the last seal the chain holds');
});

t.test('swapping two seals: exit 1 naming the first of them, not an intact event before it', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const [a, b] = rows(dir).filter((row) => row.stream_id === SEAL_STREAM);
  const db = openFile(dir);
  db.transaction(() => {
    db.prepare('UPDATE events SET position = -1 WHERE position = ?').run(a!.position);
    db.prepare('UPDATE events SET position = ? WHERE position = ?').run(a!.position, b!.position);
    db.prepare('UPDATE events SET position = ? WHERE position = -1').run(b!.position);
  })();
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(a!.position), stream: SEAL_STREAM, problem: /not before it: seals were moved or swapped/ });
});

t.test('an event put below position 1, where no feed reads: the store does not open, and verify exits 1 naming it', async (t) => {
  const { dir, close, responses } = await sealedHistory(t);
  await close();
  const copy = rows(dir).find((row) => row.data.includes(responses[0]!.marker))!;
  const db = openFile(dir);
  // The response's own event again, as a second revision of its stream, where only a command would read it.
  db.prepare("INSERT INTO events (position, id, stream_id, revision, type, data, metadata, recorded_at) SELECT 0, 'hidden', stream_id, 1, type, data, metadata, recorded_at FROM events WHERE position = ?").run(copy.position);
  db.close();
  const { code, stderr } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(stderr, new RegExp(`an event at position 0 \\(stream ${copy.stream_id}, ResponseSubmitted\\), below the first position it gives`));
  t.notMatch(stderr, /\n\s+at /, 'one line, no stack');
});

t.test('an event put past position 2^53 - 1, which numbers round: the store does not open, and verify exits 1 naming it rather than reading it for ever', async (t) => {
  const { dir, close, responses } = await sealedHistory(t);
  await close();
  const copy = rows(dir).find((row) => row.data.includes(responses[0]!.marker))!;
  for (const [position, shown] of [[9007199254740993n, '9007199254740993'], [2n ** 62n + 1n, String(2n ** 62n + 1n)]] as const) {
    const db = openFile(dir);
    db.prepare("DELETE FROM events WHERE id = 'beyond'").run();
    db.prepare("INSERT INTO events (position, id, stream_id, revision, type, data, metadata, recorded_at) SELECT ?, 'beyond', stream_id, 1, type, data, metadata, recorded_at FROM events WHERE position = ?").run(position, copy.position);
    // What the insert moved the counter to is put back, so that the event alone is what is refused.
    db.prepare("UPDATE sqlite_sequence SET seq = (SELECT max(position) FROM events WHERE position < 9007199254740991) WHERE name = 'events'").run();
    db.close();
    const { code, stderr } = await verifyRun(dir);
    t.equal(code, 1, shown);
    t.match(stderr, new RegExp(`an event at position ${shown} \\(stream ${copy.stream_id}, ResponseSubmitted\\), past the last position it can give`));
    t.notMatch(stderr, /\n\s+at /, 'one line, no stack');
  }
  const db = openFile(dir);
  db.prepare("DELETE FROM events WHERE id = 'beyond'").run();
  db.prepare("UPDATE sqlite_sequence SET seq = 9007199254740991 WHERE name = 'events'").run();
  db.close();
  const { code, stderr } = await verifyRun(dir);
  t.equal(code, 1, 'a counter at the last position is refused too: the next append would pass it');
  t.match(stderr, /counter of positions given stands at 9007199254740991/);
});

/** A well-formed `ResponsesErased` by `forger`, put in by hand: at `position`, or after the last event. */
function forgeErasure(db: ReturnType<typeof openFile>, widget: string, responseId: string, position: number | null = null): void {
  const data = JSON.stringify({ account_id: 'acc', parent: 'widget', parent_id: widget, response_ids: [responseId], reason: 'bulk_delete', key_id: null, erased_at: '2026-11-27T00:00:00.000Z' });
  const metadata = JSON.stringify({ schema_version: 1, occurred_at: '2026-11-27T00:00:00.000Z', actor: 'forger' });
  db.prepare("INSERT INTO events (position, id, stream_id, revision, type, data, metadata, recorded_at) VALUES (?, 'forged', 'erasure-forged', 0, 'ResponsesErased', ?, ?, '2026-11-27T00:00:00.000Z')").run(position, data, metadata);
}

t.test('with --expect, the erasure records after that seal which removed what it covers are listed, a forged one among them', async (t) => {
  const { dir, app, who, services, close, widgets, responses } = await sealedHistory(t);
  await services.seals.sealAll();
  const noted = (await verifyRun(dir)).result.last_seal_hash as string;
  // A lawful erasure after the noted seal...
  await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widgets[0], ids: [responses[0]!.id] } });
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await close();
  const lawful = await verifyRun(dir, ['--expect', noted]);
  t.equal(lawful.code, 0, lawful.stderr);
  t.match(lawful.result.erased_since_expected, [{ parent_id: widgets[0], submissions: 1, actor: who.keyId, occurred_at: /^\d{4}-/ }]);
  t.equal(lawful.result.erased_since_expected.length, 1);

  // ...and one forged by hand: a sealed response deleted, and a record naming it appended.
  const victim = rows(dir).find((row) => row.data.includes(responses[1]!.marker))!;
  const db = openFile(dir);
  db.prepare('DELETE FROM events WHERE stream_id = ?').run(victim.stream_id);
  forgeErasure(db, widgets[0]!, responses[1]!.id);
  db.close();
  const forged = await verifyRun(dir, ['--expect', noted]);
  t.equal(forged.code, 0, 'a well-formed record after the last seal is not a break: the chain cannot tell it from a lawful one');
  t.equal(forged.result.erased_since_expected.length, 2);
  t.match(forged.result.erased_since_expected[1], { stream: 'erasure-forged', parent_id: widgets[0], submissions: 1, actor: 'forger', occurred_at: '2026-11-27T00:00:00.000Z' }, 'so it is listed for the auditor to hold against the erasures asked for');
  t.notOk('erased_since_expected' in (await verifyRun(dir)).result, 'listed only against a noted seal');
});

t.test('with --expect, a forged erasure record put between what that seal covers and the seal itself is listed too', async (t) => {
  const { dir, services, close, widgets, responses } = await sealedHistory(t);
  await services.seals.sealAll();
  const noted = (await verifyRun(dir)).result.last_seal_hash as string;
  await close();
  const all = rows(dir);
  const seal = all.filter((row) => row.stream_id === SEAL_STREAM).at(-1)!;
  const victim = all.find((row) => row.data.includes(responses[1]!.marker))!;
  const db = openFile(dir);
  // Nothing after it seals where the last seal sits: it is moved on, and the record takes its place.
  db.prepare('UPDATE events SET position = ? WHERE position = ?').run(seal.position + 1000, seal.position);
  db.prepare('DELETE FROM events WHERE stream_id = ?').run(victim.stream_id);
  forgeErasure(db, widgets[0]!, responses[1]!.id, seal.position);
  db.close();
  const run = await verifyRun(dir, ['--expect', noted]);
  t.equal(run.code, 0, run.stderr);
  t.match(run.result.erased_since_expected, [{ position: String(seal.position), stream: 'erasure-forged', actor: 'forger' }]);
});

t.test('a seal whose range was edited is named as changed, not as moved', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const first = rows(dir).find((row) => row.stream_id === SEAL_STREAM)!;
  const through = JSON.parse(first.data).through as string;
  const db = openFile(dir);
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(first.data.replace(`"through":"${through}"`, '"through":"999999"'), first.position);
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(first.position), stream: SEAL_STREAM, problem: /changed after it was made: its hash does not match/ });
});

t.test('flipping one byte of any sealed event payload breaks the chain at its position', async (t) => {
  const { dir, services } = await sealedHistory(t);
  const all = rows(dir);
  const lastSeal = all.filter((row) => row.stream_id === SEAL_STREAM).pop()!;
  const db = openFile(dir);
  t.teardown(() => db.close());
  const update = db.prepare('UPDATE events SET data = ? WHERE position = ?');
  for (const row of all.filter((r) => r.position <= lastSeal.position)) {
    update.run(flipped(row.data), row.position);
    const result = await verifyHistory(services.events);
    update.run(row.data, row.position);
    t.equal(result.firstBreak?.position, BigInt(row.position), `${row.type} at ${row.position}`);
  }
  t.equal((await verifyHistory(services.events)).firstBreak, undefined, 'restored, it verifies again');
});

t.test('one byte flipped in the database file: admin verify exits 1 naming the position', async (t) => {
  const { dir, close, responses } = await sealedHistory(t);
  await close();
  const target = rows(dir).find((row) => row.data.includes(responses[1]!.marker))!;
  const file = join(dir, DATABASE_FILE);
  const bytes = readFileSync(file);
  // Wherever it is: in the event, and in the read model the projections made of it.
  let found = 0;
  for (let at = bytes.indexOf(responses[1]!.marker); at >= 0; at = bytes.indexOf(responses[1]!.marker, at + 1)) {
    bytes[at + 10]! ^= 1;
    found++;
  }
  t.ok(found > 0, 'the payload is in the file');
  writeFileSync(file, bytes);
  const { code, stderr, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(target.position), stream: target.stream_id, type: 'ResponseSubmitted', problem: /changed since it was sealed/ });
  t.match(stderr, new RegExp(`broken at position ${target.position} \\(stream ${target.stream_id}`));
});

t.test('deleting a sealed event: exit 1 naming its position', async (t) => {
  const { dir, close, responses } = await sealedHistory(t);
  await close();
  const target = rows(dir).find((row) => row.data.includes(responses[2]!.marker))!;
  const db = openFile(dir);
  db.prepare('DELETE FROM events WHERE position = ?').run(target.position);
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(target.position), stream: target.stream_id, problem: /deleted/ });
});

t.test('deleting a seal: exit 1 naming the seal', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const first = rows(dir).find((row) => row.stream_id === SEAL_STREAM)!;
  const db = openFile(dir);
  db.prepare('DELETE FROM events WHERE position = ?').run(first.position);
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(first.position), stream: SEAL_STREAM });
});

t.test('events removed from the end, the last seal among them, or every event: exit 1 naming where the store now ends', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const seals = rows(dir).filter((row) => row.stream_id === SEAL_STREAM);
  const last = seals.at(-1)!;
  const end = rows(dir).at(-1)!.position;
  const cut = `${dir}-cut`;
  cpSync(dir, cut, { recursive: true });
  t.teardown(() => rmSync(cut, { recursive: true, force: true }));
  const db = openFile(cut);
  db.prepare('DELETE FROM events WHERE position >= ?').run(last.position);
  db.close();
  const tail = await verifyRun(cut);
  t.equal(tail.code, 1);
  t.match(tail.result.break, { position: String(last.position), problem: new RegExp(`gave out positions up to ${end} and holds none after ${last.position - 1}`) });
  t.match(tail.stderr, new RegExp(`broken at position ${last.position} `));

  const wiped = openFile(dir);
  wiped.prepare('DELETE FROM events').run();
  wiped.close();
  const none = await verifyRun(dir);
  t.equal(none.code, 1, 'an emptied store is not an empty history');
  t.match(none.result.break, { position: '1', problem: new RegExp(`gave out positions up to ${end} and holds none after 0`) });
});

t.test('a store file without its events table (dropped, or another program\'s database) is refused, and nothing is written to it', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const db = openFile(dir);
  db.exec('DROP TABLE events');
  db.close();
  const foreign = tempDir(t, 'foreign');
  const other = openFile(foreign);
  other.exec('CREATE TABLE x (a); INSERT INTO x VALUES (1)');
  other.close();
  for (const [name, where] of [['dropped', dir], ['foreign', foreign]] as const) {
    const before = readFileSync(join(where, DATABASE_FILE));
    for (const command of [['verify'], ['audit', '--object', 'wgt_01J000000000000000000000AB'], ['events'], ['status']]) {
      const run = await admin(command, { DATA_DIR: where });
      t.equal(run.code, 1, `${name}: ${command[0]}`);
      t.match(run.stderr, /holds no event store \(no events table\)/, `${name}: ${command[0]} says why`);
    }
    t.same(readFileSync(join(where, DATABASE_FILE)), before, `${name}: the file is as it was`);
  }
  t.notOk(existsSync(join(foreign, 'secret')), 'no secret made beside it');
});

t.test('a revision that is not a whole number: exit 1 naming its position as a break, one line, read here or on threads', async (t) => {
  const { dir, close, responses } = await sealedHistory(t);
  await close();
  const target = rows(dir).find((row) => row.data.includes(responses[1]!.marker))!;
  for (const revision of ['abc', 2.5, -1]) {
    const copy = `${dir}-${String(revision)}`;
    cpSync(dir, copy, { recursive: true });
    t.teardown(() => rmSync(copy, { recursive: true, force: true }));
    const db = openFile(copy);
    db.prepare('UPDATE events SET revision = ? WHERE position = ?').run(revision, target.position);
    db.close();
    const run = await verifyRun(copy);
    t.equal(run.code, 1, String(revision));
    t.match(run.result, { verified: false, break: { position: String(target.position), stream: target.stream_id, type: '(unreadable)', problem: /^holds a revision that is not a whole number from 0 up/ } });
    t.match(run.stderr, new RegExp(`broken at position ${target.position} \\(stream ${target.stream_id}, \\(unreadable\\)\\): holds a revision that is not a whole number from 0 up`), String(revision));
    t.notMatch(run.stderr, /\n\s+at /, 'no stack');
    const store = openSqliteEventStore(copy);
    await t.rejects(verifyHistory(store, { leaves: leavesInThreads(copy) }), { name: 'UnreadableRecord', position: BigInt(target.position), streamId: target.stream_id }, 'on threads too');
    await store.close();
  }
});

t.test('verify run on a copy of the store file alone makes no secret beside it', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const bare = tempDir(t, 'bare');
  cpSync(join(dir, DATABASE_FILE), join(bare, DATABASE_FILE));
  t.equal((await verifyRun(bare)).code, 0);
  t.notOk(existsSync(join(bare, 'secret')));
});

t.test('a seal one of whose lines was changed: exit 1 naming the seal, not the intact event that line stood for', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  for (const which of ['first', 'last'] as const) {
    const seals = rows(dir).filter((row) => row.stream_id === SEAL_STREAM);
    const seal = which === 'first' ? seals[0]! : seals.at(-1)!;
    const events = JSON.parse(seal.data).events as string;
    // One character of the first line's leaf (position, tab, leaf) turned to another.
    const at = events.indexOf('\t') + 1;
    const flipped = events.slice(0, at) + (events[at] === 'A' ? 'B' : 'A') + events.slice(at + 1);
    const db = openFile(dir);
    db.prepare('UPDATE events SET data = ? WHERE position = ?').run(seal.data.replace(JSON.stringify(events).slice(1, -1), JSON.stringify(flipped).slice(1, -1)), seal.position);
    db.close();
    const { code, result } = await verifyRun(dir);
    t.equal(code, 1, which);
    t.match(result.break, { position: String(seal.position), stream: SEAL_STREAM, problem: /changed after it was made: its hash does not match/ }, which);
    const restore = openFile(dir);
    restore.prepare('UPDATE events SET data = ? WHERE position = ?').run(seal.data, seal.position);
    restore.close();
    t.equal((await verifyRun(dir)).code, 0, `${which}: put back, it verifies`);
  }
});

t.test('a seal whose count of events was changed: exit 1 naming the seal', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const last = rows(dir).filter((row) => row.stream_id === SEAL_STREAM).at(-1)!;
  const count = JSON.parse(last.data).count as number;
  const db = openFile(dir);
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(last.data.replace(`"count":${count}`, `"count":${count + 1}`), last.position);
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(last.position), stream: SEAL_STREAM, problem: new RegExp(`says it covers ${count + 1} events, and lists ${count}`) });
});

t.test('swapping two events: exit 1 naming the first of them', async (t) => {
  const { dir, close, responses } = await sealedHistory(t);
  await close();
  const all = rows(dir);
  const a = all.find((row) => row.data.includes(responses[0]!.marker))!;
  const b = all.find((row) => row.data.includes(responses[3]!.marker))!;
  const db = openFile(dir);
  // Their places in the feed exchanged, every byte of each kept.
  db.transaction(() => {
    db.prepare('UPDATE events SET position = -1 WHERE position = ?').run(a.position);
    db.prepare('UPDATE events SET position = ? WHERE position = ?').run(a.position, b.position);
    db.prepare('UPDATE events SET position = ? WHERE position = -1').run(b.position);
  })();
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(a.position), stream: b.stream_id, problem: /moved, swapped or replaced/ });
});

t.test('renumbering the events of one stream (their revisions swapped, every other byte kept): exit 1 naming the first', async (t) => {
  const { dir, close, widgets } = await sealedHistory(t);
  await close();
  const stream = rows(dir).filter((row) => row.stream_id === `widget-${widgets[0]}`);
  t.ok(stream.length >= 2, 'the widget was created, then published');
  const [a, b] = stream;
  const db = openFile(dir);
  // As a widget published before it was created: a replay of the stream in revision order would no longer read as it was written.
  db.transaction(() => {
    db.prepare('UPDATE events SET revision = -1 WHERE position = ?').run(a!.position);
    db.prepare('UPDATE events SET revision = 0 WHERE position = ?').run(b!.position);
    db.prepare('UPDATE events SET revision = 1 WHERE position = ?').run(a!.position);
  })();
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(a!.position), stream: a!.stream_id, type: a!.type, problem: /sealed as revision 0 of widget-.*, it is now revision 1: the stream's events were renumbered/ });
});

t.test('a chain begun by seals of version 1 (without revisions) and carried on by versions 2 and 3 verifies, and a change under any is found', async (t) => {
  const service = await live(t);
  const widget = await publishedWidget(service.app, service.who);
  const append = (data: Record<string, unknown>, version: number, expected: 'no_stream' | bigint) =>
    service.services.events.append(SEAL_STREAM, [{ type: 'LogSealed', data, metadata: { schema_version: version, occurred_at: data.sealed_at, actor: 'service' } }], expected);
  const first = await submit(service.app, widget);
  // The first seal as the code before version 2 made it: lines without revisions, a hash without a version.
  const records = await service.services.events.readFeed({ after: 0n, limit: 1000 });
  const events = records.map((record) => formatLine({ position: record.position, leaf: leafOf(record), stream: record.streamId, type: record.type }, 1)).join('\n');
  const through = records.at(-1)!.position;
  const hash = sealHash({ version: 1, seal: 0, previous: null, from: 0n, through, events });
  await append({ seal: 0, from: '0', through: String(through), count: records.length, events, previous: null, hash, sealed_at: new Date().toISOString() }, 1, 'no_stream');
  // The second as the code before version 3 made it: lines with revisions, a hash without the seal's time.
  const second = await submit(service.app, widget);
  const later = await service.services.events.readFeed({ after: through, limit: 1000 });
  const events2 = later.map((record) => formatLine({ position: record.position, leaf: leafOf(record), stream: record.streamId, revision: record.revision, type: record.type }, 2)).join('\n');
  const through2 = later.at(-1)!.position;
  const hash2 = sealHash({ version: 2, seal: 1, previous: hash, from: through, through: through2, events: events2 });
  await append({ seal: 1, from: String(through), through: String(through2), count: later.length, events: events2, previous: hash, hash: hash2, sealed_at: new Date().toISOString() }, 2, 0n);
  const third = await submit(service.app, widget);
  await service.services.seals.sealAll();
  const all = rows(service.dir);
  const seals = await service.services.events.readStream(SEAL_STREAM);
  t.same(seals.map((seal) => seal.metadata.schema_version), [1, 2, 3], 'one seal of each version');
  const clean = await verifyHistory(service.services.events);
  t.equal(clean.firstBreak, undefined, 'the chain holds across the versions');
  t.equal(clean.seals, 3);

  const db = openFile(service.dir);
  t.teardown(() => db.close());
  const update = db.prepare('UPDATE events SET data = ? WHERE position = ?');
  for (const [version, marker] of [first.marker, second.marker, third.marker].entries()) {
    const row = all.find((r) => r.data.includes(marker))!;
    update.run(flipped(row.data), row.position);
    t.equal((await verifyHistory(service.services.events)).firstBreak?.position, BigInt(row.position), `a byte flipped under the seal of version ${version + 1}`);
    update.run(row.data, row.position);
  }
  // A seal passed off as one of the version before it: its lines no longer read, or its hash no longer matches.
  const sealRows = all.filter((row) => row.stream_id === SEAL_STREAM);
  const relabel = db.prepare("UPDATE events SET metadata = replace(metadata, '\"schema_version\":' || ?, '\"schema_version\":' || ?) WHERE position = ?");
  for (const version of [2, 3]) {
    const seal = sealRows[version - 1]!;
    relabel.run(String(version), String(version - 1), seal.position);
    t.equal((await verifyHistory(service.services.events)).firstBreak?.position, BigInt(seal.position), `a seal of version ${version} labelled version ${version - 1}`);
    relabel.run(String(version - 1), String(version), seal.position);
  }
  t.equal((await verifyHistory(service.services.events)).firstBreak, undefined, 'put back, the chain holds again');
});

t.test("the last seal's time changed: exit 1 naming the seal, though no later seal covers it, and put back it verifies", async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const last = rows(dir).filter((row) => row.stream_id === SEAL_STREAM).at(-1)!;
  const noted = await verifyRun(dir);
  t.equal(noted.code, 0);
  const data = JSON.parse(last.data) as { sealed_at: string };
  const earlier = { ...data, sealed_at: new Date(Date.parse(data.sealed_at) - 86_400_000).toISOString() };
  const db = openFile(dir);
  t.teardown(() => db.close());
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(JSON.stringify(earlier), last.position);
  const { code, result } = await verifyRun(dir, ['--expect', noted.result.last_seal_hash]);
  t.equal(code, 1);
  t.match(result.break, { position: String(last.position), stream: SEAL_STREAM, type: 'LogSealed', problem: /was changed after it was made: its hash does not match its contents/ });
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(last.data, last.position);
  t.equal((await verifyRun(dir, ['--expect', noted.result.last_seal_hash])).code, 0);
});

t.test('swapping two payloads of one type: exit 1 naming the first', async (t) => {
  const { dir, close, responses } = await sealedHistory(t);
  await close();
  const all = rows(dir);
  const a = all.find((row) => row.data.includes(responses[1]!.marker))!;
  const b = all.find((row) => row.data.includes(responses[2]!.marker))!;
  const db = openFile(dir);
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(b.data, a.position);
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(a.data, b.position);
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(a.position), type: 'ResponseSubmitted' });
});

t.test('an event inserted inside a sealed range: exit 1 naming it', async (t) => {
  // No seal before the erasure: the erased response leaves a position that no seal line names.
  const { dir, app, who, services, close } = await live(t, undefined, { SEALS: 'off' });
  const widget = await publishedWidget(app, who);
  const response = await submit(app, widget);
  // Erased before any seal covered it: a free position inside the range the next seal covers.
  const free = rows(dir).find((row) => row.data.includes(response.marker))!.position;
  await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widget, ids: [response.id] } });
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await submit(app, widget);
  await services.seals.sealAll();
  await close();
  t.equal((await verifyRun(dir)).code, 0, 'an erasure before sealing leaves nothing to explain');

  const db = openFile(dir);
  db.prepare("INSERT INTO events (position, id, stream_id, revision, type, data, metadata, recorded_at) VALUES (?, 'forged', 'widget-forged', 0, 'WidgetDeleted', '{}', '{}', '2026-01-01T00:00:00.000Z')").run(free);
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(free), stream: 'widget-forged', problem: /inserted/ });
});

t.test('lawful erasure keeps the chain whole: exit 0, the erased events counted', async (t) => {
  const { dir, app, who, services, close, widgets, responses } = await sealedHistory(t);
  const before = rows(dir);
  // One response by request, then a whole widget with its responses.
  const bulk = await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widgets[0], ids: [responses[0]!.id] } });
  t.ok(bulk.statusCode < 300, bulk.body);
  const deleted = await app.inject({ method: 'DELETE', url: `/api/widgets/${widgets[1]}`, headers: who.headers });
  t.ok(deleted.statusCode < 300, deleted.body);
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await services.seals.sealAll();
  await close();
  const after = rows(dir);
  const gone = before.filter((row) => !after.some((kept) => kept.position === row.position));
  t.ok(gone.some((row) => row.data.includes(responses[0]!.marker)), 'the response asked for is gone');
  t.ok(gone.some((row) => row.data.includes(responses[2]!.marker)), 'and those of the deleted widget');
  const { code, result, stderr } = await verifyRun(dir);
  t.equal(code, 0, stderr);
  t.equal(result.erased, gone.filter((row) => row.position < before.find((r) => r.stream_id === SEAL_STREAM && r.position > row.position)!.position).length, 'each sealed event erased is counted');

  const db = openFile(dir);
  // The same kind of removal, recorded by no erasure.
  const victim = after.find((row) => row.data.includes(responses[1]!.marker))!;
  db.prepare('DELETE FROM events WHERE stream_id = ?').run(victim.stream_id);
  db.close();
  const tampered = await verifyRun(dir);
  t.equal(tampered.code, 1, 'a deletion no erasure records is a break');
  t.match(tampered.result.break, { position: String(victim.position), problem: /no recorded erasure/ });
});

t.test('a backlog sealed at once (seals after all the events they cover) verifies, and a change deep in it is found', async (t) => {
  const services = await testServices(t, { sealing: { everyEvents: 1000, everyMs: 3_600_000 } });
  const meta = { occurred_at: '2026-11-01T00:00:00.000Z', actor: 'test' };
  const count = 12_000;
  for (let done = 0; done < count; done += 1000) {
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        services.events.append(`account-backlog${done + i}`, [catalog.serialize({ type: 'AccountOpened', data: { account_id: `acc_backlog${done + i}`, name: 'Backlog', plan: 'free', opened_at: meta.occurred_at } } as never, meta)], 'no_stream'),
      ),
    );
  }
  t.equal(await services.seals.sealAll(), 12, 'twelve seals, all after the 12,000 events');
  const whole = await verifyHistory(services.events);
  t.match(whole, { firstBreak: undefined, events: count + 12, sealed: count, unsealed: 12 });

  const db = openFile(services.config.DATA_DIR);
  t.teardown(() => db.close());
  const target = db.prepare('SELECT position, data FROM events WHERE position = ?').get(11_500) as { position: number; data: string };
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(flipped(target.data), target.position);
  t.equal((await verifyHistory(services.events)).firstBreak?.position, 11_500n, 'a change in the eleventh seal’s range is named at its position');
});

t.test('on threads, in ranges of positions, verify finds what it finds in one: the same figures and the same first break, gaps included', async (t) => {
  const services = await testServices(t, { sealing: { everyEvents: 1000, everyMs: 3_600_000 } });
  const meta = { occurred_at: '2026-11-01T00:00:00.000Z', actor: 'test' };
  const count = 3000;
  for (let done = 0; done < count; done += 500) {
    await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        services.events.append(`account-ranges${done + i}`, [catalog.serialize({ type: 'AccountOpened', data: { account_id: `acc_ranges${done + i}`, name: 'Ranges', plan: 'free', opened_at: meta.occurred_at } } as never, meta)], 'no_stream'),
      ),
    );
  }
  t.equal(await services.seals.sealAll(), 3);
  const dir = services.config.DATA_DIR;
  // Ranges of 8 positions over three threads: many ranges, a range boundary inside every seal, and a last range only partly filled (3003 events).
  const threaded = () => verifyHistory(services.events, { leaves: leavesInThreads(dir, { threads: 3, range: 8, ahead: 2 }) });
  const whole = await verifyHistory(services.events);
  t.match(whole, { firstBreak: undefined, events: count + 3, sealed: count, unsealed: 3, seals: 3 });
  t.same(await threaded(), whole, 'an untouched history');

  const db = openFile(dir);
  t.teardown(() => db.close());
  db.prepare('UPDATE events SET revision = 1 WHERE position = 700').run();
  const renumbered = await verifyHistory(services.events);
  t.equal(renumbered.firstBreak?.position, 700n, 'an event renumbered in its stream');
  t.same(await threaded(), renumbered, 'the same break on threads');
  db.prepare('UPDATE events SET revision = 0 WHERE position = 700').run();
  // A hole of 25 positions, two ranges of it empty, then a change further on.
  db.prepare('DELETE FROM events WHERE position BETWEEN 1191 AND 1215').run();
  const later = db.prepare('SELECT data FROM events WHERE position = 2345').get() as { data: string };
  db.prepare('UPDATE events SET data = ? WHERE position = 2345').run(flipped(later.data));
  const broken = await verifyHistory(services.events);
  t.equal(broken.firstBreak?.position, 1191n, 'the first of the deleted events');
  t.same(await threaded(), broken, 'the same break and figures on threads');
  t.equal(broken.events, count + 3 - 25);
});

t.test('an event put by hand far past the others in a history of 50,000 (where verify reads on threads): read as it is, not range by range up to it', async (t) => {
  const services = await testServices(t);
  const meta = { occurred_at: '2026-11-01T00:00:00.000Z', actor: 'test' };
  for (let done = 0; done < 50_000; done += 1000) {
    await Promise.all(
      Array.from({ length: 1000 }, (_, i) =>
        services.events.append(`account-far${done + i}`, [catalog.serialize({ type: 'AccountOpened', data: { account_id: `acc_far${done + i}`, name: 'Far', plan: 'free', opened_at: meta.occurred_at } } as never, meta)], 'no_stream'),
      ),
    );
  }
  const dir = services.config.DATA_DIR;
  const db = openFile(dir);
  const stored = (db.prepare('SELECT count(*) AS n FROM events').get() as { n: number }).n;
  db.prepare("INSERT INTO events (position, id, stream_id, revision, type, data, metadata, recorded_at) SELECT 4503599627370496, 'far', 'account-far', 0, type, data, metadata, recorded_at FROM events WHERE position = 10").run();
  db.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 0);
  t.match(result, { verified: true, events: stored + 1, unsealed: stored + 1 }, 'every event, the far one among them, none sealed yet');
});

t.test('a verify thread that cannot open the store fails the verify, saying why', async (t) => {
  const services = await testServices(t);
  const meta = { occurred_at: '2026-11-01T00:00:00.000Z', actor: 'test' };
  await services.events.append('account-unopened', [catalog.serialize({ type: 'AccountOpened', data: { account_id: 'acc_unopened', name: 'Unopened', plan: 'free', opened_at: meta.occurred_at } } as never, meta)], 'no_stream');
  const nowhere = join(services.config.DATA_DIR, 'feedback.db', 'not-a-directory');
  await t.rejects(verifyHistory(services.events, { leaves: leavesInThreads(nowhere, { threads: 2, range: 8 }) }), /verify thread.*(unable to open|SQLITE_CANTOPEN|ENOTDIR|not a directory)/i);
});

t.test('on threads, a lawful erasure inside a thread’s range verifies as in one walk, and a deletion no erasure records breaks at the same position', async (t) => {
  const { dir, app, who, services, close, widgets, responses } = await sealedHistory(t);
  const bulk = await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widgets[0], ids: [responses[0]!.id] } });
  t.ok(bulk.statusCode < 300, bulk.body);
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await services.seals.sealAll();
  // Ranges of 4 positions on two threads: the erased event, its ResponsesErased record and the seals each fall in a thread's range.
  const threaded = () => verifyHistory(services.events, { leaves: leavesInThreads(dir, { threads: 2, range: 4, ahead: 2 }) });
  const whole = await verifyHistory(services.events);
  t.match(whole, { firstBreak: undefined });
  t.ok(whole.erased > 0, 'the erased response is counted');
  t.same(await threaded(), whole, 'the same figures on threads');

  const db = openFile(dir);
  t.teardown(() => db.close());
  const victim = rows(dir).find((row) => row.data.includes(responses[1]!.marker))!;
  db.prepare('DELETE FROM events WHERE stream_id = ?').run(victim.stream_id);
  const broken = await verifyHistory(services.events);
  t.match(broken.firstBreak, { position: BigInt(victim.position), problem: /no recorded erasure/ });
  t.same(await threaded(), broken, 'the same break on threads');
  await close();
});

t.test('on threads, events appended after the walk began are read and checked too', async (t) => {
  const { dir, app, services, widgets } = await sealedHistory(t);
  const before = await verifyHistory(services.events);
  const inner = leavesInThreads(dir, { threads: 2, range: 4, ahead: 2 });
  let appended = 0;
  // The threads are given the head as it stood; two responses and a seal come after it, before the walk reads a range.
  const appending = (after: bigint, through: bigint) =>
    (async function* () {
      await submit(app, widgets[0]!);
      await submit(app, widgets[0]!);
      await services.seals.sealAll();
      appended = Number((await services.events.headPosition()) - through);
      yield* inner(after, through);
    })();
  const threaded = await verifyHistory(services.events, { leaves: appending });
  t.ok(appended > 2, `${appended} events appended after the head the threads were given`);
  t.match(threaded, { firstBreak: undefined, events: before.events + appended, seals: before.seals + 1 }, 'the appended events and their seal are counted and checked');
  t.same(threaded, await verifyHistory(services.events), 'the same figures as a walk that began after them');
});

t.test('an erasure stopped halfway through its deletion leaves verify at 0, and the next start deletes what it recorded', async (t) => {
  const { dir, close, widgets, responses, who } = await sealedHistory(t);
  await close();
  const services = await testServices(t, { dataDir: dir });
  // The process stops after the first stream it deletes.
  const deleteStreams = services.events.deleteStreams.bind(services.events);
  const events = new Proxy(services.events, {
    get(target, property) {
      if (property === 'deleteStreams') {
        return async (streams: string[]) => {
          await deleteStreams(streams.slice(0, 1));
          throw new Error('the process stopped here');
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const stopped = new ErasureProcess(events, services.readModels, catalog, services.clock, silent);
  await stopped.init();
  const now = new Date().toISOString();
  await services.events.append(`widget-${widgets[0]}`, [catalog.serialize({ type: 'WidgetDeleted', data: { widget_id: widgets[0]!, account_id: who.accountId, deleted_at: now } }, { occurred_at: now, actor: who.keyId })], 'any');
  await t.rejects(stopped.catchUp(), /stopped here/);
  await services.close();
  const ofFirst = [responses[0]!, responses[1]!, responses[4]!];
  const held = () => ofFirst.filter((response) => rows(dir).some((row) => row.data.includes(response.marker))).length;
  t.ok(held() > 0 && held() < 3, `some of the widget's responses are deleted, some not yet (${held()} left)`);

  const interrupted = await verifyRun(dir);
  t.equal(interrupted.code, 0, interrupted.stderr);
  t.ok(interrupted.result.erased >= 1, 'what was deleted counts as erased: a record names it');
  t.ok(held() > 0, 'verify read the history as the stop left it');

  const restarted = await live(t, dir);
  t.ok(await restarted.services.reach.erasure(await restarted.services.events.headPosition(), 10_000));
  await restarted.close();
  t.equal(held(), 0, 'the next start deleted the rest');
  const finished = await verifyRun(dir);
  t.equal(finished.code, 0, finished.stderr);
});

t.test('a stream an erasure deleted, written again and that event deleted: a break, not the earlier erasure', async (t) => {
  const { dir, app, who, services, close, widgets, responses } = await sealedHistory(t);
  const erased = await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widgets[0], ids: [responses[0]!.id] } });
  t.equal(erased.statusCode, 200, erased.body);
  const stream = `response-${responses[0]!.id}`;
  // Someone with the file lets the deleted stream be written again, writes in it, has it sealed, and deletes it.
  const db = openFile(dir);
  db.prepare('DELETE FROM deleted_streams WHERE stream_id = ?').run(stream);
  db.close();
  const [template] = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((event) => event.type === 'ResponseSubmitted' && event.data.widget_id === widgets[0]);
  const { position } = await services.events.append(stream, [{ type: 'ResponseSubmitted', data: { ...template!.data, response_id: 'rsp_smuggled' }, metadata: template!.metadata }], 'any');
  await services.seals.sealAll();
  await close();
  t.equal((await verifyRun(dir)).code, 0, 'sealed in, it verifies');
  const file = openFile(dir);
  file.prepare('DELETE FROM events WHERE position = ?').run(position);
  file.close();
  const { code, result } = await verifyRun(dir);
  t.equal(code, 1);
  t.match(result.break, { position: String(position), stream, problem: /deleted: the event was sealed, and no recorded erasure removed its stream/ });
});

t.test('a seal with a field no seal has, or its range spelt otherwise, is changed: the last one too, whose hash covers neither', async (t) => {
  const { dir, close } = await sealedHistory(t);
  await close();
  const seals = rows(dir).filter((row) => row.stream_id === SEAL_STREAM);
  const noted = (await verifyRun(dir)).result.last_seal_hash as string;
  const edits: Array<[string, (data: Record<string, unknown>) => Record<string, unknown>]> = [
    ['a field more', (data) => ({ ...data, note: 'approved' })],
    ['its end in hexadecimal', (data) => ({ ...data, through: `0x${BigInt(data.through as string).toString(16)}` })],
    ['its start with a leading zero', (data) => ({ ...data, from: `0${data.from as string}` })],
    ['its end not a number', (data) => ({ ...data, through: 'abc' })],
  ];
  for (const seal of [seals[0]!, seals.at(-1)!]) {
    for (const [what, edit] of edits) {
      const copy = tempDir(t, 'seal-shape');
      cpSync(dir, copy, { recursive: true });
      const db = openFile(copy);
      db.prepare('UPDATE events SET data = ? WHERE position = ?').run(JSON.stringify(edit(JSON.parse(seal.data))), seal.position);
      db.close();
      const run = await verifyRun(copy, ['--expect', noted]);
      t.equal(run.code, 1, `${what}, seal at ${seal.position}`);
      t.match(run.result?.break, { position: String(seal.position), stream: SEAL_STREAM, problem: /was changed after it was made/ }, `${what}, named at the seal`);
    }
  }
});
