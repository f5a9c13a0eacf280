import t from 'tap';
import { owner, testApp } from '../support/app.js';

const QUESTIONS = [
  { id: 'role', type: 'single_choice', title: 'What do you do?', required: true, choices: [{ id: 'dev', label: 'Developer' }, { id: 'other', label: 'Other' }] },
  { id: 'grid', type: 'matrix', title: 'Rate each', rows: [{ id: 'staff', label: 'Staff' }], columns: [{ id: 'good', label: 'Good' }, { id: 'bad', label: 'Bad' }] },
  { id: 'consent', type: 'consent', title: 'Consent', text: 'I agree that Acme keeps my answers.', required: true },
];
const GERMAN = {
  title: 'Umfrage',
  thank_you_title: 'Danke!',
  questions: {
    role: { title: 'Was machen Sie?', choices: { dev: 'Entwicklung', other: 'Anderes' } },
    grid: { rows: { staff: 'Personal' }, columns: { good: 'Gut' } },
    consent: { title: 'Einwilligung', text: 'Ich bin einverstanden, dass Acme meine Antworten speichert.' },
  },
  endings: { done: { title: 'Fertig' } },
};

t.test('a form keeps its language and translations, and visitors read them', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const created = await app.inject({
    method: 'POST',
    url: '/api/forms',
    headers: biz.headers,
    payload: { title: 'Survey', questions: QUESTIONS, endings: [{ id: 'done', title: 'Done', message: 'Bye' }], translations: { de: GERMAN } },
  });
  t.equal(created.statusCode, 201, created.body);
  const id = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: biz.headers, payload: { published: true } });
  const view = (await app.inject({ method: 'GET', url: `/api/forms/${id}` })).json();
  t.equal(view.language, 'en', 'written in English unless the owner says otherwise');
  t.same(view.translations, { de: GERMAN }, 'the public definition the embed reads holds the translations');

  const french = { title: 'Enquête', questions: { consent: { text: "J'accepte qu'Acme garde mes réponses." } } };
  const put = await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: biz.headers, payload: { translations: { de: GERMAN, fr: french } } });
  t.equal(put.statusCode, 200, put.body);
  t.same(Object.keys((await app.inject({ method: 'GET', url: `/api/forms/${id}` })).json().translations).sort(), ['de', 'fr']);
  t.equal((await app.inject({ method: 'GET', url: `/api/forms/${id}` })).json().version, 1, 'translations are not a change of the questions');

  // A question removed takes its translated texts with it.
  const fewer = await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: biz.headers, payload: { questions: [QUESTIONS[0], QUESTIONS[2]] } });
  t.equal(fewer.statusCode, 200, fewer.body);
  const after = (await app.inject({ method: 'GET', url: `/api/forms/${id}` })).json();
  t.notOk('grid' in after.translations.de.questions, 'the matrix is gone from the German texts');
  t.same(after.translations.de.questions.role, GERMAN.questions.role, 'the rest stays');

  const german = await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Umfrage', language: 'de', questions: QUESTIONS, translations: { 'en-GB': { title: 'Survey' } } } });
  t.equal(german.statusCode, 201, german.body);
  t.match((await app.inject({ method: 'GET', url: `/api/forms/${german.json().id}`, headers: biz.headers })).json(), { language: 'de', translations: { 'en-GB': { title: 'Survey' } } });
});

t.test('a translation of what the form does not have is 400 naming it', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const create = (payload: object) => app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Survey', questions: QUESTIONS, ...payload } });
  const cases: Array<[object, string, RegExp]> = [
    [{ translations: { de: { questions: { nope: { title: 'X' } } } } }, 'body.translations.de.questions.nope', /no question nope/],
    [{ translations: { de: { questions: { role: { choices: { ghost: 'X' } } } } } }, 'body.translations.de.questions.role.choices.ghost', /no choice ghost/],
    [{ translations: { de: { questions: { grid: { rows: { ghost: 'X' } } } } } }, 'body.translations.de.questions.grid.rows.ghost', /no row ghost/],
    [{ translations: { de: { questions: { role: { text: 'X' } } } } }, 'body.translations.de.questions.role.text', /not a consent question/],
    [{ translations: { de: { endings: { ghost: { title: 'X' } } } } }, 'body.translations.de.endings.ghost', /no ending ghost/],
    [{ translations: { de: { options: { a: 'X' } } } }, 'body.translations.de.options', /no options/],
    [{ translations: { en: { title: 'Survey' } } }, 'body.translations.en', /own language/],
  ];
  for (const [payload, path, message] of cases) {
    const reply = await create(payload);
    t.equal(reply.statusCode, 400, path);
    t.match(reply.json(), { statusCode: 400, code: 'validation_error', details: [{ path, message }] }, path);
  }
  const badTag = await create({ language: 'German' });
  t.equal(badTag.statusCode, 400);
  t.match(badTag.json().details, [{ path: 'body.language' }]);
  const id = (await create({})).json().id as string;
  const clash = await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: biz.headers, payload: { language: 'de', translations: { de: { title: 'Umfrage' } } } });
  t.equal(clash.statusCode, 400);
  t.match(clash.json().details, [{ path: 'body.translations.de', message: /own language/ }]);
});
