import t from 'tap';
import type { App } from '../../src/app.js';
import { BRANCHING_EXAMPLE } from '../../src/forms/schemas.js';
import { walk } from '../../src/embeddables/evaluate.js';
import { owner, testApp, tokenFor, type Owner } from '../support/app.js';
import { formAndAnswers } from '../support/logic-forms.js';
import fc from '../support/properties.js';
import { signIn } from '../dashboard/support.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';

async function publishedForm(app: App, who: Owner, body: object): Promise<string> {
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: who.headers, payload: body });
  if (created.statusCode !== 201) throw new Error(created.body);
  const id = created.json().id;
  const published = await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: who.headers, payload: { published: true } });
  if (published.statusCode !== 200) throw new Error(published.body);
  return id;
}

const submit = async (app: App, id: string, answers: object) =>
  app.inject({ method: 'POST', url: `/api/forms/${id}/submit`, headers: { 'user-agent': UA }, remoteAddress: '203.0.113.9', payload: { answers, _token: await tokenFor(app, 'forms', id) } });

const responseOf = async (app: App, who: Owner, formId: string, responseId: string) =>
  (await app.inject({ method: 'GET', url: `/api/forms/${formId}/responses`, headers: who.headers })).json().responses.find((r: { id: string }) => r.id === responseId);

t.test('given the three-page form with a jump and two endings', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedForm(app, biz, BRANCHING_EXAMPLE);

  t.test('GET shows its pages, rules, endings and presentation', async (t) => {
    const form = (await app.inject({ method: 'GET', url: `/api/forms/${id}` })).json();
    t.match(form, { pages: BRANCHING_EXAMPLE.pages, logic: BRANCHING_EXAMPLE.logic, endings: BRANCHING_EXAMPLE.endings, presentation: 'all' });
    t.match(form.questions[1], { id: 'role_other', show_if: { question: 'role', op: 'equals', value: 'other' } });
  });

  t.test('a required question on a page the path skips is not required, and the response records its ending', async (t) => {
    const reply = await submit(app, id, { role: 'designer', score: 10 });
    t.equal(reply.statusCode, 200, reply.body);
    t.match(await responseOf(app, biz, id, reply.json().id), { answers: { role: 'designer', score: 10 }, ending: 'fans' });
  });

  t.test('no rule holding, the last page ends on the default ending: null', async (t) => {
    const reply = await submit(app, id, { role: 'developer', languages: ['go'], score: 7 });
    t.equal(reply.statusCode, 200, reply.body);
    t.match(await responseOf(app, biz, id, reply.json().id), { ending: null });
    const sorry = await submit(app, id, { role: 'developer', languages: ['go'], score: 2 });
    t.match(await responseOf(app, biz, id, sorry.json().id), { ending: 'sorry' });
  });

  t.test('on the path, a required question is required', async (t) => {
    const reply = await submit(app, id, { role: 'developer', score: 9 });
    t.equal(reply.statusCode, 400);
    t.match(reply.json(), { code: 'validation_error', details: [{ path: 'answers.languages', message: 'is required' }] });
  });

  t.test('an answer to a question on a skipped page is 400 naming it', async (t) => {
    const reply = await submit(app, id, { role: 'designer', languages: ['rust'], score: 9 });
    t.equal(reply.statusCode, 400);
    t.same(reply.json().details, [{ path: 'answers.languages', message: 'is on page code, which these answers skip, so it takes no answer' }]);
  });

  t.test('show_if hides and un-requires; an answer to a hidden question is 400 naming it', async (t) => {
    t.match((await submit(app, id, { role: 'other', score: 9 })).json(), { details: [{ path: 'answers.role_other', message: 'is required' }] }, 'shown, it is required');
    t.equal((await submit(app, id, { role: 'other', role_other: 'Writer', score: 9 })).statusCode, 200);
    const hidden = await submit(app, id, { role: 'designer', role_other: 'Writer', score: 9 });
    t.equal(hidden.statusCode, 400);
    t.same(hidden.json().details, [{ path: 'answers.role_other', message: 'is hidden by its condition (show_if) for these answers, so it takes no answer' }]);
    t.equal((await submit(app, id, { role: 'designer', role_other: '', score: 9 })).statusCode, 200, 'a blank answer off the path is dropped');
  });

  t.test('the downloads carry the ending of each response: a CSV column (empty: the default), and NDJSON', async (t) => {
    const browser = await signIn(app, services, biz.accountId);
    const csv = await app.inject({ method: 'GET', url: `/dashboard/api/forms/${id}/responses.csv`, headers: { cookie: browser.cookie } });
    t.equal(csv.statusCode, 200);
    const [header, ...rows] = csv.body.trim().split('\r\n');
    const at = header!.split(',').indexOf('"ending"');
    t.ok(at > 0, 'an ending column');
    const endings = rows.map((row) => row.split(',')[at]);
    t.ok(endings.includes('"fans"') && endings.includes('"sorry"') && endings.includes('""'), 'fans, sorry and the default');
    const ndjson = await app.inject({ method: 'GET', url: `/dashboard/api/forms/${id}/responses.ndjson`, headers: { cookie: browser.cookie } });
    t.same(new Set(ndjson.body.trim().split('\n').map((line) => JSON.parse(line).ending)), new Set(['fans', 'sorry', null]));
  });
});

t.test('a definition that breaks a rule is 400 at create and at update, a detail naming the rule', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const create = (changes: object) => app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { ...BRANCHING_EXAMPLE, ...changes } });
  const cases: Array<[string, object, { path: string; message: RegExp }]> = [
    ['a backward jump', { logic: [{ page: 'rating', if: { question: 'score', op: 'answered' }, go_to: 'about' }] }, { path: 'body.logic.0.go_to', message: /back to page about; a jump may only go to a later page or an ending/ }],
    ['an unknown target', { logic: [{ page: 'about', if: { question: 'role', op: 'answered' }, go_to: 'nowhere' }] }, { path: 'body.logic.0.go_to', message: /nowhere is neither a page nor an ending/ }],
    ['a rule reading a later question', { logic: [{ page: 'about', if: { question: 'score', op: 'less_than', value: 5 }, go_to: 'rating' }] }, { path: 'body.logic.0.if.question', message: /score, a question on a later page/ }],
    [
      'a condition on a later question',
      { questions: BRANCHING_EXAMPLE.questions.map((q) => (q.id === 'role_other' ? { ...q, show_if: { question: 'score', op: 'answered' } } : q)) },
      { path: 'body.questions.1.show_if.question', message: /reads score, a later question/ },
    ],
    ['a question on no page', { pages: BRANCHING_EXAMPLE.pages.slice(0, 2), logic: [] }, { path: 'body.questions.3.id', message: /score is on no page/ }],
    ['a question on two pages', { pages: [...BRANCHING_EXAMPLE.pages, { id: 'again', question_ids: ['score'] }] }, { path: 'body.pages.3.question_ids.0', message: /on two pages/ }],
    ['an unknown question on a page', { pages: [...BRANCHING_EXAMPLE.pages, { id: 'more', question_ids: ['ghost'] }] }, { path: 'body.pages.3.question_ids.0', message: /ghost is not a question/ }],
    ['an operator that does not fit', { logic: [{ page: 'rating', if: { question: 'score', op: 'contains', value: 'x' }, go_to: 'fans' }] }, { path: 'body.logic.0.if.value', message: /contains applies to multiple choice and text/ }],
  ];
  for (const [name, changes, detail] of cases) {
    const reply = await create(changes);
    t.equal(reply.statusCode, 400, name);
    t.match(reply.json(), { code: 'validation_error', details: [detail] }, name);
  }
  const shape = await create({ logic: [{ page: 'about', if: { question: 'role', op: 'between' }, go_to: 'rating' }] });
  t.equal(shape.statusCode, 400, 'an unknown operator is refused by the schema');

  const id = (await create({})).json().id;
  const update = await app.inject({
    method: 'PUT',
    url: `/api/forms/${id}`,
    headers: biz.headers,
    payload: { questions: [...BRANCHING_EXAMPLE.questions, { id: 'more', type: 'long_text', title: 'Anything else?' }] },
  });
  t.equal(update.statusCode, 400, 'a question added with no page');
  t.match(update.json().details, [{ path: 'body.questions.4.id', message: /more is on no page/ }]);
  const fixed = await app.inject({
    method: 'PUT',
    url: `/api/forms/${id}`,
    headers: biz.headers,
    payload: { questions: [...BRANCHING_EXAMPLE.questions, { id: 'more', type: 'long_text', title: 'Anything else?' }], pages: [...BRANCHING_EXAMPLE.pages, { id: 'last', question_ids: ['more'] }], presentation: 'one_by_one' },
  });
  t.equal(fixed.statusCode, 200, fixed.body);
  t.match((await app.inject({ method: 'GET', url: `/api/forms/${id}`, headers: biz.headers })).json(), { presentation: 'one_by_one', pages: { length: 4 } });
  const jumpBack = await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: biz.headers, payload: { logic: [{ page: 'last', if: { question: 'more', op: 'answered' }, go_to: 'code' }] } });
  t.match(jumpBack.json(), { code: 'validation_error', details: [{ path: 'body.logic.0.go_to' }] }, 'a rule alone is checked against the stored pages');
});

t.test('custom widgets take pages, conditions and endings; other types do not', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const flow = {
    questions: [
      { id: 'happy', type: 'yes_no', title: 'Happy?', required: true },
      { id: 'why', type: 'long_text', title: 'Why not?', required: true, show_if: { question: 'happy', op: 'equals', value: false } },
    ],
    endings: [{ id: 'glad', title: 'Glad to hear it', message: 'Thanks!' }],
    logic: [{ page: 'page_1', if: { question: 'happy', op: 'equals', value: true }, go_to: 'glad' }],
  };
  const nps = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'nps', title: 'NPS', ...flow } });
  t.match(nps.json(), { code: 'validation_error', details: [{ path: 'body.widget_type' }] });
  const created = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'custom', title: 'Mood', ...flow } });
  t.equal(created.statusCode, 201, created.body);
  const id = created.json().id;
  await app.inject({ method: 'PUT', url: `/api/widgets/${id}`, headers: biz.headers, payload: { published: true } });
  t.match((await app.inject({ method: 'GET', url: `/api/widgets/${id}` })).json(), { pages: [], endings: flow.endings, logic: flow.logic });
  const send = async (answers: object) =>
    app.inject({ method: 'POST', url: `/api/widgets/${id}/submit`, headers: { 'user-agent': UA }, payload: { answers, _token: await tokenFor(app, 'widgets', id) } });
  const glad = await send({ happy: true });
  t.equal(glad.statusCode, 200, glad.body);
  const list = (await app.inject({ method: 'GET', url: `/api/widgets/${id}/responses`, headers: biz.headers })).json();
  t.match(list.responses[0], { id: glad.json().id, ending: 'glad' });
  t.match((await send({ happy: false })).json(), { details: [{ path: 'answers.why', message: 'is required' }] });
  t.match((await send({ happy: true, why: 'no reason' })).json(), { details: [{ path: 'answers.why', message: /hidden by its condition/ }] });
});

t.test('property: for random forms and answers, the server accepts exactly what the evaluator’s path allows, and records its ending', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  await fc.assert(
    fc.asyncProperty(formAndAnswers, async ({ form, answers }) => {
      const id = await publishedForm(app, biz, { title: 'Random', ...form });
      const path = walk(form, answers);
      const offPath = Object.keys(answers).filter((q) => !path.questions.includes(q));
      const missing = form.questions.filter((q) => q.required && path.questions.includes(q.id) && !(q.id in answers)).map((q) => q.id);
      const reply = await submit(app, id, answers);
      if (offPath.length === 0 && missing.length === 0) {
        if (reply.statusCode !== 200) return false;
        return (await responseOf(app, biz, id, reply.json().id)).ending === path.ending;
      }
      const named = (reply.json().details as Array<{ path: string }>).map((d) => d.path.slice('answers.'.length)).sort();
      return reply.statusCode === 400 && JSON.stringify(named) === JSON.stringify([...offPath, ...missing].sort());
    }),
    { numRuns: 25 },
  );
  t.pass('the server and the evaluator agree');
});
