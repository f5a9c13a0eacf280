/** D5 on every K endpoint: Bob's key never reads or changes Alice's objects or responses. */
import t from 'tap';
import { owner, testApp, tokenFor } from '../support/app.js';
import { snapshotReadModels } from '../support/services.js';

t.test('cross-owner access is impossible on every K endpoint', async (t) => {
  const { app, services } = await testApp(t);
  const alice = await owner(services);
  const bob = await owner(services);
  const create = async (url: string, payload: object, publish: boolean) => {
    const id = (await app.inject({ method: 'POST', url, headers: alice.headers, payload })).json().id as string;
    if (publish) await app.inject({ method: 'PUT', url: `${url}/${id}`, headers: alice.headers, payload: { published: true } });
    return id;
  };
  const ids = {
    widget: await create('/api/widgets', { widget_type: 'feedback', title: 'Alice widget' }, true),
    draftWidget: await create('/api/widgets', { widget_type: 'feedback', title: 'Alice draft' }, false),
    form: await create('/api/forms', { title: 'Alice form', questions: [{ id: 'q', type: 'short_text', title: 'Q' }] }, true),
    draftForm: await create('/api/forms', { title: 'Alice draft form' }, false),
    poll: await create('/api/polls', { question: 'Alice?', options: [{ text: 'A' }, { text: 'B' }] }, true),
    draftPoll: await create('/api/polls', { question: 'Draft?', options: [{ text: 'A' }, { text: 'B' }] }, false),
  };
  const responseId = (await app.inject({ method: 'POST', url: `/api/widgets/${ids.widget}/submit`, payload: { answers: { rating: 3 }, _token: await tokenFor(app, 'widgets', ids.widget) } })).json().id;
  const formResponse = (await app.inject({ method: 'POST', url: `/api/forms/${ids.form}/submit`, payload: { answers: { q: 'secret' }, _token: await tokenFor(app, 'forms', ids.form) } })).json().id;
  const bobsWidget = await (async () => {
    const id = (await app.inject({ method: 'POST', url: '/api/widgets', headers: bob.headers, payload: { widget_type: 'nps', title: 'Bob' } })).json().id as string;
    return id;
  })();
  const before = await snapshotReadModels(services);
  const as = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, payload?: object) =>
    app.inject({ method, url, headers: bob.headers, ...(payload ? { payload } : {}) });

  const cases: Array<[string, () => ReturnType<typeof as>, number, string | null]> = [
    ['GET /api/widgets lists only own', () => as('GET', '/api/widgets'), 200, null],
    ['GET /api/forms lists only own', () => as('GET', '/api/forms'), 200, null],
    ['GET /api/polls lists only own', () => as('GET', '/api/polls'), 200, null],
    ['GET another’s unpublished widget', () => as('GET', `/api/widgets/${ids.draftWidget}`), 404, 'widget_not_found'],
    ['GET another’s unpublished form', () => as('GET', `/api/forms/${ids.draftForm}`), 404, 'form_not_found'],
    ['GET another’s unpublished poll', () => as('GET', `/api/polls/${ids.draftPoll}`), 404, 'poll_not_found'],
    ['GET another’s unpublished poll results', () => as('GET', `/api/polls/${ids.draftPoll}/results`), 404, 'poll_not_found'],
    ['PUT another’s widget', () => as('PUT', `/api/widgets/${ids.widget}`, { title: 'Bob was here', published: false }), 404, 'widget_not_found'],
    ['PUT another’s form', () => as('PUT', `/api/forms/${ids.form}`, { title: 'Bob was here' }), 404, 'form_not_found'],
    ['PUT another’s poll', () => as('PUT', `/api/polls/${ids.poll}`, { question: 'Bob?' }), 404, 'poll_not_found'],
    ['DELETE another’s widget', () => as('DELETE', `/api/widgets/${ids.widget}`), 404, 'widget_not_found'],
    ['DELETE another’s form', () => as('DELETE', `/api/forms/${ids.form}`), 404, 'form_not_found'],
    ['DELETE another’s poll', () => as('DELETE', `/api/polls/${ids.poll}`), 404, 'poll_not_found'],
    ['GET another’s widget responses', () => as('GET', `/api/widgets/${ids.widget}/responses`), 404, 'widget_not_found'],
    ['GET another’s form responses', () => as('GET', `/api/forms/${ids.form}/responses`), 404, 'form_not_found'],
    ['DELETE /api/responses on another’s widget', () => as('DELETE', '/api/responses', { ids: [responseId], widgetId: ids.widget }), 404, 'widget_not_found'],
    ['DELETE /api/responses on another’s form', () => as('DELETE', '/api/responses', { ids: [formResponse], formId: ids.form }), 404, 'form_not_found'],
    ['DELETE /api/responses on another’s poll', () => as('DELETE', '/api/responses', { ids: ['vote_x'], pollId: ids.poll }), 404, 'poll_not_found'],
  ];
  for (const [name, send, status, code] of cases) {
    t.test(name, async (t) => {
      const reply = await send();
      t.equal(reply.statusCode, status);
      if (code) t.match(reply.json(), { statusCode: status, code });
      else t.notMatch(reply.body, new RegExp(Object.values(ids).join('|')), 'none of Alice’s objects is listed, drafts included');
      t.notMatch(reply.body, /secret/);
    });
  }
  t.test('another’s response ids through one’s own widget erase nothing', async (t) => {
    t.match((await as('DELETE', '/api/responses', { ids: [responseId, formResponse], widgetId: bobsWidget })).json(), { success: true, deleted: 0, erasure_id: /^ers_/ });
  });
  t.test('published objects read the same for Bob as for anyone: no settings, no responses', async (t) => {
    const reply = (await as('GET', `/api/widgets/${ids.widget}`)).json();
    t.equal(reply.title, 'Alice widget');
    t.notOk('settings' in reply);
  });
  t.test('and nothing of Alice’s changed', async (t) => {
    t.same(await snapshotReadModels(services), before);
  });
});
