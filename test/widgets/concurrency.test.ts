import t from 'tap';
import { owner, testApp } from '../support/app.js';

t.test('concurrent updates to one widget never lose a change', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = (await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title: 'Start' } })).json().id;
  const changes = [
    { title: 'Renamed' },
    { description: 'Now described' },
    { thank_you_title: 'Cheers' },
    { thank_you_message: 'Much obliged' },
    { theme: { primaryColor: '#123456' } },
    { theme: { backgroundColor: '#fedcba' } },
    { trigger_config: { text: 'Talk to us' } },
    { trigger_config: { position: 'top-left' } },
    { settings: { allowed_domains: ['example.com'] } },
    { settings: { max_responses: 7 } },
    { published: true },
  ];
  const replies = await Promise.all(changes.map((payload) => app.inject({ method: 'PUT', url: `/api/widgets/${id}`, headers: biz.headers, payload })));
  t.same(replies.map((r) => r.statusCode), changes.map(() => 200), 'every update succeeded');
  const widget = (await app.inject({ method: 'GET', url: `/api/widgets/${id}`, headers: biz.headers })).json();
  t.match(widget, {
    title: 'Renamed',
    description: 'Now described',
    thank_you_title: 'Cheers',
    thank_you_message: 'Much obliged',
    theme: { primaryColor: '#123456', backgroundColor: '#fedcba' },
    trigger_config: { text: 'Talk to us', position: 'top-left' },
    settings: { allowed_domains: ['example.com'], max_responses: 7 },
    published: true,
  }, 'all eleven changes are there, even to keys of one nested object');
  const stream = await services.events.readStream(`widget-${id}`);
  t.equal(stream.length, 12, 'one event per change, after the creation');
});
