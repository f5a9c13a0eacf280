import type { InjectOptions } from 'fastify';
import t from 'tap';
import { owner, publishedWidget, testApp } from '../support/app.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });
const INVALID_WIDGET = { widget_type: 'no-such-type', title: 42 };

t.test('a K endpoint checks the key before it reads or validates anything of the request', async (t) => {
  const { app, services } = await testApp(t);
  const business = await owner(services);
  const readOnly = await owner(services, 'business', ['forms:read']);
  const free = await owner(services, 'free');
  const widget = await publishedWidget(app, business);

  const cases: Array<[string, InjectOptions, number, string]> = [
    ['no key, invalid body', { method: 'POST', url: '/api/widgets', payload: INVALID_WIDGET }, 401, 'unauthorized'],
    ['no key, malformed JSON', { method: 'POST', url: '/api/widgets', headers: { 'content-type': 'application/json' }, payload: '{"widget_type":' }, 401, 'unauthorized'],
    ['an unknown key, invalid query', { method: 'GET', url: '/api/widgets?limit=abc', headers: { authorization: 'Bearer svc_nope' } }, 401, 'unauthorized'],
    ['no key, a cursor longer than the schema allows', { method: 'GET', url: `/api/widgets/${widget}/responses?cursor=${'a'.repeat(600)}` }, 401, 'unauthorized'],
    ['a Free account, invalid body', { method: 'POST', url: '/api/widgets', headers: free.headers, payload: INVALID_WIDGET }, 403, 'plan_required'],
    ['a key without forms:write, invalid body', { method: 'PUT', url: `/api/widgets/${widget}`, headers: readOnly.headers, payload: { title: 42 } }, 403, 'insufficient_scope'],
    ['a good key, invalid body', { method: 'POST', url: '/api/widgets', headers: business.headers, payload: INVALID_WIDGET }, 400, 'validation_error'],
    ['a good key, invalid query', { method: 'GET', url: '/api/widgets?limit=abc', headers: business.headers }, 400, 'validation_error'],
    ['a good key, the long cursor', { method: 'GET', url: `/api/widgets/${widget}/responses?cursor=${'a'.repeat(600)}`, headers: business.headers }, 400, 'validation_error'],
  ];
  for (const [name, request, status, code] of cases) {
    const reply = await app.inject(request);
    t.equal(reply.statusCode, status, name);
    t.match(reply.json(), D3(status, code), name);
  }
});

t.test("a key's invalid requests count against its account's rate", async (t) => {
  const { app, services } = await testApp(t);
  const business = await owner(services);
  const remaining = async (payload: InjectOptions['payload']) => {
    const reply = await app.inject({ method: 'POST', url: '/api/widgets', headers: business.headers, payload });
    return { status: reply.statusCode, left: Number(reply.headers['x-ratelimit-remaining']) };
  };
  const first = await remaining(INVALID_WIDGET);
  const second = await remaining(INVALID_WIDGET);
  t.equal(first.status, 400);
  t.equal(second.status, 400);
  t.ok(Number.isInteger(first.left), 'the refusal carries the rate headers');
  t.equal(second.left, first.left - 1, 'each refused request took one from the account');
});
