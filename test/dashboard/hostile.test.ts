import t, { type Test } from 'tap';
import type { App } from '../../src/http/app.js';
import { manualClock, owner, testApp, tokenFor } from '../support/app.js';
import { snapshotReadModels } from '../support/services.js';
import { linkToken, postLogin, signIn, type Browser } from './support.js';

/**
 * The dashboard attacked through its public surface: whatever arrives, a
 * refusal is a 4xx in the D3 body with nothing of the inside, sets no
 * cookie, and changes nothing.
 */

interface Reply {
  statusCode: number;
  body: string;
  headers: Record<string, unknown>;
  json(): any;
}

const D3_KEYS = 'code,error,message,statusCode';
const INSIDE = /\bat .+:\d+:\d+|node_modules|src\/|Sqlite|SQLITE|ZodError|Error:/;

function refusal(reply: Reply): string | null {
  if (reply.statusCode < 400 || reply.statusCode >= 500) return `status ${reply.statusCode}`;
  let body: any;
  try {
    body = reply.json();
  } catch {
    return 'not JSON';
  }
  if (Object.keys(body).filter((k) => k !== 'details').sort().join() !== D3_KEYS || body.statusCode !== reply.statusCode) return 'not the D3 shape';
  if (INSIDE.test(reply.body)) return 'leaks the inside';
  if (reply.headers['set-cookie'] !== undefined) return 'sets a cookie';
  return null;
}

/** A 4xx in the D3 body (of that status and code when given), naming no inside, setting no cookie. */
function isRefused(t: Test, reply: Reply, name: string, status?: number, code?: string) {
  const wrong = refusal(reply) ?? (status !== undefined && reply.statusCode !== status ? `status ${reply.statusCode}` : null) ?? (code !== undefined && reply.json().code !== code ? `code ${reply.json().code}` : null);
  t.equal(wrong, null, `${name} → ${reply.statusCode} ${reply.body.slice(0, 160)}`);
}

const as = (app: App, browser: Browser) => ({
  get: (url: string, headers: Record<string, string> = {}) => app.inject({ method: 'GET', url, headers: { cookie: browser.cookie, ...headers } }),
  send: (method: string, url: string, payload?: string | object, headers: Record<string, string> = {}) =>
    app.inject({ method: method as 'POST', url, headers: { ...browser.writes, ...headers }, ...(payload !== undefined ? { payload } : {}) }),
});

async function setUp(t: Test) {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const alice = await owner(services, 'business');
  const browser = await signIn(app, services, alice.accountId);
  const me = as(app, browser);
  const widget = (await me.send('POST', '/dashboard/api/widgets', { widget_type: 'feedback', title: 'W' })).json().id as string;
  await me.send('PUT', `/dashboard/api/widgets/${widget}`, { published: true });
  await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 4 }, _token: await tokenFor(app, 'widgets', widget) } });
  const form = (await me.send('POST', '/dashboard/api/forms', { title: 'F' })).json().id as string;
  const poll = (await me.send('POST', '/dashboard/api/polls', { question: 'P?', options: [{ text: 'A' }, { text: 'B' }] })).json().id as string;
  return { app, services, clock, alice, browser, me, widget, form, poll };
}

t.test('bad query strings and ids under /dashboard/api: a D3 4xx, never a 5xx', async (t) => {
  const { app, services, me, widget, form, poll } = await setUp(t);
  const before = await snapshotReadModels(services);
  const paged = ['/dashboard/api/widgets', '/dashboard/api/forms', '/dashboard/api/polls', `/dashboard/api/widgets/${widget}/responses`, `/dashboard/api/forms/${form}/responses`];
  for (const url of paged) {
    for (const q of ['page=0', 'page=-1', 'page=abc', 'page=1.5', 'page=99999999999999999999', 'limit=0', 'limit=x', 'limit=-5', 'page=1&page=2', 'limit=%00']) {
      isRefused(t, await me.get(`${url}?${q}`), `${url}?${q}`, 400, 'validation_error');
    }
  }
  for (const url of [`/dashboard/api/widgets/${widget}/responses`, `/dashboard/api/forms/${form}/responses`, `/dashboard/api/widgets/${widget}/responses.csv`, `/dashboard/api/forms/${form}/responses.ndjson`]) {
    for (const q of ['since=yesterday', 'until=2026-13-01T00:00:00Z', 'since=2026-02-30T00:00:00Z', 'since=%00', `until=${'9'.repeat(5000)}`, 'since=2026-11-22T00:00:00Z&since=2026-11-23T00:00:00Z', 'cursor=%00']) {
      isRefused(t, await me.get(`${url}?${q}`), `${url}?${q.slice(0, 40)}`, 400, 'validation_error');
    }
  }
  isRefused(t, await me.get(`/dashboard/api/widgets/${widget}/responses.csv?page=2`), 'a download takes no page', 400, 'validation_error');
  const ids = ['x', `wgt_${'A'.repeat(5000)}`, '%00', '..%2F..%2Fauth.ts', '%E2%80%AE', "'%20OR%201=1--", '%F0%9F%92%A9', widget.toLowerCase()];
  for (const id of ids) {
    for (const [path, kind] of [['widgets', 'widget'], ['forms', 'form'], ['polls', 'poll']] as const) {
      for (const suffix of ['', '/summary', ...(kind === 'poll' ? ['/results'] : ['/responses', '/responses.csv', '/responses.ndjson'])]) {
        const reply = await me.get(`/dashboard/api/${path}/${id}${suffix}`);
        t.equal(refusal(reply), null, `GET ${path}/${id.slice(0, 24)}${suffix}: ${reply.statusCode} ${reply.body.slice(0, 120)}`);
        t.ok([400, 404].includes(reply.statusCode), `GET ${path}/${id.slice(0, 24)}${suffix} is 400 or 404`);
      }
      for (const method of ['PUT', 'DELETE']) {
        const reply = await me.send(method, `/dashboard/api/${path}/${id}`, method === 'PUT' ? { title: 'x' } : undefined);
        t.equal(refusal(reply), null, `${method} ${path}/${id.slice(0, 24)}: ${reply.statusCode}`);
      }
    }
    isRefused(t, await me.send('DELETE', `/dashboard/api/keys/${id}`), `DELETE keys/${id.slice(0, 24)}`);
  }
  isRefused(t, await me.get(`/dashboard/api/polls/${poll}/responses.csv`), 'a poll has no responses download', 404, 'not_found');
  t.strictSame(await snapshotReadModels(services), before, 'nothing changed');
  void app;
});

t.test('bad bodies on every JSON endpoint: a D3 4xx, and nothing changes', async (t) => {
  const { services, me, widget, form, poll } = await setUp(t);
  const before = await snapshotReadModels(services);
  const bodies: Array<[string, string]> = [
    ['null', 'null'],
    ['an array', '[{"title":"x","question":"x","options":[{"text":"a"},{"text":"b"}],"name":"x","widget_type":"feedback"}]'],
    ['a string', '"x"'],
    ['a number', '1'],
    ['truncated JSON', '{"title":'],
    ['wrong types', '{"title": 1, "question": [], "name": {}, "options": "a", "published": "yes", "scopes": "forms:read"}'],
    ['unknown fields', '{"title":"x","question":"x?","options":[{"text":"a"},{"text":"b"}],"name":"x","widget_type":"feedback","admin":true}'],
    ['a NUL in a text', '{"title":"a\\u0000b","question":"a\\u0000b?","options":[{"text":"a"},{"text":"b"}],"name":"a\\u0000b","widget_type":"feedback"}'],
    ['a 2 MB text', JSON.stringify({ title: 'x'.repeat(2_000_000), question: 'x'.repeat(2_000_000), name: 'x'.repeat(2_000_000) })],
    ['a long text', JSON.stringify({ title: 'x'.repeat(20_000), question: 'x'.repeat(20_000), options: [{ text: 'a' }, { text: 'b' }], name: 'x'.repeat(20_000), widget_type: 'feedback' })],
    ['a prototype key', '{"__proto__":{"published":true},"constructor":{"prototype":{"x":1}}}'],
    ['deep nesting', `${'['.repeat(5000)}${']'.repeat(5000)}`],
  ];
  const targets: Array<[string, string]> = [
    ['POST', '/dashboard/api/widgets'],
    ['POST', '/dashboard/api/forms'],
    ['POST', '/dashboard/api/polls'],
    ['POST', '/dashboard/api/keys'],
    ['PUT', `/dashboard/api/widgets/${widget}`],
    ['PUT', `/dashboard/api/forms/${form}`],
    ['PUT', `/dashboard/api/polls/${poll}`],
  ];
  for (const [method, url] of targets) {
    for (const [name, body] of bodies) {
      isRefused(t, await me.send(method, url, body, { 'content-type': 'application/json' }), `${method} ${url}: ${name}`);
    }
    isRefused(t, await me.send(method, url, 'title=x&name=x', { 'content-type': 'application/x-www-form-urlencoded' }), `${method} ${url}: a form body`, 415, 'unsupported_media_type');
    isRefused(t, await me.send(method, url, '--x\r\n\r\n--x--', { 'content-type': 'multipart/form-data; boundary=x' }), `${method} ${url}: multipart`, 415);
    isRefused(t, await me.send(method, url, '{"title":"x"}', { 'content-type': 'text/plain' }), `${method} ${url}: text/plain`, 415);
  }
  t.strictSame(await snapshotReadModels(services), before, 'nothing changed');
});

t.test('the login form: missing, repeated, oversized or foreign tokens and bodies are refused in the D3 body', async (t) => {
  const { app, services, alice } = await setUp(t);
  const token = await linkToken(services, alice.accountId);
  const post = (payload: string, contentType: string) =>
    app.inject({ method: 'POST', url: '/dashboard/login', headers: { 'content-type': contentType, 'sec-fetch-site': 'same-origin' }, payload });
  const form = 'application/x-www-form-urlencoded';
  isRefused(t, await post('', form), 'no t', 400, 'validation_error');
  isRefused(t, await post(`t=${token}&t=${token}`, form), 't twice', 400, 'validation_error');
  isRefused(t, await post(`t=forged&t=${token}`, form), 'a forged t before a genuine one', 400, 'validation_error');
  isRefused(t, await post(`t=${'a'.repeat(100_000)}`, form), 'an oversized t', 400, 'validation_error');
  isRefused(t, await post('t=%ZZ%00', form), 'a broken escape');
  isRefused(t, await post(`t=${token}`, 'text/plain'), 'text/plain', 415);
  isRefused(t, await post(`t=${token}`, `${form}; charset=utf-16`), 'another charset', 415);
  isRefused(t, await post('{"t":["x"]}', 'application/json'), 'JSON with an array t', 400, 'validation_error');
  isRefused(t, await post('[]', 'application/json'), 'a JSON array', 400, 'validation_error');
  for (const q of ['', 't=', `t=${token}&t=${token}`, `t=${'a'.repeat(10_000)}`, 't=%00']) {
    isRefused(t, await app.inject({ method: 'GET', url: `/dashboard/login?${q}` }), `GET /dashboard/login?${q.slice(0, 30)}`);
  }
  t.equal((await postLogin(app, token)).statusCode, 303, 'the link still signs in after all that');
});
