import t from 'tap';
import { publishedWidget } from '../support/app.js';
import { admin } from '../support/processes.js';
import { live, submit } from './support.js';

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
  for (const { marker } of [...responses, elsewhere]) t.notOk(run.stdout.includes(marker), 'no answer is printed');
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
});
