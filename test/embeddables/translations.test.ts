import t from 'tap';
import { owner, testApp } from '../support/app.js';
import { csvColumns } from '../../src/dashboard/downloads.js';

t.test('widgets take translations of their questions, by id', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const create = (payload: object) => app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'custom', title: 'Tell us', questions: [{ id: 'why', type: 'long_text', title: 'Why?' }], ...payload } });
  const made = await create({ language: 'en', translations: { fr: { title: 'Dites-nous', questions: { why: { title: 'Pourquoi ?' } }, thank_you_title: 'Merci !' } } });
  t.equal(made.statusCode, 201, made.body);
  const id = made.json().id as string;
  t.match((await app.inject({ method: 'GET', url: `/api/widgets/${id}`, headers: biz.headers })).json(), { language: 'en', translations: { fr: { questions: { why: { title: 'Pourquoi ?' } } } } });
  const unknown = await create({ translations: { fr: { questions: { how: { title: 'Comment ?' } } } } });
  t.equal(unknown.statusCode, 400);
  t.match(unknown.json().details, [{ path: 'body.translations.fr.questions.how', message: 'the widget has no question how' }]);
  const replaced = await app.inject({ method: 'PUT', url: `/api/widgets/${id}`, headers: biz.headers, payload: { questions: [{ id: 'what', type: 'short_text', title: 'What?' }] } });
  t.equal(replaced.statusCode, 200, replaced.body);
  t.same((await app.inject({ method: 'GET', url: `/api/widgets/${id}`, headers: biz.headers })).json().translations, { fr: { title: 'Dites-nous', questions: {}, thank_you_title: 'Merci !' } }, 'a question gone takes its texts');
  const sent = await app.inject({ method: 'PUT', url: `/api/widgets/${id}`, headers: biz.headers, payload: { translations: { de: { questions: { why: { title: 'Warum?' } } } } } });
  t.equal(sent.statusCode, 400, 'translations sent are checked against the questions');
  const nps = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'nps', title: 'Recommend us?', translations: { de: { title: 'Empfehlen?' } } } });
  t.equal(nps.statusCode, 201, 'a built-in type takes a translation of its own texts');
});

t.test('polls take their question and options translated; a create names an option by its position', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const made = await app.inject({
    method: 'POST',
    url: '/api/polls',
    headers: biz.headers,
    payload: { question: 'Which first?', options: [{ text: 'Dark mode' }, { text: 'Export' }], translations: { de: { question: 'Was zuerst?', options: { 0: 'Dunkelmodus', 1: 'Export' } } } },
  });
  t.equal(made.statusCode, 201, made.body);
  const id = made.json().id as string;
  const [dark, exp] = made.json().options as Array<{ id: string }>;
  const view = (await app.inject({ method: 'GET', url: `/api/polls/${id}`, headers: biz.headers })).json();
  t.same(view.translations, { de: { question: 'Was zuerst?', options: { [dark!.id]: 'Dunkelmodus', [exp!.id]: 'Export' } } }, 'stored by option id');
  t.equal(view.language, 'en');

  const beyond = await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Q?', options: [{ text: 'A' }, { text: 'B' }], translations: { de: { options: { 5: 'X' } } } } });
  t.equal(beyond.statusCode, 400);
  t.match(beyond.json().details, [{ path: 'body.translations.de.options.5', message: 'the poll has no option 5' }]);
  const foreign = await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Q?', options: [{ text: 'A' }, { text: 'B' }], translations: { de: { title: 'X' } } } });
  t.equal(foreign.statusCode, 400);
  t.match(foreign.json().details, [{ path: 'body.translations.de.title', message: 'a poll has no title' }]);

  const fewer = await app.inject({ method: 'PUT', url: `/api/polls/${id}`, headers: biz.headers, payload: { options: [{ id: dark!.id, text: 'Dark mode' }, { text: 'Webhooks' }] } });
  t.equal(fewer.statusCode, 200, fewer.body);
  t.same((await app.inject({ method: 'GET', url: `/api/polls/${id}`, headers: biz.headers })).json().translations, { de: { question: 'Was zuerst?', options: { [dark!.id]: 'Dunkelmodus' } } }, 'an option gone takes its text');
  const french = await app.inject({ method: 'PUT', url: `/api/polls/${id}`, headers: biz.headers, payload: { language: 'en', translations: { fr: { question: 'Quoi d’abord ?', options: { [dark!.id]: 'Mode sombre' } } } } });
  t.equal(french.statusCode, 200, french.body);
  t.same(Object.keys((await app.inject({ method: 'GET', url: `/api/polls/${id}`, headers: biz.headers })).json().translations), ['fr'], 'translations sent replace those stored');
});

t.test('the CSV of a translated object has a language column; answers of every language share their question\'s column', async (t) => {
  const columns = csvColumns([{ id: 'q', title: 'Q' }], 'free', { languages: true });
  t.same(columns.map((c) => c.header).slice(0, 4), ['id', 'submitted_at', 'Q', 'language']);
  const language = columns.find((c) => c.header === 'language')!;
  t.equal(language.cell({ id: 'r1', language: 'fr' }), 'fr');
  t.equal(language.cell({ id: 'r0' }), 'en', 'a response from before languages was given in English');
  t.notOk(csvColumns([{ id: 'q', title: 'Q' }], 'free').some((c) => c.header === 'language'), 'none without translations');
});
