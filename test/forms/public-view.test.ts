import t from 'tap';
import { manualClock, owner, testApp, tokenFor } from '../support/app.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });
const QUESTIONS = [{ id: 'name', type: 'short_text', title: 'Your name', required: true }];

t.test('a public view, kept as sent, follows every change of its object and of the clock', async (t) => {
  const clock = manualClock('2026-11-22T10:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const put = (id: string, payload: object) => app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: biz.headers, payload });
  const make = async (settings: object) => {
    const id = (await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'First', questions: QUESTIONS, settings } })).json().id as string;
    await put(id, { published: true });
    return id;
  };
  const form = await make({ max_responses: 1 });
  const read = async (id: string, headers?: Record<string, string>) => app.inject({ method: 'GET', url: `/api/forms/${id}`, headers });

  const first = await read(form);
  t.match(first.headers['content-type'], /^application\/json; charset=utf-8/);
  t.match(first.json(), { id: form, title: 'First', closed: false });
  t.notOk('settings' in first.json(), 'no settings for visitors');
  t.equal((await read(form)).body, first.body, 'the same view again');

  await put(form, { title: 'Second' });
  t.match((await read(form)).json(), { title: 'Second', closed: false }, 'an update shows at once');
  t.match((await read(form, biz.headers)).json(), { title: 'Second', settings: { max_responses: 1 } }, 'the owner sees the settings');
  t.notOk('settings' in (await read(form)).json(), 'and visitors still do not');

  const submitted = await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, payload: { answers: { name: 'Ada' }, _token: await tokenFor(app, 'forms', form) } });
  t.equal(submitted.statusCode, 200);
  t.match((await read(form)).json(), { closed: true }, 'the last slot taken closes it in the view');

  const timed = await make({ closes_at: '2026-11-22T11:00:00Z' });
  t.match((await read(timed)).json(), { closed: false });
  clock.advance(60 * 60 * 1000);
  t.match((await read(timed)).json(), { closed: true }, 'closing time reached: closed in the view');

  await put(timed, { published: false });
  t.match((await read(timed)).json(), D3(403, 'form_not_published'), 'unpublished: no view');
  await app.inject({ method: 'DELETE', url: `/api/forms/${form}`, headers: biz.headers });
  t.match((await read(form)).json(), D3(404, 'form_not_found'), 'deleted: none');
});
