import t from 'tap';
import { catalog, type DomainEvent } from '../../src/domain-events.js';
import { manualClock, owner, testApp } from '../support/app.js';

/** What the owner reads is what they may write back: GET then PUT, and `closes_at` in UTC wherever it is shown. */

const settings = { closes_at: '2027-01-31T23:59:59+02:00', max_responses: 10 };
const bodies = {
  widgets: { widget_type: 'nps', title: 'How likely?', settings },
  forms: { title: 'Sign up', questions: [{ id: 'name', type: 'short_text', title: 'Name', required: true }], settings },
  polls: { question: 'Best fruit?', options: [{ text: 'Apple' }, { text: 'Pear' }], settings },
};
const readOnly = {
  widgets: { id: 'wgt_other', widget_type: 'contact', created_at: '2020-01-01T00:00:00.000Z', updated_at: '2020-01-01T00:00:00.000Z', closed: true },
  forms: { id: 'frm_other', version: 7, created_at: '2020-01-01T00:00:00.000Z', updated_at: '2020-01-01T00:00:00.000Z', closed: true },
  polls: { id: 'pol_other', created_at: '2020-01-01T00:00:00.000Z', updated_at: '2020-01-01T00:00:00.000Z', closed: true },
};

for (const kind of ['widgets', 'forms', 'polls'] as const) {
  t.test(`${kind}: GET then PUT of the same body is accepted and changes nothing; a changed read-only field is a 400 naming it`, async (t) => {
    const { app, services } = await testApp(t, { clock: manualClock('2026-11-22T10:00:00.000Z') });
    const biz = await owner(services);
    const id = (await app.inject({ method: 'POST', url: `/api/${kind}`, headers: biz.headers, payload: bodies[kind] })).json().id as string;
    const get = async () => (await app.inject({ method: 'GET', url: `/api/${kind}/${id}`, headers: biz.headers })).json();
    const read = await get();
    t.equal(read.settings.closes_at, '2027-01-31T21:59:59.000Z', 'closes_at is shown in UTC');

    const put = await app.inject({ method: 'PUT', url: `/api/${kind}/${id}`, headers: biz.headers, payload: read });
    t.equal(put.statusCode, 200, `the round trip is accepted: ${put.body.slice(0, 300)}`);
    t.same(await get(), read, 'and changes nothing');
    t.equal((await services.events.readStream(`${kind.slice(0, -1)}-${id}`)).length, 1, 'no event beyond the creation');

    for (const [field, value] of Object.entries(readOnly[kind])) {
      const refused = await app.inject({ method: 'PUT', url: `/api/${kind}/${id}`, headers: biz.headers, payload: { ...read, [field]: value } });
      t.equal(refused.statusCode, 400, `${field} changed`);
      t.match(refused.json(), { code: 'validation_error', message: 'Read-only fields cannot be changed', details: [{ path: `body.${field}`, message: /^is read-only \(now .+\): send it unchanged or leave it out$/ }] });
    }
    t.same(await get(), read, 'nothing changed by the refused ones');

    const moved = await app.inject({ method: 'PUT', url: `/api/${kind}/${id}`, headers: biz.headers, payload: { settings: { closes_at: '2027-03-01T09:30:00-05:00' } } });
    t.equal(moved.statusCode, 200);
    t.equal((await get()).settings.closes_at, '2027-03-01T14:30:00.000Z', 'an update\'s closes_at is kept in UTC');

    // A closes_at whose UTC year is not four digits would be stored as `+010000-…`, which no GET then PUT could send back.
    for (const closes_at of ['9999-12-31T23:59:59-23:59', '0000-01-01T00:00:00+00:01']) {
      for (const [method, url] of [['PUT', `/api/${kind}/${id}`], ['POST', `/api/${kind}`]] as const) {
        const refused = await app.inject({ method, url, headers: biz.headers, payload: method === 'PUT' ? { settings: { closes_at } } : { ...bodies[kind], settings: { closes_at } } });
        t.match(refused.json(), { code: 'validation_error', details: [{ path: 'body.settings.closes_at', message: /years 0000 to 9999/ }] }, `${method} ${closes_at}`);
      }
    }
    t.equal((await get()).settings.closes_at, '2027-03-01T14:30:00.000Z', 'nothing changed by them');
  });
}

t.test('a closes_at stored with an offset (before it was normalised) is shown in UTC', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = (await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: bodies.polls })).json().id as string;
  const stream = `poll-${id}`;
  const [created] = await services.events.readStream(stream);
  const stored = created!.data.settings as Extract<DomainEvent, { type: 'PollCreated' }>['data']['settings'];
  const old: DomainEvent = { type: 'PollUpdated', data: { poll_id: id, changes: { settings: { ...stored, closes_at: '2027-01-31T23:59:59+02:00' } }, updated_at: '2026-11-22T10:00:00.000Z' } };
  const { position } = await services.events.append(stream, [catalog.serialize(old, { occurred_at: '2026-11-22T10:00:00.000Z', actor: 'cli' })], created!.revision);
  await services.commands.awaitProjections(position);
  const read = (await app.inject({ method: 'GET', url: `/api/polls/${id}`, headers: biz.headers })).json();
  t.equal(read.settings.closes_at, '2027-01-31T21:59:59.000Z');
});
