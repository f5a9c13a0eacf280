import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { App } from '../../src/app.js';
import { ALL_SCOPES, owner, testApp, tokenFor, type Owner } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { EVERY_TYPE, SENT, STORED } from '../support/every-type.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

async function publishedForm(app: App, who: Owner, body: object): Promise<string> {
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: who.headers, payload: { title: 'Your stay', questions: EVERY_TYPE, ...body } });
  if (created.statusCode !== 201) throw new Error(created.body);
  const id = created.json().id;
  const published = await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: who.headers, payload: { published: true } });
  if (published.statusCode !== 200) throw new Error(published.body);
  return id;
}

const submit = async (app: App, id: string, body: object, kind: 'forms' | 'widgets' = 'forms') =>
  app.inject({ method: 'POST', url: `/api/${kind}/${id}/submit`, headers: { 'user-agent': UA }, remoteAddress: '203.0.113.9', payload: { ...body, _token: await tokenFor(app, kind, id) } });

t.test('a form with a question of every type keeps each answer as sent, the phone number in E.164', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedForm(app, biz, { hidden_fields: ['utm_source', 'user_id'], redirect_url: 'https://example.com/thanks?r={{id}}&u={{user_id}}' });
  const form = (await app.inject({ method: 'GET', url: `/api/forms/${id}` })).json();
  t.match(form.questions, EVERY_TYPE, 'every question and its settings read back');
  t.same(form.hidden_fields, ['utm_source', 'user_id']);
  t.equal(form.redirect_url, 'https://example.com/thanks?r={{id}}&u={{user_id}}');

  const reply = await submit(app, id, { answers: SENT, hidden: { utm_source: 'newsletter', user_id: '' } });
  t.equal(reply.statusCode, 200, reply.body);
  const [response] = (await app.inject({ method: 'GET', url: `/api/forms/${id}/responses`, headers: biz.headers })).json().responses;
  t.strictSame(response.answers, STORED);
  t.strictSame(response.hidden, { utm_source: 'newsletter' }, 'a hidden field without a value is left out');

  const optional = await submit(app, id, { answers: { name: 'Bo', consent: true, extras: [], grid: {} } });
  t.equal(optional.statusCode, 200, 'empty lists and matrices of optional questions are no answer');
  const [second] = (await app.inject({ method: 'GET', url: `/api/forms/${id}/responses`, headers: biz.headers })).json().responses;
  t.strictSame(second.answers, { name: 'Bo', consent: true });
  t.notOk('hidden' in second, 'no hidden values, no field');
});

t.test('each kind of wrong answer is 400 with its detail at answers.<id>', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedForm(app, biz, { hidden_fields: ['utm_source'] });
  const wrong: Array<[string, Record<string, unknown>, string, RegExp]> = [
    ['wrong type', { guests: '2' }, 'guests', /must be a number/],
    ['not a whole number', { guests: 2.5 }, 'guests', /whole number/],
    ['number out of range', { guests: 13 }, 'guests', /at most 12/],
    ['scale out of range', { calm: 0 }, 'calm', /from 1 to 7/],
    ['nps out of range', { nps: 11 }, 'nps', /from 0 to 10/],
    ['stars out of range', { stars: 6 }, 'stars', /from 1 to 5/],
    ['text too long', { name: 'x'.repeat(101) }, 'name', /at most 100 characters/],
    ['unknown choice', { room: 'attic' }, 'room', /must be one of single, double, suite/],
    ['unknown choice in a list', { extras: ['spa'] }, 'extras', /not one of/],
    ['duplicate choice', { extras: ['late', 'late'] }, 'extras', /twice/],
    ['too many choices', { extras: ['breakfast', 'parking', 'late'] }, 'extras', /at most 2/],
    ['a choice list that is not a list', { extras: 'late' }, 'extras', /list of choice ids/],
    ['not a real date', { arrival: '2026-02-30' }, 'arrival', /real calendar day/],
    ['a date in another format', { arrival: '24/12/2026' }, 'arrival', /YYYY-MM-DD/],
    ['a date out of range', { arrival: '2025-12-31' }, 'arrival', /2026-01-01 or later/],
    ['bad phone', { phone: '12345' }, 'phone', /phone number/],
    ['bad URL', { site: 'example.com' }, 'site', /absolute http or https URL/],
    ['a javascript: URL', { site: 'javascript:alert(1)' }, 'site', /absolute http or https URL/],
    ['bad email', { email: 'ann@' }, 'email', /email address/],
    ['yes/no not a boolean', { again: 'yes' }, 'again', /true or false/],
    ['answer to a statement', { intro: 'hello' }, 'intro', /statement/],
    ['incomplete ranking', { order: ['quiet', 'price'] }, 'order', /every choice/],
    ['ranking naming a choice twice', { order: ['quiet', 'quiet', 'price'] }, 'order', /twice/],
    ['unknown matrix row', { grid: { staff: 'great', pool: 'fine' } }, 'grid', /row "pool"/],
    ['unknown matrix column', { grid: { staff: 'superb' } }, 'grid', /row staff must be one of poor, fine, great/],
    ['matrix not an object', { grid: ['great'] }, 'grid', /object of column ids by row id/],
    ['unknown severity', { bug: 'meh' }, 'bug', /one of low/],
  ];
  for (const [what, answers, question, message] of wrong) {
    const reply = await submit(app, id, { answers: { name: 'Ann', consent: true, ...answers } });
    t.equal(reply.statusCode, 400, what);
    t.match(reply.json(), { code: 'validation_error', details: [{ path: `answers.${question}`, message }] }, what);
    t.equal(reply.json().details.length, 1, `${what}: one detail`);
  }
  const undeclared = await submit(app, id, { answers: { name: 'Ann', consent: true }, hidden: { user_id: 'u-1' } });
  t.equal(undeclared.statusCode, 400);
  t.match(undeclared.json(), { code: 'validation_error', details: [{ path: 'hidden.user_id', message: /not a hidden field/ }] }, 'an undeclared hidden name');
  const long = await submit(app, id, { answers: { name: 'Ann', consent: true }, hidden: { utm_source: 'x'.repeat(501) } });
  t.match(long.json(), { statusCode: 400, details: [{ path: 'hidden.utm_source', message: /at most 500/ }] }, 'a hidden value over 500 characters');
  t.equal((await app.inject({ method: 'GET', url: `/api/forms/${id}/responses`, headers: biz.headers })).json().responses.length, 0, 'nothing was stored');
});

t.test('a required matrix needs every row; a required multiple choice at least one', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const questions = [
    { id: 'grid', type: 'matrix', title: 'Rate each', required: true, rows: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }], columns: [{ id: 'x', label: 'X' }, { id: 'y', label: 'Y' }] },
    { id: 'pick', type: 'multiple_choice', title: 'Pick', required: true, min_selected: 2, choices: [{ id: 'p', label: 'P' }, { id: 'q', label: 'Q' }, { id: 'r', label: 'R' }] },
  ];
  const id = await publishedForm(app, biz, { questions });
  t.match((await submit(app, id, { answers: { grid: { a: 'x' }, pick: ['p', 'q'] } })).json(), { statusCode: 400, details: [{ path: 'answers.grid', message: /missing b/ }] });
  t.match((await submit(app, id, { answers: { grid: { a: 'x', b: 'y' }, pick: [] } })).json(), { statusCode: 400, details: [{ path: 'answers.pick', message: 'is required' }] });
  t.match((await submit(app, id, { answers: { grid: { a: 'x', b: 'y' }, pick: ['p'] } })).json(), { statusCode: 400, details: [{ path: 'answers.pick', message: /at least 2/ }] });
  t.equal((await submit(app, id, { answers: { grid: { a: 'x', b: 'y' }, pick: ['r', 'p'] } })).statusCode, 200);
});

t.test('settings are checked when a form or widget is created or updated', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const create = (body: object) => app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'T', ...body } });
  const q = (question: object) => ({ questions: [{ id: 'q', title: 'Q', ...question }] });
  const bad: Array<[string, object, RegExp]> = [
    ['a javascript: redirect', { redirect_url: 'javascript:alert(1)' }, /body\.redirect_url/],
    ['a relative redirect', { redirect_url: '/thanks' }, /body\.redirect_url/],
    ['a hidden field name with a space', { hidden_fields: ['utm source'] }, /body\.hidden_fields/],
    ['a hidden field named twice', { hidden_fields: ['a', 'a'] }, /body\.hidden_fields/],
    ['21 hidden fields', { hidden_fields: Array.from({ length: 21 }, (_, i) => `h${i}`) }, /body\.hidden_fields/],
    ['an unknown country', q({ type: 'phone', default_country: 'XX' }), /default_country/],
    ['min above max', q({ type: 'number', min: 5, max: 1 }), /min/],
    ['an impossible date bound', q({ type: 'date', min: '2026-13-01' }), /min/],
    ['a scale from 2', q({ type: 'opinion_scale', start: 2, end: 5 }), /start/],
    ['a scale to 11', q({ type: 'opinion_scale', start: 0, end: 11 }), /end/],
    ['a required statement', q({ type: 'statement', required: true }), /required/],
    ['a matrix with one column', q({ type: 'matrix', rows: [{ id: 'r', label: 'R' }], columns: [{ id: 'c', label: 'C' }] }), /columns/],
    ['a ranking with a repeated id', q({ type: 'ranking', choices: [{ id: 'a', label: 'A' }, { id: 'a', label: 'B' }] }), /choices/],
    ['min_selected above the choices', q({ type: 'multiple_choice', min_selected: 3, choices: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }] }), /min_selected/],
    ['an unknown display', q({ type: 'single_choice', display: 'slider', choices: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }] }), /display/],
  ];
  for (const [what, body, path] of bad) {
    const reply = await create(body);
    t.equal(reply.statusCode, 400, what);
    t.match(JSON.stringify(reply.json().details), path, `${what}: the detail names the field`);
  }
  const widget = await app.inject({
    method: 'POST',
    url: '/api/widgets',
    headers: biz.headers,
    payload: { widget_type: 'custom', title: 'W', questions: EVERY_TYPE.filter((question) => question.type !== 'consent'), hidden_fields: ['user_id'], redirect_url: 'http://example.com/done' },
  });
  t.equal(widget.statusCode, 201, 'a custom widget takes every type but consent');
  const wid = widget.json().id;
  t.equal((await app.inject({ method: 'PUT', url: `/api/widgets/${wid}`, headers: biz.headers, payload: { redirect_url: 'javascript:void(0)' } })).statusCode, 400, 'nor may an update make it javascript:');
  t.equal((await app.inject({ method: 'PUT', url: `/api/widgets/${wid}`, headers: biz.headers, payload: { redirect_url: null, published: true } })).statusCode, 200, 'null takes the redirect away');
  const shown = (await app.inject({ method: 'GET', url: `/api/widgets/${wid}` })).json();
  t.match(shown, { hidden_fields: ['user_id'], redirect_url: null });
  const { consent: _c, ...widgetAnswers } = SENT;
  const reply = await submit(app, wid, { answers: widgetAnswers, hidden: { user_id: 'u-42' } }, 'widgets');
  t.equal(reply.statusCode, 200, reply.body);
  const [response] = (await app.inject({ method: 'GET', url: `/api/widgets/${wid}/responses`, headers: biz.headers })).json().responses;
  const { consent: _s, ...stored } = STORED;
  t.strictSame(response.answers, stored);
  t.strictSame(response.hidden, { user_id: 'u-42' });
  const withConsent = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'custom', title: 'W', questions: EVERY_TYPE } });
  t.equal(withConsent.statusCode, 400, 'but not consent');
});

t.test('the response.created webhook carries every answer as stored and the hidden values', async (t) => {
  const received: string[] = [];
  const server = createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => (body += chunk));
    request.on('end', () => {
      received.push(body);
      response.statusCode = 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { app, services } = await testApp(t, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const biz = await owner(services, 'business', [...ALL_SCOPES, 'webhooks:write']);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  t.equal((await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { url, events: ['response.created'] } })).statusCode, 201);
  const id = await publishedForm(app, biz, { hidden_fields: ['utm_source'] });
  t.equal((await submit(app, id, { answers: SENT, hidden: { utm_source: 'ads' } })).statusCode, 200);
  t.ok(await eventually(() => received.length > 0, { deadlineMs: 10_000 }), 'delivered');
  const payload = JSON.parse(received[0]!);
  t.strictSame(payload.data.answers, STORED);
  t.strictSame(payload.data.hidden, { utm_source: 'ads' });
});
