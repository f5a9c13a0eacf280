import t from 'tap';
import { publishedWidget, tokenFor } from '../support/app.js';
import { admin } from '../support/processes.js';
import { live, openFile, submit } from './support.js';

t.test('admin audit --object: the object and its responses in order, erased ones included, never their content', async (t) => {
  const { dir, app, who, services, close } = await live(t);
  const widget = await publishedWidget(app, who, { title: 'Rate the checkout' });
  const other = await publishedWidget(app, who);
  const responses = [await submit(app, widget), await submit(app, widget), await submit(app, widget)];
  const elsewhere = await submit(app, other);
  await services.seals.sealAll();
  await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widget, ids: [responses[1]!.id] } });
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await close();

  const run = await admin(['audit', '--object', widget], { DATA_DIR: dir });
  t.equal(run.code, 0, run.stderr);
  const entries = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
  t.same(
    entries.map((e) => e.type),
    ['WidgetCreated', 'WidgetPublished', 'ResponseSubmitted', 'ResponseSubmitted', 'ResponseSubmitted', 'ErasureRequested', 'ResponsesErased'],
  );
  const positions = entries.map((e) => BigInt(e.position));
  t.same(positions, [...positions].sort((a, b) => (a < b ? -1 : 1)), 'in feed order');
  t.match(entries[0], { actor: who.keyId, recorded_at: String, data: { widget_id: widget, title: 'Rate the checkout' } });
  t.same(entries.filter((e) => e.type === 'ResponseSubmitted').map((e) => e.data.response_id), responses.map((r) => r.id));
  t.match(entries[3], { erased: true, recorded_at: null, data: { response_id: responses[1]!.id } }, 'the erased response: its creation from the seals');
  t.match(entries[6], { actor: who.keyId, data: { response_ids: [responses[1]!.id], count: 1, reason: 'bulk_delete' } });
  for (const { answer } of [...responses, elsewhere]) t.notOk(run.stdout.includes(answer), 'no answer is printed');
  t.notOk(run.stdout.includes(other), 'nothing of another widget');

  const table = await admin(['audit', '--object', widget, '--format', 'table'], { DATA_DIR: dir });
  t.equal(table.code, 0);
  const lines = table.stdout.trim().split('\n');
  t.match(lines[0], /^POSITION\s+RECORDED AT\s+TYPE\s+ACTOR\s+DETAILS$/);
  t.equal(lines.length, entries.length + 1);
  t.match(lines[4], /\(erased\)\s+ResponseSubmitted/);

  const bad = await admin(['audit', '--object', widget, '--format', 'xml'], { DATA_DIR: dir });
  t.equal(bad.code, 2);
  t.match(bad.stderr, /--format must be ndjson or table/);
  const unknown = await admin(['audit', '--object', `${widget}x`], { DATA_DIR: dir });
  t.equal(unknown.code, 2, 'an id no event names is a bad argument');
  t.equal(unknown.stdout, '');
  t.match(unknown.stderr, new RegExp(`no event in the history concerns ${widget}x`));
  // A response's id, kept or erased: not "no event", but whose trail lists it.
  for (const response of [responses[0]!, responses[1]!]) {
    const asked = await admin(['audit', '--object', response.id], { DATA_DIR: dir });
    t.equal(asked.code, 2);
    t.match(asked.stderr, new RegExp(`${response.id} is a response's or vote's id: --object takes the id of a widget, form or poll; the trail of ${widget} lists it \\(admin audit --object ${widget}\\)`));
  }
});

t.test('admin audit --object finds an event whose JSON spells the id with \\u escapes, and skips the rest unparsed', async (t) => {
  const { dir, app, who, close } = await live(t);
  const widget = await publishedWidget(app, who);
  const other = await publishedWidget(app, who);
  await close();
  // JSON may write any character as \uXXXX; a writer other than this service's might.
  const escaped = JSON.stringify(widget).replace(/[a-z]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const db = openFile(dir);
  const published = db.prepare("SELECT position, data FROM events WHERE type = 'WidgetPublished' AND data LIKE ?").get(`%${widget}%`) as { position: number; data: string };
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(published.data.replace(JSON.stringify(widget), escaped), published.position);
  // An event of another object that no longer parses: the audit of this one does not need to read it.
  const broken = db.prepare("SELECT position FROM events WHERE type = 'WidgetCreated' AND data LIKE ?").get(`%${other}%`) as { position: number };
  db.prepare("UPDATE events SET data = '{not json' WHERE position = ?").run(broken.position);
  db.close();

  const run = await admin(['audit', '--object', widget], { DATA_DIR: dir });
  t.equal(run.code, 0, run.stderr);
  const entries = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
  t.same(entries.map((e) => e.type), ['WidgetCreated', 'WidgetPublished']);
  t.equal(entries[1].position, String(published.position));
  t.equal(entries[1].data.widget_id, widget, 'read as the id it spells');
});

t.test('a response erased before any seal covered it: sealed first, so verify counts it erased and the audit shows its creation', async (t) => {
  const { dir, app, who, services, close } = await live(t);
  const widget = await publishedWidget(app, who);
  // Sealed by hand only (the tests' setting): nothing seals the response but the erasure.
  const soon = await submit(app, widget);
  const erased = await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widget, ids: [soon.id] } });
  t.ok(erased.statusCode < 300, erased.body);
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await services.seals.sealAll();
  await close();

  const verified = await admin(['verify'], { DATA_DIR: dir });
  t.equal(verified.code, 0, verified.stderr);
  t.match(JSON.parse(verified.stdout), { verified: true, erased: 1 }, 'its hash was sealed before its stream was deleted');
  const run = await admin(['audit', '--object', widget], { DATA_DIR: dir });
  const entries = run.stdout.trim().split('\n').map((line) => JSON.parse(line));
  t.match(entries.find((e) => e.type === 'ResponseSubmitted'), { erased: true, recorded_at: null, data: { response_id: soon.id } });
  t.notOk(run.stdout.includes(soon.answer));
});

t.test('an event whose stored text is no longer JSON is named by its position when audit or rebuild meets it', async (t) => {
  const { dir, app, who, close } = await live(t);
  const widget = await publishedWidget(app, who);
  await close();
  const db = openFile(dir);
  const created = db.prepare("SELECT position, stream_id, data FROM events WHERE type = 'WidgetCreated'").get() as { position: number; stream_id: string; data: string };
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(`{${created.data.slice(2)}`, created.position);
  db.close();
  const named = new RegExp(`the stored event at position ${created.position} \\(stream ${created.stream_id}\\) holds data that is not JSON`);
  const audited = await admin(['audit', '--object', widget], { DATA_DIR: dir });
  t.equal(audited.code, 1);
  t.match(audited.stderr, named);
  const rebuilt = await admin(['rebuild'], { DATA_DIR: dir });
  t.equal(rebuilt.code, 1);
  t.match(rebuilt.stderr, named);
});

t.test('a seal whose lines were edited out of shape is named by its number and position when audit meets it', async (t) => {
  const { dir, app, who, services, close } = await live(t);
  const widget = await publishedWidget(app, who);
  const response = await submit(app, widget);
  await services.seals.sealAll();
  // An erased response: the audit reads the seals for what it was.
  const gone = await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widget, ids: [response.id] } });
  t.equal(gone.statusCode, 200, gone.body);
  await close();
  const db = openFile(dir);
  const seal = db.prepare("SELECT position, data FROM events WHERE stream_id = 'seals' ORDER BY position").get() as { position: number; data: string };
  const data = JSON.parse(seal.data) as { events: string };
  db.prepare('UPDATE events SET data = ? WHERE position = ?').run(JSON.stringify({ ...data, events: `not a line\n${data.events}` }), seal.position);
  db.close();
  const audited = await admin(['audit', '--object', widget], { DATA_DIR: dir });
  t.equal(audited.code, 1);
  t.match(audited.stderr, new RegExp(`seal 0 \\(position ${seal.position}\\): line 1 of the seal is malformed`));
});

t.test('an erased response’s duplicate guard stays in the audit as the seals keep it, at the place it had', async (t) => {
  const { dir, app, who, services, close } = await live(t);
  const widget = await publishedWidget(app, who, { settings: { prevent_duplicates: true } });
  // Two visitors, each on a network of their own.
  const visit = async (visitor: number) => {
    const reply = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, remoteAddress: `198.51.100.${visitor}`, payload: { answers: { rating: 4 }, _token: await tokenFor(app, 'widgets', widget), metadata: { fingerprint: `visitor-${visitor}` } } });
    t.equal(reply.statusCode, 200, reply.body);
    return { id: reply.json().id as string };
  };
  const responses = [await visit(1), await visit(2)];
  await services.seals.sealAll();
  const trail = async () => {
    const run = await admin(['audit', '--object', widget], { DATA_DIR: dir });
    t.equal(run.code, 0, run.stderr);
    return run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { position: string; type: string; data: { response_id?: string }; erased?: boolean });
  };
  const before = await trail();
  const guarded = before.filter((e) => e.type === 'SubmissionGuarded');
  t.same(guarded.map((e) => e.data.response_id), responses.map((r) => r.id), 'each response has its guard');
  await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { widgetId: widget, ids: [responses[0]!.id] } });
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await close();

  const after = await trail();
  const kept = (entries: typeof before) => entries.filter((e) => e.type !== 'ErasureRequested' && e.type !== 'ResponsesErased').map((e) => [e.position, e.type, e.data.response_id ?? null]);
  t.same(kept(after), kept(before), 'the same events at the same places, the erased response’s guard included');
  t.same(
    after.filter((e) => e.erased).map((e) => [e.type, e.data.response_id]),
    before.filter((e) => e.data.response_id === responses[0]!.id).map((e) => [e.type, responses[0]!.id]),
    'what erasure removed, marked erased',
  );
});

t.test('an erased vote’s duplicate guard, in the vote’s own stream, stays in the audit as the seals keep it', async (t) => {
  const { dir, app, who, services, close } = await live(t);
  const created = await app.inject({ method: 'POST', url: '/api/polls', headers: who.headers, payload: { question: 'Best fruit?', options: [{ text: 'Apple' }, { text: 'Pear' }] } });
  t.equal(created.statusCode, 201, created.body);
  const { id: poll, options } = created.json() as { id: string; options: Array<{ id: string }> };
  t.equal((await app.inject({ method: 'PUT', url: `/api/polls/${poll}`, headers: who.headers, payload: { published: true } })).statusCode, 200);
  const voted = await app.inject({ method: 'POST', url: `/api/polls/${poll}/vote`, remoteAddress: '198.51.100.30', payload: { option_ids: [options[0]!.id], _token: await tokenFor(app, 'polls', poll), metadata: { fingerprint: 'voter-1' } } });
  t.equal(voted.statusCode, 200, voted.body);
  await services.seals.sealAll();
  const trail = async () => {
    const run = await admin(['audit', '--object', poll], { DATA_DIR: dir });
    t.equal(run.code, 0, run.stderr);
    return run.stdout.trim().split('\n').map((line) => JSON.parse(line) as { position: string; type: string; erased?: boolean });
  };
  const before = await trail();
  t.ok(before.some((e) => e.type === 'SubmissionGuarded'), 'the vote has its guard');
  const deleted = await app.inject({ method: 'DELETE', url: `/api/polls/${poll}`, headers: who.headers });
  t.ok(deleted.statusCode < 300, deleted.body);
  t.ok(await services.reach.erasure(await services.events.headPosition(), 10_000));
  await close();

  const after = await trail();
  const sealed = new Set(before.map((e) => e.position));
  t.same(after.filter((e) => sealed.has(e.position)).map((e) => [e.position, e.type]), before.map((e) => [e.position, e.type]), 'every event listed before is listed after, at its place');
  t.same(after.filter((e) => e.erased).map((e) => e.type).sort(), ['SubmissionGuarded', 'VoteCast'], 'the vote and its guard, marked erased');
});
