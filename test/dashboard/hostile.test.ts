import t, { type Test } from 'tap';
import { changePlan, revokeKey } from '../../src/accounts/commands.js';
import type { App } from '../../src/app.js';
import { manualClock, owner, testApp, tokenFor } from '../support/app.js';
import { snapshotReadModels, tempDir } from '../support/services.js';
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

t.test('an unknown path under /dashboard/api is the D3 404, with or without a session, not a page', async (t) => {
  const { app, me, widget } = await setUp(t);
  for (const url of ['/dashboard/api/nothing', '/dashboard/api/sign-out', '/dashboard/api/widgets/x/nothing', `/dashboard/api/widgets/${widget}/edit`, '/dashboard/api/keys/new', '/dashboard/api/']) {
    isRefused(t, await me.get(url), `GET ${url}`, 404, 'not_found');
    isRefused(t, await app.inject({ method: 'GET', url }), `GET ${url} without a session`, 404, 'not_found');
  }
  for (const url of ['/dashboard/gadgets/new', `/dashboard/widgets/${widget}/nothing`, '/dashboard/settings']) {
    const reply = await me.get(url);
    t.equal(reply.statusCode, 404, `${url}: a page saying so`);
    t.match(reply.headers['content-type'], /^text\/html/);
    t.match(reply.headers['content-security-policy'], /script-src 'self'/);
  }
  t.equal((await me.get('/dashboard/widgets/new')).statusCode, 200, 'the pages are still there');
  t.equal((await me.get(`/dashboard/polls/${widget}/edit`)).statusCode, 200);
});

t.test('a path segment over 100 characters under /dashboard/api is the 400 it is under /api, not a 404 that echoes it', async (t) => {
  const { app, me } = await setUp(t);
  const long = `wgt_${'a'.repeat(150)}`;
  const api = await app.inject({ method: 'GET', url: `/api/widgets/${long}/token` });
  for (const url of [`/dashboard/api/widgets/${long}/summary`, `/dashboard/api/forms/${long}`, `/dashboard/api/nothing/${long}?page=1`]) {
    const reply = await me.get(url);
    isRefused(t, reply, `GET ${url.slice(0, 40)}`, 400, 'validation_error');
    t.same(reply.json(), api.json(), 'the same body as under /api');
    t.notOk(reply.body.includes(long), 'the path is not echoed');
  }
  t.equal((await me.get(`/dashboard/api/widgets/${'a'.repeat(100)}/summary`)).statusCode, 404, '100 characters are an id like any other');
});

t.test('downloads: since after until, a deleted object, a poll, HEAD', async (t) => {
  const { app, browser, me, widget, form } = await setUp(t);
  for (const url of [`/dashboard/api/widgets/${widget}/responses.csv`, `/dashboard/api/forms/${form}/responses.ndjson`]) {
    const reply = await me.get(`${url}?since=2026-11-23T00:00:00Z&until=2026-11-22T00:00:00Z`);
    isRefused(t, reply, `${url}: since after until`, 400, 'validation_error');
    t.match(reply.json().details, [{ path: 'querystring.since' }]);
    t.equal((await me.get(`${url}?since=2026-11-22T10:00:00Z&until=2026-11-22T10:00:00Z`)).statusCode, 200, 'since equal to until is one instant');
  }
  const head = await app.inject({ method: 'HEAD', url: `/dashboard/api/widgets/${widget}/responses.csv`, headers: { cookie: browser.cookie } });
  t.equal(head.statusCode, 200, 'HEAD of a download');
  t.equal(head.body, '', 'without the file');
  t.equal(head.headers['cache-control'], 'no-store');
  t.equal((await me.send('DELETE', `/dashboard/api/forms/${form}`)).statusCode, 200);
  isRefused(t, await me.get(`/dashboard/api/forms/${form}/responses.csv`), 'a deleted form', 404, 'form_not_found');
  isRefused(t, await me.get(`/dashboard/api/forms/${form}/summary`), 'a deleted form\'s summary', 404, 'form_not_found');
});

t.test('headers: the policy on every page and JSON reply, no-store on what a session sees, the cookie\'s attributes', async (t) => {
  const { app, me, widget, form, poll } = await setUp(t);
  const authenticated = [
    '/dashboard/api/session',
    '/dashboard/api/widgets',
    `/dashboard/api/widgets/${widget}`,
    `/dashboard/api/widgets/${widget}/responses`,
    `/dashboard/api/widgets/${widget}/summary`,
    `/dashboard/api/widgets/${widget}/responses.csv`,
    `/dashboard/api/forms/${form}/responses.ndjson`,
    `/dashboard/api/polls/${poll}/results`,
    '/dashboard/api/keys',
    '/dashboard/api/webhooks',
    '/dashboard/api/overview',
  ];
  for (const url of authenticated) {
    const reply = await me.get(url);
    t.equal(reply.statusCode, 200, url);
    t.equal(reply.headers['cache-control'], 'no-store', `${url}: no-store`);
    t.match(reply.headers['content-security-policy'], /default-src 'none'/, `${url}: a policy`);
    t.equal(reply.headers['set-cookie'], undefined, `${url}: no cookie`);
    t.equal(reply.headers['access-control-allow-origin'], undefined, `${url}: no other site may read it`);
    t.equal(reply.headers['x-frame-options'], 'DENY', `${url}: never framed`);
    const refused = await app.inject({ method: 'GET', url });
    t.equal(refused.headers['cache-control'], 'no-store', `${url} refused: no-store`);
  }
  const created = await me.send('POST', '/dashboard/api/keys', { name: 'CI' });
  t.equal(created.headers['cache-control'], 'no-store', 'the key shown once is not kept by a cache');
  for (const url of ['/dashboard', '/dashboard/widgets', `/dashboard/forms/${form}/edit`, '/dashboard/settings/developers', '/dashboard/signed-out']) {
    const reply = await me.get(url);
    t.match(reply.headers['content-security-policy'], /script-src 'self'.*frame-ancestors 'none'/, `${url}: the dashboard's policy`);
    t.equal(reply.headers['cache-control'], 'no-store', `${url}: no-store`);
  }
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/assets/app.css' })).headers['cache-control'], 'no-cache', 'the files keep theirs');
});

t.test('sessions: a signed-out or expired cookie is refused on reads and writes, without a cookie set and without a change', async (t) => {
  const { app, services, clock, alice, browser, me } = await setUp(t);
  const later = await signIn(app, services, alice.accountId);
  t.equal((await me.send('POST', '/dashboard/api/sign-out')).statusCode, 204);
  const before = await snapshotReadModels(services);
  isRefused(t, await me.get('/dashboard/api/session'), 'a signed-out session reads', 401, 'session_required');
  isRefused(t, await me.send('POST', '/dashboard/api/forms', { title: 'after sign-out' }), 'a signed-out session writes', 401, 'session_required');
  isRefused(t, await me.send('POST', '/dashboard/api/sign-out'), 'a second sign-out', 401, 'session_required');
  t.equal((await me.get('/dashboard/forms')).headers.location, '/dashboard/signed-out');
  t.match((await me.get('/dashboard')).body, /action="\/dashboard\/sign-in"/, 'the dashboard itself is the sign-in form');
  t.strictSame(await snapshotReadModels(services), before, 'nothing changed');

  clock.advance(31 * 60_000);
  const idle = as(app, later);
  isRefused(t, await idle.send('POST', '/dashboard/api/keys', { name: 'after expiry' }), 'an expired session writes', 401, 'session_required');
  isRefused(t, await idle.get('/dashboard/api/keys'), 'an expired session reads', 401, 'session_required');
  t.equal(((await snapshotReadModels(services)).api_keys as unknown[]).length, (before.api_keys as unknown[]).length, 'no key was made');
  void browser;
});

t.test('sessions follow the account: its current plan sets the limits, a revoked API key leaves the session alone', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'free');
  const me = as(app, await signIn(app, services, who.accountId));
  t.match((await me.get('/dashboard/api/session')).json(), { account: { plan: 'free' }, plan_limits: { create_widgets: false } });
  isRefused(t, await me.send('POST', '/dashboard/api/widgets', { widget_type: 'nps', title: 'On Free' }), 'a widget on Free', 403, 'plan_required');

  await changePlan(services, who.accountId, 'pro');
  t.match((await me.get('/dashboard/api/session')).json(), { account: { plan: 'pro' }, plan_limits: { create_widgets: true, rate_limit_per_minute: 300 } }, 'the upgrade shows at once');
  t.equal((await me.send('POST', '/dashboard/api/widgets', { widget_type: 'nps', title: 'On Pro' })).statusCode, 201);

  await changePlan(services, who.accountId, 'free');
  isRefused(t, await me.send('POST', '/dashboard/api/widgets', { widget_type: 'nps', title: 'Back on Free' }), 'a widget after the downgrade', 403, 'plan_required');
  t.equal((await me.get('/dashboard/api/widgets')).json().pagination.total, 1);

  await revokeKey(services, who.keyId);
  t.equal((await me.get('/dashboard/api/session')).statusCode, 200, 'a session is not a key');
});

t.test('CSRF: another session\'s token, Origin variants, Sec-Fetch-Site, HEAD and OPTIONS, a GET of a change', async (t) => {
  const { app, services, browser, me } = await setUp(t);
  const bob = await signIn(app, services, (await owner(services, 'business')).accountId);
  const before = await snapshotReadModels(services);
  const post = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/dashboard/api/keys', headers: { ...browser.writes, ...headers }, payload: { name: 'CSRF' } });
  isRefused(t, await post({ 'x-csrf-token': bob.csrf }), 'another account\'s session token', 403, 'csrf_rejected');
  isRefused(t, await post({ 'x-csrf-token': browser.csrf.toLowerCase() === browser.csrf ? `${browser.csrf}A` : browser.csrf.toLowerCase() }), 'the token in another case', 403, 'csrf_rejected');
  isRefused(t, await post({ 'x-csrf-token': `${browser.csrf},${browser.csrf}` }), 'the token twice', 403, 'csrf_rejected');
  isRefused(t, await post({ 'x-csrf-token': `\u00e9${browser.csrf.slice(1)}` }), 'a token of the right length with a latin-1 character', 403, 'csrf_rejected');
  isRefused(t, await post({ 'x-csrf-token': '\u00ff'.repeat(browser.csrf.length) }), 'a token of latin-1 characters only', 403, 'csrf_rejected');
  for (const origin of ['null', 'http://localhost:81', 'https://localhost:80', 'http://localhost:80/', 'http://localhost:80.evil.example', 'http://evil.example', 'file://', '']) {
    isRefused(t, await post({ origin }), `Origin ${JSON.stringify(origin)}`, 403, 'csrf_rejected');
  }
  for (const site of ['cross-site', 'same-site', 'CROSS-SITE', '']) {
    isRefused(t, await post({ 'sec-fetch-site': site }), `Sec-Fetch-Site ${JSON.stringify(site)}`, 403, 'csrf_rejected');
  }
  for (const method of ['HEAD', 'OPTIONS', 'GET']) {
    for (const url of ['/dashboard/api/sign-out', '/dashboard/api/keys/key_01M83MYK86VG038QNRSV3C8B3E']) {
      const reply = await app.inject({ method: method as 'GET', url, headers: browser.writes });
      t.equal(reply.statusCode, 404, `${method} ${url} is no route`);
    }
  }
  t.strictSame(await snapshotReadModels(services), before, 'nothing changed');
  t.equal((await me.get('/dashboard/api/session')).statusCode, 200, 'the session is still live');
  t.equal((await post({})).statusCode, 201, 'the dashboard\'s own request passes');
});

t.test('a login link replayed on a second instance over the same data is refused; the session works on both', async (t) => {
  const dataDir = tempDir(t);
  const first = await testApp(t, { dataDir, clock: manualClock() });
  const second = await testApp(t, { dataDir, clock: manualClock() });
  const who = await owner(first.services, 'pro');
  const token = await linkToken(first.services, who.accountId);
  const signedIn = await postLogin(first.app, token);
  t.equal(signedIn.statusCode, 303);
  isRefused(t, await postLogin(second.app, token), 'the same link on the second instance', 401, 'login_link_used');
  const replayed = await second.app.inject({ method: 'GET', url: `/dashboard/login?t=${token}` });
  isRefused(t, replayed, 'its page on the second instance', 401, 'login_link_used');
  const cookie = `fs_session=${signedIn.cookies.find((c) => c.name === 'fs_session')!.value}`;
  t.equal((await second.app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } })).statusCode, 200, 'the session is found on the other instance');
});

t.test('the session cookie: HttpOnly, SameSite=Strict, Path=/dashboard, 12 hours; none on a refused sign-in', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'free');
  const token = await linkToken(services, who.accountId);
  const cookie = (await postLogin(app, token)).cookies.find((c) => c.name === 'fs_session')!;
  t.match(cookie, { value: /^[A-Za-z0-9_-]{43}$/, httpOnly: true, sameSite: 'Strict', path: '/dashboard', maxAge: 43_200 });
  t.notOk(cookie.secure, 'not Secure over plain http without an https base URL');
  t.equal(cookie.domain, undefined, 'host-only');
  for (const reply of [await postLogin(app, token), await postLogin(app, 'forged'), await postLogin(app, token, { origin: 'null' })]) {
    t.equal(reply.headers['set-cookie'], undefined, `no cookie on a ${reply.statusCode}`);
  }
});

t.test('odd cookies: undecodable, repeated, quoted, huge: no session, never a 5xx', async (t) => {
  const { app, browser } = await setUp(t);
  const secret = browser.cookie.slice('fs_session='.length);
  for (const cookie of ['fs_session=%E0%A4%A', `fs_session=${secret}x`, `fs_session="${secret}"`, `fs_session=${'a'.repeat(20_000)}`, 'fs_session=', '=;;=', `FS_SESSION=${secret}`]) {
    isRefused(t, await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } }), `cookie ${cookie.slice(0, 30)}`, 401, 'session_required');
  }
});

t.test('another account\'s summaries, downloads and figures: 404, and its responses are not counted', async (t) => {
  const { app, services, me, widget, form, poll } = await setUp(t);
  const bob = as(app, await signIn(app, services, (await owner(services, 'business')).accountId));
  const mine = await me.get(`/dashboard/api/widgets/${widget}/summary`);
  t.equal(mine.json().total, 1, 'the owner sees the response');
  const before = await snapshotReadModels(services);
  for (const [url, code] of [
    [`/dashboard/api/widgets/${widget}/summary`, 'widget_not_found'],
    [`/dashboard/api/forms/${form}/summary`, 'form_not_found'],
    [`/dashboard/api/polls/${poll}/summary`, 'poll_not_found'],
    [`/dashboard/api/widgets/${widget}/responses.csv`, 'widget_not_found'],
    [`/dashboard/api/widgets/${widget}/responses.ndjson`, 'widget_not_found'],
    [`/dashboard/api/forms/${form}/responses.csv`, 'form_not_found'],
    [`/dashboard/api/forms/${form}/responses.ndjson`, 'form_not_found'],
    [`/dashboard/api/widgets/${widget}/responses?since=2026-01-01T00:00:00Z`, 'widget_not_found'],
    [`/dashboard/api/polls/${poll}/results`, 'poll_not_found'],
  ] as const) {
    isRefused(t, await bob.get(url), `Bob reads ${url}`, 404, code);
  }
  // Alice's widget id on Bob's form routes, and the other way round: still not found.
  isRefused(t, await bob.get(`/dashboard/api/forms/${widget}/summary`), 'a widget id on the form route', 404, 'form_not_found');
  isRefused(t, await me.get(`/dashboard/api/forms/${widget}/responses.csv`), 'a widget id on the owner\'s form download', 404, 'form_not_found');
  t.match((await bob.get('/dashboard/api/overview')).json(), { totals: { widgets: 0, forms: 0, polls: 0, responses: 0 }, latest: [] });
  t.strictSame(await snapshotReadModels(services), before, 'nothing changed');
});

t.test('over a real connection: a CSRF header of raw latin-1 bytes is 403, not a 500', async (t) => {
  const { app, browser } = await setUp(t);
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = new URL(address);
  const body = '{"name":"over the wire"}';
  const head = [
    'POST /dashboard/api/keys HTTP/1.1',
    `Host: 127.0.0.1:${port}`,
    `Origin: http://127.0.0.1:${port}`,
    `Cookie: ${browser.cookie}`,
    'Content-Type: application/json',
    `Content-Length: ${body.length}`,
    'Connection: close',
  ].join('\r\n');
  const raw = Buffer.concat([Buffer.from(`${head}\r\nX-CSRF-Token: `), Buffer.alloc(browser.csrf.length, 0xe9), Buffer.from(`\r\n\r\n${body}`)]);
  const { createConnection } = await import('node:net');
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = createConnection({ host: '127.0.0.1', port: Number(port) }, () => socket.end(raw));
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk)).on('end', () => resolve(Buffer.concat(chunks).toString())).on('error', reject);
  });
  t.match(answer, /^HTTP\/1\.1 403 /, answer.split('\r\n')[0] ?? '');
  t.match(answer, /"code":"csrf_rejected"/);
});

t.test('one link posted twice at once signs in once; two sign-outs at once end the session once', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'free');
  const token = await linkToken(services, who.accountId);
  const replies = await Promise.all([postLogin(app, token), postLogin(app, token), postLogin(app, token)]);
  t.strictSame(replies.map((r) => r.statusCode).sort(), [303, 401, 401]);
  for (const reply of replies.filter((r) => r.statusCode === 401)) isRefused(t, reply, 'the losing post', 401, 'login_link_used');
  const cookie = `fs_session=${replies.find((r) => r.statusCode === 303)!.cookies.find((c) => c.name === 'fs_session')!.value}`;
  const csrf = (await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } })).json().csrf_token as string;
  const signOut = () => app.inject({ method: 'POST', url: '/dashboard/api/sign-out', headers: { cookie, 'x-csrf-token': csrf, 'sec-fetch-site': 'same-origin' } });
  const ends = await Promise.all([signOut(), signOut()]);
  t.ok(ends.every((r) => r.statusCode === 204 || r.statusCode === 401), ends.map((r) => `${r.statusCode} ${r.body}`).join('; '));
  const ended = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((e) => e.type === 'DashboardSignedOut');
  t.equal(ended.length, 1, 'one DashboardSignedOut');
});

t.test('the front end\'s files: nothing outside the assets folder, no listing', async (t) => {
  const { app } = await testApp(t, { clock: manualClock() });
  for (const url of ['/dashboard/assets/', '/dashboard/assets/%2e%2e/auth.ts', '/dashboard/assets/..%2fauth.ts', '/dashboard/assets/%2e%2e%2f%2e%2e%2fpackage.json', '/dashboard/assets/....//auth.ts', '/dashboard/assets/%00app.js', '/dashboard/assets/vendor/../../session.ts']) {
    const reply = await app.inject({ method: 'GET', url });
    t.ok(reply.statusCode >= 400 && reply.statusCode < 500, `${url}: ${reply.statusCode}`);
    t.notMatch(reply.body, /export |"dependencies"/, `${url}: no source`);
  }
});
