import t from 'tap';
import { catalog } from '../../src/domain-events.js';
import { owner, testApp } from '../support/app.js';
import { fixture } from '../support/fixtures.js';
import { eventually } from '../support/eventually.js';
import { PollUpdated } from '../../src/polls/events.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });
const DEFAULT = { primaryColor: '#4f46e5', backgroundColor: '#ffffff', text_color: null, mode: 'light' };

t.test('polls take a theme as forms and widgets do: defaults, merged updates, unreadable text refused at the field', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const create = (payload: object) => app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Which plan?', options: [{ text: 'Free' }, { text: 'Pro' }], ...payload } });
  const read = async (id: string, headers: object = biz.headers) => (await app.inject({ method: 'GET', url: `/api/polls/${id}`, headers: headers as Record<string, string> })).json();
  const update = (id: string, payload: object) => app.inject({ method: 'PUT', url: `/api/polls/${id}`, headers: biz.headers, payload });

  const plain = (await create({})).json().id;
  t.same((await read(plain)).theme, DEFAULT, 'no theme given: the defaults');

  const dark = await create({ theme: { mode: 'dark', primaryColor: '#f59e0b' } });
  t.equal(dark.statusCode, 201, dark.body);
  const id = dark.json().id;
  t.same((await read(id)).theme, { ...DEFAULT, primaryColor: '#f59e0b', mode: 'dark' });
  t.equal((await update(id, { published: true })).statusCode, 200);
  t.same((await read(id, {})).theme, { ...DEFAULT, primaryColor: '#f59e0b', mode: 'dark' }, 'the public view, which the embed draws, carries it');

  t.equal((await update(id, { theme: { backgroundColor: '#fffbeb', text_color: '#1f2937', mode: 'light' } })).statusCode, 200);
  t.same((await read(id)).theme, { primaryColor: '#f59e0b', backgroundColor: '#fffbeb', text_color: '#1f2937', mode: 'light' }, 'an update merges key by key');

  t.match((await create({ theme: { backgroundColor: '#111827', text_color: '#1f2937' } })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.theme.text_color', message: /needs at least 4\.5:1/ }] }, 'dark text on a dark background');
  t.match((await create({ theme: { mode: 'dim' } })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.theme.mode' }] }, 'an unknown mode');
  t.match((await create({ theme: { primaryColor: 'teal' } })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.theme.primaryColor' }] }, 'a colour name');
  const refused = await update(id, { theme: { backgroundColor: '#000000' } });
  t.match(refused.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.theme.text_color', message: /on backgroundColor #000000/ }] }, 'an update checks the theme it leads to');
  t.equal((await read(id)).theme.backgroundColor, '#fffbeb', 'and changes nothing');

  // A GET's body sent back unchanged is a valid update.
  const { id: _id, published: _p, closed: _c, created_at: _ca, updated_at: _ua, ...view } = await read(id);
  t.equal((await update(id, view)).statusCode, 200, 'the owner\'s view, theme included, sent back');
  const events = await services.events.readStream(`poll-${id}`);
  // Version 3 added the theme; later versions carry it too.
  t.same(events.filter((e) => e.type === 'PollUpdated').map((e) => e.metadata.schema_version), [PollUpdated.version], 'one update event, of the current version, which carries a theme');
});

t.test('polls stored before they had a theme read as they always looked: the default colours, light', async (t) => {
  for (const type of ['PollCreated', 'PollUpdated']) {
    for (const version of [1, 2]) {
      const old = fixture(type, version);
      const event = catalog.parse({ id: 'e1', streamId: old.stream, revision: 0n, position: 1n, type, data: old.data, metadata: old.metadata, recordedAt: old.metadata.occurred_at })!;
      const data = event.data as { theme?: object; changes?: { theme?: object } };
      if (type === 'PollCreated') t.same(data.theme, DEFAULT, `${type} version ${version}`);
      else t.equal(data.changes?.theme, undefined, `${type} version ${version} changes no theme`);
    }
  }

  // Through the read model and the API, as a service upgraded over such a history serves it.
  const { app, services } = await testApp(t);
  for (const [type, version] of [['AccountOpened', 1], ['PollCreated', 2], ['PollPublished', 1]] as const) {
    const old = fixture(type, version);
    await services.events.append(old.stream, [{ type: old.type, data: old.data, metadata: old.metadata }], 'any');
  }
  const url = `/api/polls/${fixture('PollCreated', 2).data.poll_id}`;
  t.ok(await eventually(async () => (await app.inject({ method: 'GET', url })).statusCode === 200), 'projected');
  t.same((await app.inject({ method: 'GET', url })).json().theme, DEFAULT, 'the public view');
});
