import t from 'tap';
import type { App } from '../../src/app.js';
import type { Services } from '../../src/services.js';
import { owner, testApp, tokenFor, type Owner } from '../support/app.js';
import { fixture } from '../support/fixtures.js';

/**
 * Limits are the API's, and they may tighten; what an older version of the
 * service stored under looser ones stays readable, shown and changeable.
 * Each test appends the created event straight into the store, as that
 * version would have, with values over today's limits.
 */

async function storedByAnOlderVersion(services: Services, type: string, stream: string, data: Record<string, unknown>): Promise<void> {
  const { metadata } = fixture(type);
  const { position } = await services.events.append(stream, [{ type, data, metadata }], 'no_stream');
  if (!(await services.projections.waitFor(position, 5000))) throw new Error('the projections did not take the event');
}

const put = (app: App, who: Owner, path: string, payload: object) => app.inject({ method: 'PUT', url: path, headers: who.headers, payload });

t.test('a widget whose title is over today\'s 200 characters is listed, shown, changed, published and answered', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const title = 'T'.repeat(300);
  const { data } = fixture('WidgetCreated');
  await storedByAnOlderVersion(services, 'WidgetCreated', 'widget-wgt_old', { ...data, widget_id: 'wgt_old', account_id: biz.accountId, title, settings: { ...(data.settings as object), allowed_domains: [] } });

  const list = await app.inject({ method: 'GET', url: '/api/widgets', headers: biz.headers });
  t.equal(list.statusCode, 200);
  t.match(list.json().widgets, [{ id: 'wgt_old', title }], 'listed');
  const shown = await app.inject({ method: 'GET', url: '/api/widgets/wgt_old', headers: biz.headers });
  t.equal(shown.statusCode, 200);
  t.match(shown.json(), { id: 'wgt_old', title, questions: [{ id: 'score' }, { id: 'reason' }] }, 'shown whole');

  const described = await put(app, biz, '/api/widgets/wgt_old', { description: 'Tell us' });
  t.equal(described.statusCode, 200, 'another field changes');
  t.match(described.json(), { title });
  t.match((await put(app, biz, '/api/widgets/wgt_old', { trigger_config: { position: 'top-left' } })).json(), { id: 'wgt_old' }, 'and a nested one');
  t.match((await put(app, biz, '/api/widgets/wgt_old', { published: true })).json(), { published: true }, 'it publishes');
  t.match((await app.inject({ method: 'GET', url: '/api/widgets/wgt_old' })).json(), { title, description: 'Tell us', trigger_config: { position: 'top-left' } }, 'visitors see it');
  const submitted = await app.inject({ method: 'POST', url: '/api/widgets/wgt_old/submit', payload: { answers: { score: 9 }, _token: await tokenFor(app, 'widgets', 'wgt_old') } });
  t.match(submitted.json(), { success: true }, 'and it is answered');
  t.equal((await put(app, biz, '/api/widgets/wgt_old', { title: 'U'.repeat(201) })).statusCode, 400, 'a new title still meets today\'s limit');
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 200, 'and nothing halted');
});

t.test('a form question over today\'s limits, and a poll with more and longer options than today allows, stay usable', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const question = { id: 'story', type: 'long_text', title: 'Q'.repeat(600), required: true };
  const consent = { id: 'consent', type: 'consent', title: 'Consent', text: 'C'.repeat(6000), required: true };
  const form = fixture('FormCreated').data;
  await storedByAnOlderVersion(services, 'FormCreated', 'form-frm_old', { ...form, form_id: 'frm_old', account_id: biz.accountId, questions: [question, consent] });
  t.match((await app.inject({ method: 'GET', url: '/api/forms/frm_old', headers: biz.headers })).json(), { questions: [question, consent] }, 'the form is shown whole');
  t.match((await put(app, biz, '/api/forms/frm_old', { title: 'Our story', published: true })).json(), { title: 'Our story', published: true, version: 1 }, 'changed and published');
  const answered = await app.inject({ method: 'POST', url: '/api/forms/frm_old/submit', payload: { answers: { story: 'Once upon a time', consent: true }, _token: await tokenFor(app, 'forms', 'frm_old') } });
  t.match(answered.json(), { success: true }, 'answered, with its consent');

  const options = Array.from({ length: 25 }, (_, i) => ({ id: `opt_old${i}`, text: `${i}`.padEnd(250, '.') }));
  const poll = fixture('PollCreated').data;
  await storedByAnOlderVersion(services, 'PollCreated', 'poll-pol_old', { ...poll, poll_id: 'pol_old', account_id: biz.accountId, options });
  t.match((await app.inject({ method: 'GET', url: '/api/polls/pol_old', headers: biz.headers })).json(), { options }, 'the poll is shown whole');
  t.match((await put(app, biz, '/api/polls/pol_old', { question: 'Which one?', published: true })).json(), { question: 'Which one?', published: true }, 'changed and published');
  const voted = await app.inject({ method: 'POST', url: '/api/polls/pol_old/vote', payload: { option_ids: ['opt_old24'], _token: await tokenFor(app, 'polls', 'pol_old') } });
  t.match(voted.json(), { success: true }, 'voted on');
  t.match((await app.inject({ method: 'GET', url: '/api/polls/pol_old/results' })).json(), { total_votes: 1, options: { length: 25 } }, 'results count it');
});
