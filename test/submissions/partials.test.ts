/**
 * Partial responses over HTTP: a form that keeps them is sent each page as
 * the visitor leaves it; the page shows as a `partial` response with its
 * `last_page`, and the submission with the same session completes it under
 * the same id. Pages off the path are refused, a form that does not keep
 * partials refuses them, they take no `max_responses` place, and an erasure
 * removes them as any response.
 */
import t from 'tap';
import type { App } from '../../src/app.js';
import { owner, testApp, tokenFor, type Owner } from '../support/app.js';
import { signIn } from '../dashboard/support.js';
import { live } from '../seals/support.js';
import { verifyHistory } from '../../src/seals/verify.js';

const FORM = {
  title: 'Join the beta',
  questions: [
    { id: 'name', type: 'short_text', title: 'Your name', required: true },
    { id: 'role', type: 'single_choice', title: 'Role', required: true, choices: [{ id: 'dev', label: 'Developer' }, { id: 'des', label: 'Designer' }] },
    { id: 'language', type: 'short_text', title: 'Favourite language', required: false, show_if: { question: 'role', op: 'equals', value: 'dev' } },
    { id: 'tool', type: 'short_text', title: 'Design tool', required: true },
    { id: 'fan', type: 'yes_no', title: 'Would you recommend us?', required: true },
  ],
  pages: [
    { id: 'about', title: 'About you', question_ids: ['name', 'role', 'language'] },
    { id: 'design', title: 'Design', question_ids: ['tool'] },
    { id: 'verdict', title: 'Your verdict', question_ids: ['fan'] },
  ],
  logic: [{ page: 'about', if: { question: 'role', op: 'equals', value: 'dev' }, go_to: 'verdict' }],
  hidden_fields: ['utm_source'],
  settings: { keep_partial: true },
};

async function publishedForm(app: App, who: Owner, body: object): Promise<string> {
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: who.headers, payload: body });
  if (created.statusCode !== 201) throw new Error(created.body);
  const id = created.json().id as string;
  const published = await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: who.headers, payload: { published: true } });
  if (published.statusCode !== 200) throw new Error(published.body);
  return id;
}

let visits = 0;
/** A session as the embed draws it: 32 URL-safe characters. */
const session = () => `visit-${String(++visits).padStart(4, '0')}-abcdefghijklmnopqrst`;

const progress = async (app: App, id: string, body: object) =>
  app.inject({ method: 'POST', url: `/api/forms/${id}/progress`, payload: { _token: await tokenFor(app, 'forms', id), ...body } });
const submit = async (app: App, id: string, body: object) =>
  app.inject({ method: 'POST', url: `/api/forms/${id}/submit`, payload: { _token: await tokenFor(app, 'forms', id), ...body } });

interface Listed {
  id: string;
  status: string;
  last_page: string | null;
  answers: Record<string, unknown>;
  hidden?: Record<string, string>;
  metadata?: unknown;
  consent_record?: unknown;
}
const list = async (app: App, who: Owner, id: string, status?: string): Promise<Listed[]> => {
  const reply = await app.inject({ method: 'GET', url: `/api/forms/${id}/responses${status ? `?status=${status}` : ''}`, headers: who.headers });
  if (reply.statusCode !== 200) throw new Error(reply.body);
  return reply.json().responses;
};

t.test('a form that keeps partial responses', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedForm(app, biz, FORM);

  t.test('the public form says that it keeps pages, its settings staying the owner\'s', async (t) => {
    const view = (await app.inject({ method: 'GET', url: `/api/forms/${id}` })).json();
    t.equal(view.keep_partial, true);
    t.notOk('settings' in view);
  });

  t.test('a page kept shows as a partial response with its last page; the submission completes it under the same id', async (t) => {
    const visit = session();
    const page = await progress(app, id, { session: visit, page: 'about', answers: { name: 'Ann', role: 'des' }, hidden: { utm_source: 'mail' } });
    t.equal(page.statusCode, 200, page.body);
    t.same(page.json(), { success: true });
    t.same(await list(app, biz, id), [], 'the default list holds complete responses only');
    const [partial, ...others] = await list(app, biz, id, 'partial');
    t.equal(others.length, 0);
    t.match(partial, { status: 'partial', last_page: 'about', answers: { name: 'Ann', role: 'des' }, hidden: { utm_source: 'mail' } });
    t.notOk('metadata' in partial!, 'nothing of the request is kept of a page');
    t.same((await list(app, biz, id, 'all')).map((r) => r.id), [partial!.id], 'all: the partial one too');

    const second = await progress(app, id, { session: visit, page: 'design', answers: { name: 'Ann', role: 'des', tool: 'Figma' } });
    t.equal(second.statusCode, 200, second.body);
    t.match(await list(app, biz, id, 'partial'), [{ id: partial!.id, last_page: 'design', answers: { tool: 'Figma' } }], 'a later page replaces the one before, under the same id');

    const sent = await submit(app, id, { session: visit, answers: { name: 'Ann', role: 'des', tool: 'Figma', fan: true } });
    t.equal(sent.statusCode, 200, sent.body);
    t.equal(sent.json().id, partial!.id, 'the submission answers the partial response\'s id');
    t.match(await list(app, biz, id), [{ id: partial!.id, status: 'complete', last_page: null, answers: { fan: true } }], 'complete now');
    t.same(await list(app, biz, id, 'partial'), [], 'and no longer partial');
    t.equal((await list(app, biz, id, 'all')).length, 1, 'one response for the visit');

    const again = await progress(app, id, { session: visit, page: 'about', answers: { name: 'Ann' } });
    t.equal(again.statusCode, 409);
    t.match(again.json(), { statusCode: 409, code: 'duplicate_submission' });
    t.match((await submit(app, id, { session: visit, answers: { name: 'Ann', role: 'des', tool: 'Figma', fan: true } })).json(), { code: 'duplicate_submission' }, 'a second submission of the session too');
  });

  t.test('a submission with a session never sent as a page is complete as before', async (t) => {
    const sent = await submit(app, id, { session: session(), answers: { name: 'Bo', role: 'dev', fan: false } });
    t.equal(sent.statusCode, 200, sent.body);
    t.match((await list(app, biz, id)).find((r) => r.id === sent.json().id), { status: 'complete' });
  });

  t.test('answers are checked as far as the page being left', async (t) => {
    const later = await progress(app, id, { session: session(), page: 'about', answers: { name: 'Cy', role: 'des', tool: 'Figma' } });
    t.equal(later.statusCode, 400);
    t.match(later.json(), { statusCode: 400, code: 'validation_error', details: [{ path: 'answers.tool', message: 'is on page design, after page about, so it takes no answer yet' }] });
    const skipped = await progress(app, id, { session: session(), page: 'verdict', answers: { name: 'Cy', role: 'dev', tool: 'Figma' } });
    t.same(skipped.json().details, [{ path: 'answers.tool', message: 'is on page design, which these answers skip, so it takes no answer' }], 'an answer on a skipped page');
    const hidden = await progress(app, id, { session: session(), page: 'about', answers: { name: 'Cy', role: 'des', language: 'Go' } });
    t.same(hidden.json().details, [{ path: 'answers.language', message: 'is hidden by its condition (show_if) for these answers, so it takes no answer' }], 'an answer hidden by show_if');
    const offPath = await progress(app, id, { session: session(), page: 'design', answers: { name: 'Cy', role: 'dev' } });
    t.same(offPath.json().details, [{ path: 'page', message: 'is not on the path these answers take' }], 'a page the path skips');
    t.same((await progress(app, id, { session: session(), page: 'nowhere', answers: {} })).json().details, [{ path: 'page', message: 'is not a page of this form' }]);
    t.match((await progress(app, id, { session: session(), page: 'about', answers: { role: 'admin' } })).json(), { code: 'validation_error', details: [{ path: 'answers.role' }] }, 'answers are checked as a submission checks them');
    t.equal((await progress(app, id, { session: session(), page: 'about', answers: { role: 'des' } })).statusCode, 200, 'none is required yet');
    t.match((await progress(app, id, { session: 'short', page: 'about', answers: {} })).json(), { statusCode: 400, code: 'validation_error', details: [{ path: 'session' }] }, 'a session of fewer than 16 characters');
    t.match((await progress(app, id, { session: session(), page: 'about', answers: {}, hidden: { campaign: 'x' } })).json(), { code: 'validation_error', details: [{ path: 'hidden.campaign' }] });
  });

  t.test('the same gates as a submission', async (t) => {
    const token = await app.inject({ method: 'POST', url: `/api/forms/${id}/progress`, payload: { session: session(), page: 'about', answers: {} } });
    t.match(token.json(), { statusCode: 403, code: 'invalid_token' });
    const missing = await app.inject({ method: 'POST', url: '/api/forms/frm_01JD3Q5V8K2M4N6P8R0S2T4V6Z/progress', payload: { session: session(), page: 'about', answers: {} } });
    t.match(missing.json(), { statusCode: 404, code: 'form_not_found' });
  });

  t.test('the partial responses are counted in no summary', async (t) => {
    const browser = await signIn(app, services, biz.accountId);
    const summary = await app.inject({ method: 'GET', url: `/dashboard/api/forms/${id}/summary`, headers: { cookie: browser.cookie } });
    t.equal(summary.statusCode, 200, summary.body);
    t.equal(summary.json().total, (await list(app, biz, id)).length, 'the total is the complete responses');
    t.ok((await list(app, biz, id, 'partial')).length > 0, 'while partial ones are kept');
  });

  t.test('the downloads: complete by default; with status, the status and last page of each', async (t) => {
    const browser = await signIn(app, services, biz.accountId);
    const get = (url: string) => app.inject({ method: 'GET', url, headers: { cookie: browser.cookie } });
    const plain = await get(`/dashboard/api/forms/${id}/responses.csv`);
    t.equal(plain.statusCode, 200);
    t.equal(plain.body.trim().split('\r\n').length - 1, (await list(app, biz, id)).length, 'a row per complete response');
    t.notMatch(plain.body.split('\r\n')[0], /"status"/, 'no status column when all are complete');
    const all = await get(`/dashboard/api/forms/${id}/responses.csv?status=all`);
    const [header, ...rows] = all.body.trim().split('\r\n');
    t.match(header, /^"id","submitted_at","status","last_page",/);
    t.equal(rows.length, (await list(app, biz, id, 'all')).length);
    t.ok(rows.some((row) => row.includes('"partial","about"')), 'a partial one with its last page');
    const ndjson = await get(`/dashboard/api/forms/${id}/responses.ndjson?status=partial`);
    const lines = ndjson.body.trim().split('\n').map((line) => JSON.parse(line));
    t.ok(lines.length > 0 && lines.every((r) => r.status === 'partial' && typeof r.last_page === 'string'), 'NDJSON: partial ones only, each with its status and last page');
  });
});

t.test('a form that does not keep partial responses refuses a page with 403 partial_responses_off', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedForm(app, biz, { ...FORM, settings: {} });
  const reply = await progress(app, id, { session: session(), page: 'about', answers: { name: 'Ann' } });
  t.equal(reply.statusCode, 403);
  t.same(reply.json(), { statusCode: 403, code: 'partial_responses_off', error: 'Forbidden', message: 'This form does not keep partial responses (settings.keep_partial is off)' });
  t.same(await list(app, biz, id, 'all'), [], 'nothing kept');
});

t.test('partial responses take no max_responses place', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedForm(app, biz, { ...FORM, settings: { keep_partial: true, max_responses: 1 } });
  const [first, second] = [session(), session()];
  t.equal((await progress(app, id, { session: first, page: 'about', answers: { name: 'Ann', role: 'dev' } })).statusCode, 200);
  t.equal((await progress(app, id, { session: second, page: 'about', answers: { name: 'Bo', role: 'dev' } })).statusCode, 200);
  const sent = await submit(app, id, { session: second, answers: { name: 'Bo', role: 'dev', fan: true } });
  t.equal(sent.statusCode, 200, 'two partial responses kept, the one place is still free');
  t.match((await submit(app, id, { session: first, answers: { name: 'Ann', role: 'dev', fan: true } })).json(), { statusCode: 403, code: 'form_closed' }, 'the place taken, the form is closed');
  t.match((await progress(app, id, { session: session(), page: 'about', answers: { name: 'Cy' } })).json(), { code: 'form_closed' }, 'to pages too');
  t.equal((await list(app, biz, id)).length, 1);
});

t.test('an erased partial response is gone, and its session takes no page after', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedForm(app, biz, FORM);
  const visit = session();
  await progress(app, id, { session: visit, page: 'about', answers: { name: 'Ann', role: 'des' } });
  const [partial] = await list(app, biz, id, 'partial');
  const erased = await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { formId: id, ids: [partial!.id] } });
  t.match(erased.json(), { success: true, deleted: 1 });
  t.same(await list(app, biz, id, 'all'), []);
  t.match((await progress(app, id, { session: visit, page: 'about', answers: { name: 'Ann' } })).json(), { statusCode: 409, code: 'duplicate_submission' });
  t.match((await submit(app, id, { session: visit, answers: { name: 'Ann', role: 'dev', fan: true } })).json(), { statusCode: 409, code: 'duplicate_submission' });
});

t.test('a sealed partial response, then erased: the history still verifies, its pages counted as erased', async (t) => {
  const { app, who, services } = await live(t);
  const id = await publishedForm(app, who, FORM);
  const visit = session();
  await progress(app, id, { session: visit, page: 'about', answers: { name: 'Ann', role: 'des' } });
  await progress(app, id, { session: visit, page: 'design', answers: { name: 'Ann', role: 'des', tool: 'Figma' } });
  await services.seals.sealAll();
  const [partial] = await list(app, who, id, 'partial');
  t.match((await app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload: { formId: id, ids: [partial!.id] } })).json(), { success: true, deleted: 1 });
  await services.seals.sealAll();
  const verified = await verifyHistory(services.events);
  t.equal(verified.firstBreak, undefined, 'no break where the pages were');
  t.equal(verified.erased, 2, 'both pages erased lawfully');
});
