import t from 'tap';
import { DEFINITION_LIMITS } from '../../src/embeddables/definition-limits.js';
import { owner, testApp } from '../support/app.js';
import { choiceQuestion, largeFormBody } from '../support/large-definitions.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

t.test('a definition past its size or choice caps is refused with 400 and what is over', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const post = (url: string, payload: object) => app.inject({ method: 'POST', url, headers: biz.headers, payload });

  const atCaps = largeFormBody();
  t.ok(Buffer.byteLength(JSON.stringify(atCaps)) > DEFINITION_LIMITS.bytes - 8 * 1024, 'the largest form allowed');
  const created = await post('/api/forms', atCaps);
  t.equal(created.statusCode, 201, 'is taken');
  const id = created.json().id;

  const tooMany = { title: 'Too many choices', questions: [...atCaps.questions.slice(0, 40), choiceQuestion('one-more', 2)] };
  const refused = await post('/api/forms', tooMany);
  t.match(refused.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.questions', message: /at most 2000 choices in all; these hold 2002/ }] }, 'one choice past the count');

  const tooHeavy = { title: 'Too heavy', description: 'd'.repeat(2000), thank_you_message: 'm'.repeat(2000), questions: [...atCaps.questions, ...Array.from({ length: 10 }, (_, i) => ({ id: `more${i}`, type: 'short_text', title: 'w'.repeat(500) }))] };
  t.match((await post('/api/forms', tooHeavy)).json(), { ...D3(400, 'validation_error'), details: [{ path: 'body', message: /at most 512 KiB as JSON/ }] }, 'past the size');

  const update = (payload: object) => app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: biz.headers, payload });
  t.match((await update({ description: 'd'.repeat(2000), thank_you_message: 'm'.repeat(2000), thank_you_title: 't'.repeat(200) })).json(), D3(400, 'validation_error'), 'an update that takes it past the size is refused too');
  t.equal((await update({ published: true })).statusCode, 200, 'one that keeps it within is not');
  t.match((await app.inject({ method: 'GET', url: '/api/forms', headers: biz.headers })).json(), { forms: [{ id, title: 'Large', published: true }], pagination: { total: 1 } }, 'nothing refused was stored');

  const widget = await post('/api/widgets', { widget_type: 'custom', title: 'Many', questions: Array.from({ length: 41 }, (_, i) => choiceQuestion(`w${i}`, 49)) });
  t.match(widget.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.questions', message: /these hold 2009/ }] }, 'widgets have the same caps');

  const { paths } = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  for (const [path, method] of [['/api/forms', 'post'], ['/api/forms/{id}', 'put'], ['/api/widgets', 'post'], ['/api/widgets/{id}', 'put']] as const) {
    t.match(paths[path][method].description, /at most 2,000 choices .* at most 512 KiB/, `the OpenAPI description of ${method.toUpperCase()} ${path} states the caps`);
  }
});
