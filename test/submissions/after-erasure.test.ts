import t from 'tap';
import type { App } from '../../src/app.js';
import { owner, publishedWidget, testApp, tokenFor, type Owner } from '../support/app.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

const submit = async (app: App, widget: string, fingerprint: string) =>
  app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 3 }, _token: await tokenFor(app, 'widgets', widget), metadata: { fingerprint } } });

const erase = (app: App, who: Owner, payload: object) => app.inject({ method: 'DELETE', url: '/api/responses', headers: who.headers, payload });

t.test('a visitor whose response was erased: a later submission is a duplicate, never a 500, and takes no slot', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz, { settings: { prevent_duplicates: true, max_responses: 2 } });
  const first = await submit(app, widget, 'visitor-a');
  t.equal(first.statusCode, 200);
  t.match((await erase(app, biz, { ids: [first.json().id], widgetId: widget })).json(), { success: true, deleted: 1 });

  for (let i = 0; i < 3; i++) {
    t.match((await submit(app, widget, 'visitor-a')).json(), D3(409, 'duplicate_submission'), `the erased visitor again (${i + 1})`);
  }
  t.equal((await submit(app, widget, 'visitor-b')).statusCode, 200, 'the second slot was left for another visitor');
  t.match((await submit(app, widget, 'visitor-c')).json(), D3(403, 'widget_closed'), 'and two slots were taken in all');
});

t.test('a voter whose vote was erased: a later vote is a duplicate, never a 500', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const created = await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Tea or coffee?', options: [{ text: 'Tea' }, { text: 'Coffee' }] } });
  const poll = created.json();
  await app.inject({ method: 'PUT', url: `/api/polls/${poll.id}`, headers: biz.headers, payload: { published: true } });
  const vote = async (fingerprint: string) =>
    app.inject({ method: 'POST', url: `/api/polls/${poll.id}/vote`, payload: { option_ids: [poll.options[0].id], _token: await tokenFor(app, 'polls', poll.id), metadata: { fingerprint } } });
  t.equal((await vote('voter-a')).statusCode, 200);
  const [cast] = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((e) => e.type === 'VoteCast');
  t.match((await erase(app, biz, { ids: [cast!.data.vote_id], pollId: poll.id })).json(), { success: true, deleted: 1 });
  t.match((await vote('voter-a')).json(), D3(409, 'duplicate_submission'));
  t.match((await app.inject({ method: 'GET', url: `/api/polls/${poll.id}/results` })).json(), { total_votes: 0 }, 'and the results hold no vote');
});
