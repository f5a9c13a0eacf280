import t from 'tap';
import type { App } from '../../src/app.js';
import { manualClock, owner, testApp, tokenFor } from '../support/app.js';
import { snapshotReadModels } from '../support/services.js';
import { signIn, type Browser } from './support.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, error: String, code, message: String });

const as = (app: App, browser: Browser) => ({
  get: (url: string) => app.inject({ method: 'GET', url, headers: { cookie: browser.cookie } }),
  post: (url: string, payload?: object) => app.inject({ method: 'POST', url, headers: browser.writes, ...(payload ? { payload } : {}) }),
  put: (url: string, payload: object) => app.inject({ method: 'PUT', url, headers: browser.writes, payload }),
  delete: (url: string) => app.inject({ method: 'DELETE', url, headers: browser.writes }),
});

t.test('every plan in the dashboard: Free makes forms and polls but not widgets (403 plan_required), Pro makes widgets', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const free = as(app, await signIn(app, services, (await owner(services, 'free')).accountId));
  const pro = as(app, await signIn(app, services, (await owner(services, 'pro')).accountId));

  const form = await free.post('/dashboard/api/forms', { title: 'Newsletter', questions: [{ id: 'email', type: 'email', title: 'Email' }] });
  t.equal(form.statusCode, 201, form.body);
  t.match(form.json(), { id: /^frm_/, title: 'Newsletter', published: false, version: 1, created_at: '2026-11-22T10:00:00.000Z' });
  const poll = await free.post('/dashboard/api/polls', { question: 'Tabs or spaces?', options: [{ text: 'Tabs' }, { text: 'Spaces' }] });
  t.equal(poll.statusCode, 201);
  const widget = await free.post('/dashboard/api/widgets', { widget_type: 'nps', title: 'How likely…' });
  t.match({ status: widget.statusCode, body: widget.json() }, { status: 403, body: D3(403, 'plan_required') });
  t.equal((await free.get('/dashboard/api/widgets')).json().pagination.total, 0);

  const made = await pro.post('/dashboard/api/widgets', { widget_type: 'nps', title: 'How likely…' });
  t.equal(made.statusCode, 201, made.body);
  t.match(made.json(), { id: /^wgt_/, title: 'How likely…', widget_type: 'nps', published: false });
  t.match((await pro.get('/dashboard/api/session')).json().plan_limits, { create_widgets: true, api_access: false, rate_limit_per_minute: 300, honeypot: true, per_ip_rate_limit: true });

  const key = (await owner(services, 'free')).headers;
  const api = await app.inject({ method: 'POST', url: '/api/forms', headers: key, payload: { title: 'Through the API' } });
  t.match(api.json(), D3(403, 'plan_required'), 'the API stays Business-only');
});

t.test('objects: list, read, update, publish, unpublish, delete through the API\'s commands; events name the session', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const alice = await owner(services, 'pro');
  const browser = await signIn(app, services, alice.accountId);
  const me = as(app, browser);
  const id = (await me.post('/dashboard/api/widgets', { widget_type: 'feedback', title: 'Rate us' })).json().id as string;

  const list = await me.get('/dashboard/api/widgets?page=1&limit=10');
  t.equal(list.statusCode, 200);
  t.strictSame(Object.keys(list.json()), ['items', 'pagination']);
  t.strictSame(list.json().pagination, { page: 1, limit: 10, total: 1, totalPages: 1 });
  t.strictSame(Object.keys(list.json().items[0]).sort(), ['created_at', 'description', 'id', 'published', 'title', 'updated_at', 'widget_type'], 'the API\'s list fields, nothing stored besides');

  const view = await me.get(`/dashboard/api/widgets/${id}`);
  t.match(view.json(), { id, title: 'Rate us', published: false, closed: false, settings: Object, created_at: String });

  const published = await me.put(`/dashboard/api/widgets/${id}`, { published: true, title: 'Rate us, please' });
  t.equal(published.statusCode, 200);
  t.match(published.json(), { id, title: 'Rate us, please', published: true });
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${id}` })).statusCode, 200, 'public now');
  t.match((await me.put(`/dashboard/api/widgets/${id}`, { published: false })).json(), { published: false });
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${id}` })).statusCode, 403, 'unpublished again');

  const invalid = await me.put(`/dashboard/api/widgets/${id}`, { title: 42 });
  t.match({ status: invalid.statusCode, body: invalid.json() }, { status: 400, body: D3(400, 'validation_error') }, 'the API\'s schemas');

  const history = await services.events.readStream(`widget-${id}`);
  t.ok(history.length >= 3);
  t.ok(history.every((e) => e.metadata.actor === (history[0]!.metadata.actor as string) && /^ses_/.test(String(e.metadata.actor))), 'the actor is the session');

  const deleted = await me.delete(`/dashboard/api/widgets/${id}`);
  t.equal(deleted.statusCode, 200);
  t.strictSame(deleted.json(), { success: true });
  t.match((await me.get(`/dashboard/api/widgets/${id}`)).json(), D3(404, 'widget_not_found'));
  t.match((await me.get('/dashboard/api/widgets/not-an-id!')).json(), D3(404, 'widget_not_found'));
});

t.test('responses, poll results, keys and webhooks of the signed-in account', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const alice = await owner(services, 'free');
  const me = as(app, await signIn(app, services, alice.accountId));
  const form = (await me.post('/dashboard/api/forms', { title: 'Q', questions: [{ id: 'q', type: 'short_text', title: 'Q' }] })).json().id as string;
  await me.put(`/dashboard/api/forms/${form}`, { published: true });
  for (const answer of ['one', 'two', 'three']) {
    const sent = await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, payload: { answers: { q: answer }, _token: await tokenFor(app, 'forms', form) } });
    t.equal(sent.statusCode, 200, sent.body);
  }
  const responses = await me.get(`/dashboard/api/forms/${form}/responses?limit=2`);
  t.equal(responses.statusCode, 200);
  t.equal(responses.json().responses.length, 2);
  t.match(responses.json(), { responses: [{ form_id: form, answers: { q: String }, metadata: Object }], pagination: { total: 3, next_cursor: String } });
  t.match((await me.get(`/dashboard/api/forms/${form}/responses?since=2030-01-01T00:00:00Z`)).json(), { responses: [], pagination: { total: 0 } });
  t.match((await me.get(`/dashboard/api/forms/${form}/responses?since=yesterday`)).json(), D3(400, 'validation_error'));

  const poll = (await me.post('/dashboard/api/polls', { question: 'A or B?', options: [{ text: 'A' }, { text: 'B' }] })).json();
  const results = await me.get(`/dashboard/api/polls/${poll.id}/results`);
  t.match(results.json(), { poll_id: poll.id, question: 'A or B?', total_votes: 0, options: [{ text: 'A', votes: 0 }, { text: 'B', votes: 0 }] }, 'results of an unpublished poll, for its owner');

  const before = (await me.get('/dashboard/api/keys')).json().keys;
  t.equal(before.length, 1);
  t.strictSame(Object.keys(before[0]).sort(), ['created_at', 'key_id', 'last_used_at', 'name', 'prefix', 'revoked_at', 'scopes']);
  const created = await me.post('/dashboard/api/keys', { name: 'CI', scopes: ['forms:read', 'forms:write', 'forms:read'] });
  t.equal(created.statusCode, 201);
  t.match(created.json(), { key_id: /^key_/, api_key: /^svc_/, prefix: String, scopes: ['forms:read', 'forms:write'] });
  const listed = (await me.get('/dashboard/api/keys')).json().keys;
  t.equal(listed.length, 2);
  t.notOk(JSON.stringify(listed).includes(created.json().api_key), 'the key is shown once');
  t.match((await me.post('/dashboard/api/keys', { name: 'x', scopes: ['admin'] })).json(), D3(400, 'validation_error'));
  t.match((await me.post('/dashboard/api/keys', { name: '', scopes: ['forms:read'] })).json(), D3(400, 'validation_error'));
  const revoked = await me.delete(`/dashboard/api/keys/${created.json().key_id}`);
  t.strictSame(revoked.json(), { key_id: created.json().key_id, revoked: true });
  t.match((await me.get('/dashboard/api/keys')).json().keys.find((k: { key_id: string }) => k.key_id === created.json().key_id), { revoked_at: '2026-11-22T10:00:00.000Z' });
  t.match((await me.delete('/dashboard/api/keys/key_nothing')).json(), D3(404, 'key_not_found'));

  t.strictSame((await me.get('/dashboard/api/webhooks')).json(), { endpoints: [] });
});

t.test('an editor deletes a response from the dashboard: erased as DELETE /api/responses erases it, the session named', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const alice = await owner(services, 'free');
  const me = as(app, await signIn(app, services, alice.accountId));
  const form = (await me.post('/dashboard/api/forms', { title: 'Q', questions: [{ id: 'q', type: 'short_text', title: 'Q' }] })).json().id as string;
  await me.put(`/dashboard/api/forms/${form}`, { published: true });
  const ids: string[] = [];
  for (const answer of ['keep me', 'erase me']) {
    const sent = await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, payload: { answers: { q: answer }, _token: await tokenFor(app, 'forms', form) } });
    ids.push(sent.json().id as string);
  }
  const erased = await me.delete(`/dashboard/api/forms/${form}/responses/${ids[1]}`);
  t.equal(erased.statusCode, 200, erased.body);
  t.match(erased.json(), { success: true, deleted: 1, erasure_id: /^ers_/ });
  const left = (await me.get(`/dashboard/api/forms/${form}/responses`)).json();
  t.same(left.responses.map((r: { id: string }) => r.id), [ids[0]], 'the list no longer holds it');
  t.match((await me.get(`/dashboard/api/forms/${form}/summary`)).json(), { total: 1 }, 'nor the summary');
  t.same(await services.events.readStream(`response-${ids[1]}`), [], 'its stream is gone');
  const requested = (await services.events.readStream(`erasure-${erased.json().erasure_id}`))[0]!;
  t.match(requested, { type: 'ErasureRequested', data: { parent: 'form', parent_id: form, response_ids: [ids[1]], key_id: null }, metadata: { actor: /^ses_/ } }, 'recorded as asked by the session');
  t.match((await me.delete(`/dashboard/api/forms/${form}/responses/${ids[1]}`)).json(), { success: true, deleted: 0 }, 'again: nothing left to erase');
  t.match((await me.delete(`/dashboard/api/forms/${form}/responses/${'x'.repeat(65)}`)).json(), D3(400, 'validation_error'), 'an id that cannot be one');
});

t.test('another account\'s objects, responses and keys never appear or change through a session (404)', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const alice = await owner(services, 'business');
  const bob = await owner(services, 'business');
  const mine = as(app, await signIn(app, services, alice.accountId));
  const theirs = as(app, await signIn(app, services, bob.accountId));
  const widget = (await mine.post('/dashboard/api/widgets', { widget_type: 'feedback', title: 'Alice widget' })).json().id as string;
  await mine.put(`/dashboard/api/widgets/${widget}`, { published: true });
  const form = (await mine.post('/dashboard/api/forms', { title: 'Alice form' })).json().id as string;
  const poll = (await mine.post('/dashboard/api/polls', { question: 'Alice?', options: [{ text: 'A' }, { text: 'B' }] })).json().id as string;
  const answered = (await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 3 }, _token: await tokenFor(app, 'widgets', widget) } })).json().id as string;
  const key = (await mine.post('/dashboard/api/keys', { name: 'Alice key', scopes: ['forms:read'] })).json().key_id as string;
  const before = await snapshotReadModels(services);

  for (const path of ['widgets', 'forms', 'polls']) {
    t.equal((await theirs.get(`/dashboard/api/${path}`)).json().pagination.total, 0, `${path}: none of Alice's listed`);
  }
  const refused: Array<[string, Promise<{ statusCode: number; json(): unknown }>, string]> = [
    ['GET widget', theirs.get(`/dashboard/api/widgets/${widget}`), 'widget_not_found'],
    ['PUT widget', theirs.put(`/dashboard/api/widgets/${widget}`, { title: 'Bob was here' }), 'widget_not_found'],
    ['unpublish widget', theirs.put(`/dashboard/api/widgets/${widget}`, { published: false }), 'widget_not_found'],
    ['DELETE widget', theirs.delete(`/dashboard/api/widgets/${widget}`), 'widget_not_found'],
    ['widget responses', theirs.get(`/dashboard/api/widgets/${widget}/responses`), 'widget_not_found'],
    ['DELETE widget response', theirs.delete(`/dashboard/api/widgets/${widget}/responses/${answered}`), 'widget_not_found'],
    ['GET form', theirs.get(`/dashboard/api/forms/${form}`), 'form_not_found'],
    ['PUT form', theirs.put(`/dashboard/api/forms/${form}`, { published: true }), 'form_not_found'],
    ['DELETE form', theirs.delete(`/dashboard/api/forms/${form}`), 'form_not_found'],
    ['form responses', theirs.get(`/dashboard/api/forms/${form}/responses`), 'form_not_found'],
    ['GET poll', theirs.get(`/dashboard/api/polls/${poll}`), 'poll_not_found'],
    ['PUT poll', theirs.put(`/dashboard/api/polls/${poll}`, { question: 'Bob?' }), 'poll_not_found'],
    ['DELETE poll', theirs.delete(`/dashboard/api/polls/${poll}`), 'poll_not_found'],
    ['poll results', theirs.get(`/dashboard/api/polls/${poll}/results`), 'poll_not_found'],
    ['revoke key', theirs.delete(`/dashboard/api/keys/${key}`), 'key_not_found'],
  ];
  for (const [name, reply, code] of refused) {
    const r = await reply;
    t.match({ status: r.statusCode, body: r.json() }, { status: 404, body: D3(404, code) }, name);
  }
  const keys = (await theirs.get('/dashboard/api/keys')).json() as { keys: Array<{ name: string }> };
  t.notOk(keys.keys.some((k) => k.name === 'Alice key'), 'Alice\'s keys are not listed');
  t.strictSame(await snapshotReadModels(services), before, 'nothing of Alice\'s changed');
});

t.test('pages: the shell with its CSRF token and policy; the files it loads', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const browser = await signIn(app, services, (await owner(services, 'free')).accountId);
  for (const url of ['/dashboard', '/dashboard/widgets', '/dashboard/forms/new', '/dashboard/polls/pol_1', '/dashboard/forms/frm_1/edit', '/dashboard/settings/developers']) {
    const page = await app.inject({ method: 'GET', url, headers: { cookie: browser.cookie } });
    t.equal(page.statusCode, 200, url);
    t.match(page.headers['content-type'], /^text\/html/);
    t.match(page.headers['cache-control'], 'no-store');
    t.match(page.body, `<meta name="csrf-token" content="${browser.csrf}">`);
    t.match(page.body, '<script type="module" src="/dashboard/assets/app.js"></script>');
    t.match(page.body, '<div id="app"></div>');
    t.equal(page.headers['content-security-policy'], "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'");
  }
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/gadgets/new', headers: { cookie: browser.cookie } })).statusCode, 404);

  const uplot = await app.inject({ method: 'GET', url: '/dashboard/assets/vendor/uplot.esm.js' });
  t.equal(uplot.statusCode, 200);
  t.match(uplot.headers['content-type'], /javascript/);
  t.equal(uplot.headers['cache-control'], 'no-cache');
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/assets/vendor/uplot.min.css' })).statusCode, 200);
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/assets/vendor/uPlot.d.ts' })).statusCode, 404, 'only the two files of the chart library');
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/assets/../auth.ts' })).statusCode, 404);

  const openapi = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  t.notOk(Object.keys(openapi.paths).some((path) => path.startsWith('/dashboard')), 'the dashboard is not in the API\'s document');
});
