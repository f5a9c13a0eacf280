import t from 'tap';
import type { App } from '../../src/app.js';
import { manualClock, owner, testApp, tokenFor, type Owner } from '../support/app.js';
import { snapshotReadModels } from '../support/services.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });
const CONSENT = { id: 'gdpr', type: 'consent', title: 'Privacy', text: 'I agree that Acme stores my answers for 12 months.', required: true };
const QUESTIONS = [{ id: 'name', type: 'short_text', title: 'Your name', required: true }, CONSENT];
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

async function createForm(app: App, who: Owner, body: object = {}, publish = true): Promise<string> {
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: who.headers, payload: { title: 'Signup', questions: QUESTIONS, ...body } });
  if (created.statusCode !== 201) throw new Error(created.body);
  if (publish) await app.inject({ method: 'PUT', url: `/api/forms/${created.json().id}`, headers: who.headers, payload: { published: true } });
  return created.json().id;
}

const submit = async (app: App, id: string, answers: object, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: `/api/forms/${id}/submit`, headers: { 'user-agent': UA, ...headers }, remoteAddress: '203.0.113.9', payload: { answers, _token: await tokenFor(app, 'forms', id) } });

t.test('forms: create, list, get, update with versions, publish, delete', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const other = await owner(services);
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Signup', questions: QUESTIONS } });
  t.equal(created.statusCode, 201);
  t.strictSame(Object.keys(created.json()).sort(), ['created_at', 'id', 'published', 'title', 'version']);
  t.match(created.json(), { title: 'Signup', published: false, version: 1 });
  const id = created.json().id;

  const list = (await app.inject({ method: 'GET', url: '/api/forms', headers: biz.headers })).json();
  t.match(list, { forms: [{ id, title: 'Signup', published: false, version: 1 }], pagination: { page: 1, limit: 50, total: 1, totalPages: 1 } });
  t.same((await app.inject({ method: 'GET', url: '/api/forms', headers: other.headers })).json().forms, [], 'only own forms');

  const get = (headers?: Record<string, string>) => app.inject({ method: 'GET', url: `/api/forms/${id}`, headers });
  t.match((await get()).json(), D3(403, 'form_not_published'));
  t.match((await get(other.headers)).json(), D3(404, 'form_not_found'));
  t.match((await get(biz.headers)).json(), { id, title: 'Signup', questions: QUESTIONS, version: 1, published: false, closed: false, settings: { allowed_domains: [] } });
  t.match((await app.inject({ method: 'GET', url: '/api/forms/frm_nope' })).json(), D3(404, 'form_not_found'));

  const put = (payload: object, who = biz) => app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: who.headers, payload });
  const renamed = (await put({ title: 'Sign up' })).json();
  t.strictSame(Object.keys(renamed).sort(), ['id', 'published', 'title', 'updated_at', 'version']);
  t.match(renamed, { title: 'Sign up', version: 1 }, 'a title change keeps the version');
  t.match((await put({ questions: [...QUESTIONS, { id: 'age', type: 'nps', title: 'Age?' }] })).json(), { version: 2 }, 'a question change raises it');
  t.match((await put({ questions: [...QUESTIONS, { id: 'age', type: 'nps', title: 'Age?' }] })).json(), { version: 2 }, 'the same questions again do not');
  t.match((await put({ published: true })).json(), { published: true, version: 2 });
  const anonymous = (await get()).json();
  t.match(anonymous, { id, published: true, version: 2 });
  t.notOk('settings' in anonymous);
  t.notOk('created_at' in anonymous || 'updated_at' in anonymous, 'nor the timestamps, as for a widget');
  t.match((await get(biz.headers)).json(), { created_at: String, updated_at: String }, 'which the owner sees');
  t.match((await put({ questions: [] })).json(), D3(400, 'validation_error'), 'a published form keeps a question');
  t.match((await put({ questions: [CONSENT, { ...CONSENT, id: 'again' }] })).json(), D3(400, 'validation_error'), 'one consent question at most');
  t.match((await put({ title: 'Mine now' }, other)).json(), D3(404, 'form_not_found'));
  t.match((await put({ version: 9 })).json(), D3(400, 'validation_error'), 'the version is not the client’s to set');
  t.equal((await get(biz.headers)).json().title, 'Sign up', 'nothing changed');

  const empty = await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Draft' } });
  t.equal(empty.statusCode, 201, 'a draft may start without questions');
  t.match((await app.inject({ method: 'PUT', url: `/api/forms/${empty.json().id}`, headers: biz.headers, payload: { published: true } })).json(), D3(400, 'validation_error'), '...but not be published so');

  t.match((await app.inject({ method: 'DELETE', url: `/api/forms/${id}`, headers: other.headers })).json(), D3(404, 'form_not_found'));
  t.same((await app.inject({ method: 'DELETE', url: `/api/forms/${id}`, headers: biz.headers })).json(), { success: true });
  for (const [method, path] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['GET', '/token'], ['POST', '/submit'], ['GET', '/responses']] as const) {
    t.match((await app.inject({ method, url: `/api/forms/${id}${path}`, headers: biz.headers, ...(method !== 'GET' && method !== 'DELETE' ? { payload: {} } : {}) })).json(), D3(404, 'form_not_found'), `${method} ${path} after delete`);
  }
});

t.test('form submissions: tokens, order of checks, consent required', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const id = await createForm(app, biz, { settings: { allowed_domains: ['acme.example'], closes_at: '2026-11-23T00:00:00Z' } });
  const token = await tokenFor(app, 'forms', id);
  t.equal((await app.inject({ method: 'GET', url: `/api/forms/${id}/token` })).json().expiresIn, 1800);
  const draft = await createForm(app, biz, {}, false);
  t.match((await app.inject({ method: 'GET', url: `/api/forms/${draft}/token` })).json(), D3(403, 'form_not_published'));
  const post = (payload: object, headers: Record<string, string> = { origin: 'https://acme.example' }) =>
    app.inject({ method: 'POST', url: `/api/forms/${id}/submit`, headers, payload });

  t.match((await app.inject({ method: 'POST', url: `/api/forms/${draft}/submit`, payload: { answers: {} } })).json(), D3(403, 'form_not_published'));
  t.match((await post({ answers: { name: 'Ann', gdpr: true } })).json(), D3(403, 'invalid_token'));
  const sibling = await createForm(app, biz);
  t.match((await post({ answers: { name: 'Ann', gdpr: true }, _token: await tokenFor(app, 'forms', sibling) })).json(), D3(403, 'invalid_token'), "another form's token");
  t.match((await post({ answers: { name: 'Ann', gdpr: true }, _token: token }, { origin: 'https://evil.example' })).json(), D3(403, 'domain_not_allowed'));
  t.match((await post({ answers: { name: 'Ann', gdpr: false }, _token: token })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'answers.gdpr' }] }, 'consent refused');
  t.match((await post({ answers: { name: 'Ann' }, _token: token })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'answers.gdpr', message: 'is required' }] }, 'consent missing');
  t.match((await post({ answers: { name: 'Ann', gdpr: 'yes' }, _token: token })).json(), D3(400, 'validation_error'), 'consent is a boolean');
  const ok = await post({ answers: { name: 'Ann', gdpr: true }, _token: token });
  t.equal(ok.statusCode, 200);
  t.strictSame(Object.keys(ok.json()).sort(), ['id', 'success']);
  clock.set('2026-11-23T00:00:00.000Z');
  t.match((await post({ answers: { name: 'Ann', gdpr: true }, _token: token })).json(), D3(403, 'form_closed'));
  t.match((await app.inject({ method: 'GET', url: `/api/forms/${id}` })).json(), { closed: true });

  const limited = await createForm(app, biz, { settings: { max_responses: 1 } });
  t.equal((await submit(app, limited, { name: 'A', gdpr: true })).statusCode, 200);
  t.match((await submit(app, limited, { name: 'B', gdpr: true })).json(), D3(403, 'form_closed'), 'closed by its response limit');
});

t.test('consent records are built by the server and never change', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const id = await createForm(app, biz);
  const first = (await submit(app, id, { name: 'Ann', gdpr: true })).json().id;
  const responses = async () => (await app.inject({ method: 'GET', url: `/api/forms/${id}/responses`, headers: biz.headers })).json().responses;
  const before = (await responses())[0];
  t.strictSame(Object.keys(before).sort(), ['answers', 'consent_record', 'ending', 'form_id', 'id', 'language', 'last_page', 'metadata', 'status', 'submitted_at']);
  t.same(before.consent_record, {
    consent_given: true,
    timestamp: clock().toISOString(),
    ip_hash: before.metadata.ip_hash,
    user_agent: UA,
    consent_text: CONSENT.text,
    form_version: 1,
  });

  clock.advance(60_000);
  const newText = 'I agree that Acme stores my answers for 24 months.';
  const edited = await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: biz.headers, payload: { questions: [QUESTIONS[0], { ...CONSENT, text: newText }] } });
  t.equal(edited.json().version, 2);
  const second = (await submit(app, id, { name: 'Bob', gdpr: true })).json().id;

  const [latest, earlier] = await responses();
  t.equal(earlier.id, first);
  t.equal(JSON.stringify(earlier.consent_record), JSON.stringify(before.consent_record), 'the earlier record is byte for byte the same');
  t.equal(latest.id, second);
  t.match(latest.consent_record, { consent_text: newText, form_version: 2, consent_given: true });
  const stored = await services.events.readStream(`response-${first}`);
  t.same(stored[0]!.data.consent_record, before.consent_record, 'and so is the event it came from');

  t.match((await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: biz.headers, payload: { consent_record: {} } })).json(), D3(400, 'validation_error'), 'no endpoint takes a consent record');
  const snapshot = await snapshotReadModels(services);
  await services.projections.rebuild();
  t.same(await snapshotReadModels(services), snapshot, 'rebuilds reproduce the records');

  // Erasure takes the record with it; the audit event keeps only the id.
  t.match((await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: [first], formId: id } })).json(), { success: true, deleted: 1, erasure_id: /^ers_/ });
  const all = JSON.stringify(await services.events.readAll({ after: 0n, limit: 100_000 }), (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  t.notMatch(all, /Ann/, 'the erased answers are gone from the store');
  t.match(all, /Bob/);
  t.same((await responses()).map((r: { id: string }) => r.id), [second]);
  t.match((await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: [second], formId: 'frm_nope' } })).json(), D3(404, 'form_not_found'));

  t.same((await app.inject({ method: 'DELETE', url: `/api/forms/${id}`, headers: biz.headers })).json(), { success: true });
  const afterDelete = JSON.stringify(await services.events.readAll({ after: 0n, limit: 100_000 }), (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  t.notMatch(afterDelete, /Bob/, 'deleting the form erases its responses too');
});

t.test('a question id no answer could name (__proto__) is refused where the question is defined', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const proto = { id: '__proto__', type: 'short_text', title: 'T', required: true };
  const form = await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Proto', questions: [proto] } });
  t.match(form.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.questions.0.id' }] });
  const widget = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'custom', title: 'Proto', questions: [proto] } });
  t.match(widget.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.questions.0.id' }] });
  const existing = await createForm(app, biz);
  const updated = await app.inject({ method: 'PUT', url: `/api/forms/${existing}`, headers: biz.headers, payload: { questions: [proto] } });
  t.match(updated.json(), D3(400, 'validation_error'), 'nor on an update');
  // Ids that are names of Object's own methods are ordinary ids: defined, answered, kept.
  const methods = await createForm(app, biz, { questions: [{ id: 'constructor', type: 'short_text', title: 'C', required: true }, { id: 'toString', type: 'short_text', title: 'S' }] });
  const answered = await submit(app, methods, { constructor: 'yes', toString: 'also' });
  t.equal(answered.statusCode, 200, answered.body);
});
