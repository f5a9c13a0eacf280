import t from 'tap';
import { changePlan, revokeKey } from '../../src/accounts/commands.js';
import { owner, testApp } from '../support/app.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

t.test('K endpoints: 401 without a valid key, then plan, then scope', async (t) => {
  const { app, services } = await testApp(t);
  const list = (headers?: Record<string, string>) => app.inject({ method: 'GET', url: '/api/widgets', headers });
  for (const headers of [undefined, { authorization: 'Bearer nope' }, { authorization: `Bearer svc_${'A'.repeat(43)}` }, { authorization: 'Basic abc' }]) {
    const reply = await list(headers);
    t.equal(reply.statusCode, 401);
    t.match(reply.json(), D3(401, 'unauthorized'));
  }
  const free = await owner(services, 'free');
  const pro = await owner(services, 'pro');
  t.match((await list(free.headers)).json(), D3(403, 'plan_required'));
  t.match((await list(pro.headers)).json(), D3(403, 'plan_required'));
  const create = (who: { headers: Record<string, string> }) =>
    app.inject({ method: 'POST', url: '/api/widgets', headers: who.headers, payload: { widget_type: 'nps', title: 'NPS' } });
  t.match((await create(pro)).json(), D3(403, 'plan_required'), 'POST /api/widgets: API access is Business only');
  const readOnly = await owner(services, 'business', ['forms:read', 'responses:read']);
  t.equal((await list(readOnly.headers)).statusCode, 200);
  t.match((await create(readOnly)).json(), D3(403, 'insufficient_scope'));
  const noRead = await owner(services, 'business', ['forms:write']);
  t.match((await list(noRead.headers)).json(), D3(403, 'insufficient_scope'));

  await changePlan(services, pro.accountId, 'business');
  t.equal((await list(pro.headers)).statusCode, 200, 'a plan change takes effect at once');
  await revokeKey(services, pro.keyId);
  t.match((await list(pro.headers)).json(), D3(401, 'unauthorized'), 'a revoked key is refused');
});

t.test('create: the documented reply, type defaults and validation', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const create = (payload: unknown) => app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: payload as object });

  const created = await create({ widget_type: 'nps', title: 'How likely?' });
  t.equal(created.statusCode, 201);
  t.strictSame(Object.keys(created.json()).sort(), ['created_at', 'id', 'published', 'title', 'widget_type']);
  t.match(created.json(), { title: 'How likely?', widget_type: 'nps', published: false });
  const got = (await app.inject({ method: 'GET', url: `/api/widgets/${created.json().id}`, headers: biz.headers })).json();
  t.match(got.questions, [{ type: 'nps', id: 'score', required: true }, { type: 'long_text' }], 'NPS gets a 0-10 score and a follow-up');
  t.match(got.trigger_config, { position: 'bottom-right', triggerMode: 'click_toggle', icon: 'feedback', showText: true });

  for (const [type, first] of [['feedback', 'star_rating'], ['contact', 'email'], ['bug_report', 'long_text']] as const) {
    const id = (await create({ widget_type: type, title: type })).json().id;
    const questions = (await app.inject({ method: 'GET', url: `/api/widgets/${id}`, headers: biz.headers })).json().questions;
    t.equal(questions[0].type, first, `${type} defaults`);
  }
  const bug = (await create({ widget_type: 'bug_report', title: 'Bugs' })).json().id;
  const bugQuestions = (await app.inject({ method: 'GET', url: `/api/widgets/${bug}`, headers: biz.headers })).json().questions;
  t.equal(bugQuestions[1].type, 'severity', 'bug reports get a severity selector');

  const full = await create({
    widget_type: 'custom',
    title: 'Custom',
    questions: [
      { id: 'stars', type: 'star_rating', title: 'Stars?', required: true, starRatingSettings: { maxStars: 10 } },
      { id: 'pick', type: 'single_choice', title: 'Pick', choices: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }] },
    ],
    trigger_config: { position: 'top-left', icon: 'heart', text: 'Tell us', showText: false, triggerMode: 'scroll', scrollPercentage: 100, timeDelay: 0 },
    theme: { primaryColor: '#abc', backgroundColor: 'rgb(0, 0, 0)' },
    thank_you_title: 'Ta',
    thank_you_message: 'Much obliged',
    settings: { allowed_domains: ['example.com', '*.example.org'], max_responses: 10, closes_at: '2030-01-01T00:00:00Z' },
  });
  t.equal(full.statusCode, 201, full.body);

  const invalid: Array<[string, unknown, string]> = [
    ['unknown type', { widget_type: 'survey', title: 'x' }, 'body.widget_type'],
    ['no title', { widget_type: 'nps' }, 'body.title'],
    ['empty title', { widget_type: 'nps', title: '   ' }, 'body.title'],
    ['invisible title', { widget_type: 'nps', title: '\u200b\u200d\ufeff\u00a0\u2003' }, 'body.title'],
    ['invisible question title', { widget_type: 'custom', title: 'x', questions: [{ id: 'q', type: 'long_text', title: '\u3164' }] }, 'body.questions.0.title'],
    ['invisible choice label', { widget_type: 'custom', title: 'x', questions: [{ id: 'q', type: 'single_choice', title: 'q', choices: [{ id: 'a', label: '\u2800' }, { id: 'b', label: 'B' }] }] }, 'body.questions.0.choices.0.label'],
    ['custom without questions', { widget_type: 'custom', title: 'x' }, 'body.questions'],
    ['maxStars above 10', { widget_type: 'custom', title: 'x', questions: [{ id: 'q', type: 'star_rating', title: 'q', starRatingSettings: { maxStars: 11 } }] }, 'body.questions.0.starRatingSettings.maxStars'],
    ['maxStars 0', { widget_type: 'custom', title: 'x', questions: [{ id: 'q', type: 'star_rating', title: 'q', starRatingSettings: { maxStars: 0 } }] }, 'body.questions.0.starRatingSettings.maxStars'],
    ['duplicate question ids', { widget_type: 'custom', title: 'x', questions: [{ id: 'q', type: 'long_text', title: 'a' }, { id: 'q', type: 'nps', title: 'b' }] }, 'body.questions'],
    ['unknown question type', { widget_type: 'custom', title: 'x', questions: [{ id: 'q', type: 'video', title: 'a' }] }, 'body.questions.0.type'],
    ['consent is for forms', { widget_type: 'custom', title: 'x', questions: [{ id: 'q', type: 'consent', title: 'a', text: 'b' }] }, 'body.questions.0.type'],
    ['scroll above 100', { widget_type: 'nps', title: 'x', trigger_config: { scrollPercentage: 101 } }, 'body.trigger_config.scrollPercentage'],
    ['negative delay', { widget_type: 'nps', title: 'x', trigger_config: { timeDelay: -1 } }, 'body.trigger_config.timeDelay'],
    ['bad position', { widget_type: 'nps', title: 'x', trigger_config: { position: 'middle' } }, 'body.trigger_config.position'],
    ['bad icon', { widget_type: 'nps', title: 'x', trigger_config: { icon: 'rocket' } }, 'body.trigger_config.icon'],
    ['bad mode', { widget_type: 'nps', title: 'x', trigger_config: { triggerMode: 'hover' } }, 'body.trigger_config.triggerMode'],
    ['colour name', { widget_type: 'nps', title: 'x', theme: { primaryColor: 'red' } }, 'body.theme.primaryColor'],
    ['colour script', { widget_type: 'nps', title: 'x', theme: { backgroundColor: 'url(javascript:alert(1))' } }, 'body.theme.backgroundColor'],
    ['unknown key', { widget_type: 'nps', title: 'x', owner: 'me' }, 'body'],
    ['bad domain', { widget_type: 'nps', title: 'x', settings: { allowed_domains: ['https://example.com/'] } }, 'body.settings.allowed_domains.0'],
    ['bad closes_at', { widget_type: 'nps', title: 'x', settings: { closes_at: 'tomorrow' } }, 'body.settings.closes_at'],
    ['zero max_responses', { widget_type: 'nps', title: 'x', settings: { max_responses: 0 } }, 'body.settings.max_responses'],
  ];
  for (const [name, payload, path] of invalid) {
    const reply = await create(payload);
    t.equal(reply.statusCode, 400, name);
    t.match(reply.json(), { ...D3(400, 'validation_error'), details: [{ path, message: String }] }, name);
  }
  const list = (await app.inject({ method: 'GET', url: '/api/widgets', headers: biz.headers })).json();
  t.equal(list.pagination.total, 6, 'no invalid request created anything');
});

t.test('list: own widgets only, newest first, paginated per D9', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const other = await owner(services);
  for (let i = 0; i < 5; i++) {
    await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title: `W${i}`, description: `d${i}` } });
  }
  await app.inject({ method: 'POST', url: '/api/widgets', headers: other.headers, payload: { widget_type: 'feedback', title: 'Theirs' } });
  const page = (query: string) => app.inject({ method: 'GET', url: `/api/widgets${query}`, headers: biz.headers });
  const all = (await page('')).json();
  t.same(all.widgets.map((w: { title: string }) => w.title), ['W4', 'W3', 'W2', 'W1', 'W0']);
  t.strictSame(Object.keys(all.widgets[0]).sort(), ['created_at', 'description', 'id', 'published', 'title', 'updated_at', 'widget_type']);
  t.same(all.pagination, { page: 1, limit: 50, total: 5, totalPages: 1 });
  const second = (await page('?page=2&limit=2')).json();
  t.same(second.widgets.map((w: { title: string }) => w.title), ['W2', 'W1']);
  t.same(second.pagination, { page: 2, limit: 2, total: 5, totalPages: 3 });
  t.same((await page('?limit=1000')).json().pagination.limit, 100, 'a limit above 100 is served as 100');
  for (const limit of ['9007199254740992', '1'.padEnd(400, '0')]) t.same((await page(`?limit=${limit}`)).json().pagination.limit, 100, `however far above (${limit.length} digits)`);
  t.same((await page('?page=9')).json().widgets, [], 'a page past the end is empty');
  for (const query of ['?page=0', '?limit=0', '?page=-1', '?limit=abc', '?page=1.5', '?page=99999999999999999999', '?page=1&page=2']) {
    t.match((await page(query)).json(), D3(400, 'validation_error'), query);
  }
});

t.test('get, update, publish, delete; other accounts see nothing and change nothing', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const other = await owner(services);
  const id = (await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title: 'Mine', settings: { allowed_domains: ['example.com'] } } })).json().id;
  const get = (headers?: Record<string, string>) => app.inject({ method: 'GET', url: `/api/widgets/${id}`, headers });
  const put = (headers: Record<string, string>, payload: object) => app.inject({ method: 'PUT', url: `/api/widgets/${id}`, headers, payload });

  t.match((await get()).json(), D3(403, 'widget_not_published'), 'unpublished: anonymous callers are told so');
  t.match((await get(other.headers)).json(), D3(404, 'widget_not_found'), "another account's unpublished widget is 404");
  t.match((await get({ authorization: 'Bearer bad' })).json(), D3(401, 'unauthorized'));
  const mine = (await get(biz.headers)).json();
  t.match(mine, { id, title: 'Mine', published: false, closed: false, settings: { allowed_domains: ['example.com'] } });

  t.match((await put(other.headers, { title: 'Hijacked' })).json(), D3(404, 'widget_not_found'));
  t.match((await app.inject({ method: 'DELETE', url: `/api/widgets/${id}`, headers: other.headers })).json(), D3(404, 'widget_not_found'));
  t.match((await put(biz.headers, { trigger_config: { scrollPercentage: 500 } })).json(), D3(400, 'validation_error'));
  t.match((await put(biz.headers, { widget_type: 'nps' })).json(), D3(400, 'validation_error'), 'the type is fixed');
  t.equal((await get(biz.headers)).json().title, 'Mine', 'refused updates changed nothing');

  const updated = await put(biz.headers, { title: 'Renamed', trigger_config: { position: 'top-left' }, theme: { primaryColor: '#000000' } });
  t.equal(updated.statusCode, 200);
  t.strictSame(Object.keys(updated.json()).sort(), ['id', 'published', 'title', 'updated_at']);
  t.match(updated.json(), { id, title: 'Renamed', published: false });
  const after = (await get(biz.headers)).json();
  t.match(after.trigger_config, { position: 'top-left', icon: 'feedback' }, 'nested objects merge key by key');
  t.match(after.theme, { primaryColor: '#000000', backgroundColor: '#ffffff' });

  const published = (await put(biz.headers, { published: true })).json();
  t.equal(published.published, true);
  t.ok(published.updated_at >= updated.json().updated_at);
  const anonymous = (await get()).json();
  t.match(anonymous, { id, title: 'Renamed', published: true });
  t.notOk('settings' in anonymous, 'the public view holds no settings');
  t.equal((await get(other.headers)).statusCode, 200, 'published widgets are readable by anyone');
  t.equal((await put(biz.headers, { published: false })).json().published, false);
  t.equal((await get()).statusCode, 403);
  const unchanged = (await get(biz.headers)).json();
  t.equal((await put(biz.headers, {})).statusCode, 200, 'an empty update succeeds');
  t.same((await get(biz.headers)).json(), unchanged, 'and changes nothing, not even updated_at');

  const deleted = await app.inject({ method: 'DELETE', url: `/api/widgets/${id}`, headers: biz.headers });
  t.same(deleted.json(), { success: true });
  for (const [method, url] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['GET', '/token'], ['POST', '/submit'], ['GET', '/responses']] as const) {
    const reply = await app.inject({ method, url: `/api/widgets/${id}${url}`, headers: biz.headers, ...(method === 'PUT' || method === 'POST' ? { payload: {} } : {}) });
    t.match(reply.json(), D3(404, 'widget_not_found'), `${method} ${url || '/'} after delete`);
  }
  t.match((await app.inject({ method: 'GET', url: '/api/widgets/not%20an%20id', headers: biz.headers })).json(), D3(404, 'widget_not_found'));
});
