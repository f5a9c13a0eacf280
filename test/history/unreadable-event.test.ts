import { Writable } from 'node:stream';
import t from 'tap';
import { catalog } from '../../src/domain-events.js';
import { createLogger } from '../../src/services.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';
import { fixture } from '../support/fixtures.js';
import { metricsHeaders } from '../support/services.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

t.test('a stored event this version cannot read: projections halt before it, readiness says so, commands on its object answer 500 event_unreadable', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  const { app, services } = await testApp(t, { logger: createLogger({ LOG_LEVEL: 'warn' }, sink) });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz, { title: 'Before' });
  const token = await tokenFor(app, 'widgets', widget);

  // A later version of the service wrote a version of WidgetUpdated that this one does not know.
  const future = catalog.versions().filter((v) => v.type === 'WidgetUpdated').length + 1;
  const { data, metadata } = fixture('WidgetUpdated');
  const { position } = await services.events.append(`widget-${widget}`, [{ type: 'WidgetUpdated', data: { ...data, widget_id: widget }, metadata: { ...metadata, schema_version: future } }], 'any');
  t.equal(await services.projections.waitFor(position, 2 ** 31 - 1), false, 'the projections do not get past it');
  t.match(services.projections.halted, { position, streamId: `widget-${widget}`, type: 'WidgetUpdated', reason: new RegExp(`version ${future}`) });

  const created = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'nps', title: 'After' } });
  t.equal(created.statusCode, 201, 'other objects still take commands');
  const listed = (await app.inject({ method: 'GET', url: '/api/widgets', headers: biz.headers })).json().widgets;
  t.same(listed.map((w: { title: string }) => w.title), ['Before'], 'what came before it is read; nothing after it is applied');

  const ready = await app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders });
  t.equal(ready.statusCode, 503);
  t.match(ready.json(), {
    ...D3(503, 'not_ready'),
    message: new RegExp(`before event ${position} \\(WidgetUpdated of widget-${widget}\\)`),
    projections: { position: String(position - 1n), halted: { position: String(position), stream: `widget-${widget}`, type: 'WidgetUpdated', reason: new RegExp(`version ${future}`) } },
  }, 'readiness names the halt');

  const put = await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { description: 'x' } });
  t.equal(put.statusCode, 500);
  t.match(put.json(), { ...D3(500, 'event_unreadable'), message: 'A stored event of this object cannot be read by this version of the service' });
  t.notMatch(put.body, new RegExp(`schema_version|ZodError|version ${future}`), 'the reason stays in the logs');
  const submit = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 5 }, _token: token } });
  t.match(submit.json(), D3(500, 'event_unreadable'), 'an answer to it too');
  t.match((await app.inject({ method: 'DELETE', url: `/api/widgets/${widget}`, headers: biz.headers })).json(), D3(500, 'event_unreadable'), 'and its deletion');

  const logged = lines.map((line) => JSON.parse(line)).filter((line) => line.level === 50);
  t.equal(logged.filter((line) => /projections halted/.test(line.msg)).length, 1, 'the halt is logged once');
  t.match(logged.find((line) => line.code === 'event_unreadable'), { err: { message: /WidgetUpdated at position \d+ of widget-.* cannot be read: it is version \d/ } }, 'a refused command logs why');
});
