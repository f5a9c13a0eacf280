import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { buildApp } from '../../src/app.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { rebuildAt } from '../../src/cli/point-in-time.js';
import { POINT_IN_TIME_FILE } from '../../src/seals/point-in-time.js';
import { publishedWidget } from '../support/app.js';
import { signIn } from '../dashboard/support.js';
import { admin, json } from '../support/processes.js';
import { silent, tempDir, testServices } from '../support/services.js';
import { catalog } from '../../src/domain-events.js';
import { ErasureProcess } from '../../src/erasure/process.js';
import { live, submit, type Live } from './support.js';

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('rebuild --until: the read models as they stood then, served read-only', async (t) => {
  const { dir, app, who, services, close } = await live(t);
  const widget = await publishedWidget(app, who, { title: 'Before' });
  await submit(app, widget);
  await submit(app, widget);
  // Open at the moment, closed by the time the copy is served; nothing after the moment depends on it being open still.
  const closesAt = new Date(Date.now() + 5000).toISOString();
  const closing = await publishedWidget(app, who, { title: 'Closing', settings: { closes_at: closesAt } });
  const browser = await signIn(app, services, who.accountId);
  await services.seals.sealAll();
  // The store records times in milliseconds: the moment falls strictly between the two halves.
  await pause(5);
  const until = new Date().toISOString();
  t.ok(until < closesAt, 'the moment comes before the closing time');
  await pause(5);
  await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: who.headers, payload: { title: 'After' } });
  await submit(app, widget);
  await close();

  const out = join(tempDir(t, 'then'), 'store');
  const rebuilt = json(await admin(['rebuild', '--until', until, '--out', out], { DATA_DIR: dir }));
  t.match(rebuilt, { rebuilt: true, until, out, events: Number, position: String, read_only: true });
  t.ok(existsSync(join(out, POINT_IN_TIME_FILE)));

  const tables = () => {
    const db = new Database(join(out, DATABASE_FILE), { readonly: true });
    try {
      return { names: db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").pluck().all(), used: db.prepare('SELECT count(*) FROM rm_api_key_usage').pluck().get() };
    } finally {
      db.close();
    }
  };
  const built = tables();
  while (Date.now() <= Date.parse(closesAt) + 10) await pause(20);
  const then = await testServices(t, { dataDir: out });
  t.match(then.readOnly, { until });
  await then.start();
  const served = await buildApp(then);
  t.teardown(() => served.close());
  const shown = await served.inject({ method: 'GET', url: `/api/widgets/${widget}`, headers: who.headers });
  t.equal(shown.statusCode, 200, 'the keys of the time work');
  t.equal(shown.json().title, 'Before');
  const closed = await served.inject({ method: 'GET', url: `/api/widgets/${closing}`, headers: who.headers });
  t.equal(closed.json().closed, false, 'open, as it was at the moment, though its closing time has passed since');
  const session = await served.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: browser.cookie } });
  t.equal(session.statusCode, 401, 'a dashboard session live at the moment is not taken there');
  const listed = await served.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: who.headers });
  t.equal(listed.json().responses.length, 2, 'the responses of the time');
  const command = await served.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: who.headers, payload: { title: 'Rewritten' } });
  t.equal(command.statusCode, 405);
  t.equal(command.headers.allow, 'GET, HEAD, OPTIONS');
  t.match(command.json(), { code: 'read_only', message: new RegExp(until.replace(/\./g, '\\.')) });
  t.equal((await served.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: {} })).statusCode, 405, 'nor submissions');
  const ready = await served.inject({ method: 'GET', url: '/readyz' });
  t.equal(ready.statusCode, 200, ready.body);
  t.equal(await then.events.headPosition(), BigInt(rebuilt.position), 'the copy ends at the moment');
  await served.close();
  await then.close();
  t.strictSame(tables(), built, 'serving it created no table and recorded no key use');

  const verified = await admin(['verify'], { DATA_DIR: out });
  t.equal(verified.code, 0, 'the copy keeps positions, ids and times: its seals verify');

  const later = await admin(['rebuild', '--until', new Date().toISOString(), '--out', join(tempDir(t, 'later'), 'store')], { DATA_DIR: out });
  t.equal(later.code, 2, 'a copy of the copy later than its moment is refused');
  t.match(later.stderr, /--until is after .*the moment of this copy/);
});

/** A store in a new directory, holding one account. */
/** A published widget with two responses, sealed, and a moment after them that nothing else shares. */
async function twoResponsesSealed(app: Live['app'], who: Live['who'], services: Live['services']) {
  const widget = await publishedWidget(app, who);
  const kept = await submit(app, widget);
  const gone = await submit(app, widget);
  await services.seals.sealAll();
  await pause(5);
  const until = new Date().toISOString();
  await pause(5);
  return { widget, kept, gone, until };
}

async function source(t: Test): Promise<string> {
  const dir = tempDir(t);
  t.equal((await admin(['create-account', '--name', 'Source', '--plan', 'free'], { DATA_DIR: dir })).code, 0);
  return dir;
}

/** A link to the directory, from a directory of its own. */
function linkTo(t: Test, dir: string): string {
  const link = join(tempDir(t, 'link'), 'to-data');
  symlinkSync(dir, link);
  return link;
}

t.test('rebuild --until: bad arguments are refused with exit 2', async (t) => {
  const dir = await source(t);
  const cases: Array<[string[], RegExp]> = [
    [['rebuild', '--until', '2026-11-01T00:00:00Z'], /--until and --out go together/],
    [['rebuild', '--out', join(dir, 'x')], /missing --until \(with --out/],
    [['rebuild', '--until', 'yesterday', '--out', join(dir, 'x')], /--until must be an ISO 8601 time/],
    [['rebuild', '--until', '2026-11-01T00:00:00Z', '--out', dir], /another directory than DATA_DIR/],
    // A copy keeps what is erased after it: inside DATA_DIR it would keep it where erasure promises nothing stays.
    [['rebuild', '--until', '2026-11-01T00:00:00Z', '--out', join(dir, 'copy')], /outside it/],
    [['rebuild', '--until', '2026-11-01T00:00:00Z', '--out', join(dir, 'new', 'copy')], /outside it/],
    [['rebuild', '--until', '2026-11-01T00:00:00Z', '--out', join(linkTo(t, dir), 'copy')], /outside it/],
    [['rebuild', '--until', new Date(Date.now() + 3_600_000).toISOString(), '--out', join(dir, 'x')], /is in the future/],
  ];
  for (const [args, message] of cases) {
    const run = await admin(args, { DATA_DIR: dir });
    t.equal(run.code, 2, args.join(' '));
    t.match(run.stderr, message);
  }
  t.notOk(existsSync(join(dir, 'copy')) || existsSync(join(dir, 'new')), 'nothing made inside DATA_DIR');
  // Beside it, even under a name that starts as its own does.
  const out = `${dir}..copy`;
  t.teardown(() => rmSync(out, { recursive: true, force: true }));
  t.equal((await admin(['rebuild', '--until', '2026-11-01T00:00:00Z', '--out', out], { DATA_DIR: dir })).code, 0);
  const again = await admin(['rebuild', '--until', '2026-11-01T00:00:00Z', '--out', out], { DATA_DIR: dir });
  t.equal(again.code, 2);
  t.match(again.stderr, /already holds a store/);
  t.notOk(existsSync(join(dir, 'x')), 'nothing made for a refused one');
});

t.test('rebuild --until that fails midway leaves no copy behind, which would verify as a shorter history', async (t) => {
  const dir = await source(t);
  const db = new Database(join(dir, DATABASE_FILE));
  t.equal(db.prepare("UPDATE events SET revision = 'abc' WHERE position = (SELECT max(position) FROM events)").run().changes, 1);
  db.close();
  const fresh = join(tempDir(t, 'failed'), 'store');
  const made = await admin(['rebuild', '--until', new Date().toISOString(), '--out', fresh], { DATA_DIR: dir });
  t.equal(made.code, 1);
  t.match(made.stderr, /position \d+ .*not a whole number/);
  t.notOk(existsSync(fresh), 'the directory it made is gone');
  const empty = tempDir(t, 'empty');
  t.equal((await admin(['rebuild', '--until', new Date().toISOString(), '--out', empty], { DATA_DIR: dir })).code, 1);
  t.same(readdirSync(empty), [], 'a directory given empty is left empty');
});

t.test('rebuild --until: responses erased after the moment are counted erased by verify on the copy, not taken for tampering', async (t) => {
  const { dir, app, who, services, close } = await live(t);
  const { widget, kept, gone, until } = await twoResponsesSealed(app, who, services);
  const erased = await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widget, ids: [gone.id] } });
  t.ok(erased.statusCode < 300, erased.body);
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await services.seals.sealAll();
  await close();

  const out = join(tempDir(t, 'then'), 'store');
  t.equal((await admin(['rebuild', '--until', until, '--out', out], { DATA_DIR: dir })).code, 0);
  const mark = JSON.parse(readFileSync(join(out, POINT_IN_TIME_FILE), 'utf8'));
  t.same(mark.erased_after_by_object, { [widget]: [gone.id] }, 'the copy names what was erased after its moment, by id and by the object it belonged to');
  t.notOk(readFileSync(join(out, 'feedback.db')).includes(gone.marker), 'and holds none of it');
  const verified = await admin(['verify'], { DATA_DIR: out });
  t.equal(verified.code, 0, verified.stderr);
  t.match(json(verified), { verified: true, erased: 1, point_in_time: { until: mark.until, erased_after: 1 } }, 'saying it took the copy\'s list, and how many ids it names');
  t.ok(readFileSync(join(out, 'feedback.db')).includes(kept.marker), 'what was not erased is there');
  const notACopy = await admin(['verify'], { DATA_DIR: dir });
  t.notOk('point_in_time' in json(notACopy), 'a store that is no copy says nothing of the kind');

  // The audit of the widget on the copy: the response erased since is there as the seals keep it, marked erased.
  const audited = await admin(['audit', '--object', widget], { DATA_DIR: out });
  t.equal(audited.code, 0, audited.stderr);
  const trail = audited.stdout.trim().split('\n').map((line) => JSON.parse(line) as { type: string; data: { response_id?: string }; erased?: boolean });
  const submitted = trail.filter((entry) => entry.type === 'ResponseSubmitted');
  t.same(submitted.map((entry) => [entry.data.response_id, entry.erased ?? false]), [[kept.id, false], [gone.id, true]], 'both responses, the one erased later marked so');
  t.notOk(audited.stdout.includes(gone.answer), 'never its content');
  t.notOk(trail.some((entry) => entry.type === 'ResponsesErased'), 'the erasure record itself is after the moment');

  // A copy of the copy, at the same moment: what was erased after it is gone from both and still in their seals.
  const second = join(tempDir(t, 'again'), 'store');
  t.equal((await admin(['rebuild', '--until', until, '--out', second], { DATA_DIR: out })).code, 0);
  t.same(JSON.parse(readFileSync(join(second, POINT_IN_TIME_FILE), 'utf8')).erased_after_by_object, { [widget]: [gone.id] }, 'a copy of a copy keeps the list');
  const verifiedAgain = await admin(['verify'], { DATA_DIR: second });
  t.equal(verifiedAgain.code, 0, verifiedAgain.stderr);
  t.match(json(verifiedAgain), { verified: true, erased: 1 });

  // The same copy without the ids: the erased response's sealed event is missing, unexplained.
  writeFileSync(join(out, POINT_IN_TIME_FILE), JSON.stringify({ ...mark, erased_after_by_object: {} }));
  t.equal((await admin(['verify'], { DATA_DIR: out })).code, 1);
  // As copies made before the ids were kept by object name them: one list.
  writeFileSync(join(out, POINT_IN_TIME_FILE), JSON.stringify({ ...mark, erased_after_by_object: undefined, erased_after: [gone.id] }));
  t.equal((await admin(['verify'], { DATA_DIR: out })).code, 0, 'the ids in one list, as earlier copies hold them');
});

t.test('rebuild --until while an erasure runs: what it deletes after the copy read it goes from the copy too, which verifies', async (t) => {
  const { app, who, services } = await live(t);
  const { widget, kept, gone, until } = await twoResponsesSealed(app, who, services);
  // The erasure runs between the copy's first read of the feed and the rest.
  let erased = false;
  const readFeed = services.events.readFeed.bind(services.events);
  const events = new Proxy(services.events, {
    get(target, property) {
      if (property === 'readFeed') {
        return async (options: Parameters<typeof readFeed>[0]) => {
          const page = await readFeed(options);
          if (!erased) {
            erased = true;
            const reply = await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widget, ids: [gone.id] } });
            t.equal(reply.statusCode, 200, reply.body);
            t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
            t.ok(page.some((record) => record.data.includes(gone.marker)), 'the first read took the response');
          }
          return page;
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const out = join(tempDir(t, 'racing'), 'store');
  const lines: string[] = [];
  t.equal(await rebuildAt({ ...services, events } as typeof services, { until: new Date(until), out }, (line) => lines.push(line)), 0);
  t.ok(erased);
  const mark = JSON.parse(readFileSync(join(out, POINT_IN_TIME_FILE), 'utf8'));
  t.same(mark.erased_after_by_object, { [widget]: [gone.id] }, 'the copy names it erased after its moment');
  for (const file of readdirSync(out).filter((name) => name.startsWith(DATABASE_FILE))) t.notOk(readFileSync(join(out, file)).includes(gone.marker), `${file} holds none of it`);
  t.ok(readFileSync(join(out, DATABASE_FILE)).includes(kept.marker), 'what was not erased is there');
  t.equal(mark.events, JSON.parse(lines.at(-1)!).events, 'the count of events copied is of those it holds');
  const verified = await admin(['verify'], { DATA_DIR: out });
  t.equal(verified.code, 0, verified.stderr);
  t.match(json(verified), { verified: true, erased: 1 });
});

t.test('the admin CLI refuses to append to a point-in-time copy, and to read a store that is not there', async (t) => {
  const dir = await source(t);
  const out = join(tempDir(t, 'copy'), 'store');
  t.equal((await admin(['rebuild', '--until', '2026-11-01T00:00:00Z', '--out', out], { DATA_DIR: dir })).code, 0);
  for (const args of [['create-account', '--name', 'Forked', '--plan', 'free'], ['seal']]) {
    const run = await admin(args, { DATA_DIR: out });
    t.equal(run.code, 2, args.join(' '));
    t.match(run.stderr, /as of 2026-11-01T00:00:00\.000Z, which is read-only/);
  }
  t.equal((await admin(['verify'], { DATA_DIR: out })).code, 0, 'reading it is fine');
  t.equal(json(await admin(['status'], { DATA_DIR: out })).head, '0', 'nothing was appended');

  // A mark that no longer parses, or whose lists of erased ids are not lists of ids: one line naming the file, whatever the command, and nothing appended.
  const marks = ['{"until": ', '{"until": "2026-11-01T00:00:00.000Z", "erased_after": 5}', '{"until": "2026-11-01T00:00:00.000Z", "erased_after_by_object": {"frm_x": 5}}'];
  for (const mark of marks) {
    writeFileSync(join(out, POINT_IN_TIME_FILE), mark);
    for (const args of [['seal'], ['create-key', '--account', 'acc_x', '--name', 'k'], ['verify'], ['status'], ['audit', '--object', 'frm_x']]) {
      const run = await admin(args, { DATA_DIR: out });
      t.equal(run.code, 1, `${mark}: ${args.join(' ')}`);
      t.match(run.stderr, /point-in-time\.json is not a point-in-time mark as admin rebuild --until writes it \(.*\): mend or remove it/);
      t.notMatch(run.stderr, /\n\s+at /, 'no stack');
    }
  }

  const typo = join(dir, 'no-such-store');
  for (const args of [['verify'], ['audit', '--object', 'wgt_x'], ['events'], ['rebuild']]) {
    const run = await admin(args, { DATA_DIR: typo });
    t.equal(run.code, 1, args.join(' '));
    t.match(run.stderr, /no store in DATA_DIR .*no-such-store/);
  }
  // A store cut to nothing is not an empty history that verifies, and is left as it is.
  const truncated = join(dir, 'truncated');
  mkdirSync(truncated);
  writeFileSync(join(truncated, 'feedback.db'), '');
  for (const args of [['verify'], ['audit', '--object', 'wgt_x'], ['events'], ['rebuild']]) {
    const run = await admin(args, { DATA_DIR: truncated });
    t.equal(run.code, 1, args.join(' '));
    t.match(run.stderr, /feedback\.db is empty \(0 bytes\), not a store/);
  }
  t.strictSame(readdirSync(truncated), ['feedback.db'], 'nothing written beside it');
  t.equal(statSync(join(truncated, 'feedback.db')).size, 0);
  t.notOk(existsSync(typo), 'nor is one made there');
});

t.test('rebuild --until: an --out that is a file, not empty, cannot be made or is empty text is refused with exit 2', async (t) => {
  const dir = await source(t);
  const beside = tempDir(t, 'beside');
  const file = join(beside, 'a-file');
  writeFileSync(file, 'x');
  const full = join(beside, 'full');
  mkdirSync(full);
  writeFileSync(join(full, 'secret'), 'x');
  const cases: Array<[string, RegExp]> = [
    [file, /is a file/],
    [full, /is not empty/],
    [join(file, 'below'), /cannot be made \(ENOTDIR\)/],
    ['', /--out must not be empty/],
  ];
  if (existsSync('/proc/self')) cases.push(['/proc/no-such-dir', /cannot be made/]);
  for (const [out, message] of cases) {
    const run = await admin(['rebuild', '--until', '2026-11-01T00:00:00Z', '--out', out], { DATA_DIR: dir });
    t.equal(run.code, 2, out);
    t.match(run.stderr, message, out);
  }
  t.notOk(existsSync(join(full, POINT_IN_TIME_FILE)), 'nothing left in the directory refused');
});

t.test('a copy made while an erasure is recorded and not yet carried out holds nothing it erases, recorded before the copy\'s moment or after', async (t) => {
  const { dir, app, who, services: first, close } = await live(t);
  const widget = await publishedWidget(app, who);
  const [kept, gone] = [await submit(app, widget), await submit(app, widget)];
  await first.seals.sealAll();
  await close();
  const services = await testServices(t, { dataDir: dir });
  // The erasure process stops before it deletes anything.
  const events = new Proxy(services.events, {
    get(target, property) {
      if (property === 'deleteStreams') return async () => Promise.reject(new Error('the process stopped here'));
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  const stopped = new ErasureProcess(events, services.readModels, catalog, services.clock, silent);
  await stopped.init();
  await pause(5);
  const before = new Date().toISOString();
  await pause(5);
  const now = new Date().toISOString();
  const erasure_id = 'ers_01M8300000A1B2C3D4E5F6G7H8';
  const data = { erasure_id, account_id: who.accountId, parent: 'widget' as const, parent_id: widget, response_ids: [gone.id], key_id: who.keyId, requested_at: now };
  await services.events.append(`erasure-${erasure_id}`, [catalog.serialize({ type: 'ErasureRequested', data }, { occurred_at: now, actor: who.keyId })], 'no_stream');
  await t.rejects(stopped.catchUp(), /stopped here/);
  t.equal((await services.events.readStream(`erasure-${erasure_id}`)).at(-1)?.type, 'ResponsesErased', 'the erasure is recorded');
  t.ok(readFileSync(join(dir, DATABASE_FILE)).includes(gone.marker), 'and the store still holds what it erases');
  await pause(5);
  const after = new Date().toISOString();

  for (const [moment, until, erasedAfter] of [['before', before, { [widget]: [gone.id] }], ['after', after, {}]] as const) {
    const out = join(tempDir(t, `unfinished-${moment}`), 'store');
    t.equal(await rebuildAt(services, { until: new Date(until), out }, () => undefined), 0);
    for (const file of readdirSync(out).filter((name) => name.startsWith(DATABASE_FILE))) t.notOk(readFileSync(join(out, file)).includes(gone.marker), `recorded ${moment} the moment: ${file} holds nothing of it`);
    t.ok(readFileSync(join(out, DATABASE_FILE)).includes(kept.marker), `recorded ${moment} the moment: what was not erased is there`);
    t.same(JSON.parse(readFileSync(join(out, POINT_IN_TIME_FILE), 'utf8')).erased_after_by_object, erasedAfter, `recorded ${moment} the moment: the ids erased after it`);
    const verified = await admin(['verify'], { DATA_DIR: out });
    t.equal(verified.code, 0, verified.stderr);
    t.match(json(verified), { verified: true, erased: 1 });
  }
});

t.test('a copy whose making stopped (its mark still says so) is neither verified, read nor appended to', async (t) => {
  const dir = await source(t);
  const out = join(tempDir(t, 'stopped'), 'store');
  t.equal((await admin(['rebuild', '--until', new Date().toISOString(), '--out', out], { DATA_DIR: dir })).code, 0);
  // As kill -9 during the copy leaves it: the mark written first, never replaced.
  const mark = JSON.parse(readFileSync(join(out, POINT_IN_TIME_FILE), 'utf8'));
  t.notOk('building' in mark, 'a finished copy says nothing of building');
  writeFileSync(join(out, POINT_IN_TIME_FILE), JSON.stringify({ ...mark, position: '0', events: 0, building: true }));
  for (const command of [['verify'], ['events'], ['create-account', '--name', 'X', '--plan', 'free']]) {
    const run = await admin(command, { DATA_DIR: out });
    t.equal(run.code, 1, `${command[0]}: exit 1`);
    t.match(run.stderr, /^admin: .*point-in-time copy whose making stopped before it was finished: remove it and run admin rebuild --until again\n$/, `${command[0]}: one line that says so`);
  }
});
