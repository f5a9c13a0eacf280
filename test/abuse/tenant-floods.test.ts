/**
 * One tenant must not hurt the others: floods a hostile tenant or client can
 * send, and what must hold throughout for everyone else.
 */
import t from 'tap';
import { changePlan } from '../../src/accounts/commands.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';
import { largeFormBody } from '../support/large-definitions.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });
const MB = 1024 * 1024;
const FORMS = 40;
const ROUNDS = 6;
const PARALLEL_LISTS = 16;
/**
 * What the flood may add to the process's resident memory. Lists that parsed
 * whole definitions took over 600 MB here: 16 pages of 40 half-megabyte forms
 * held at once.
 */
const RSS_GROWTH_BOUND = 200 * MB;

t.test('large-definition flood: lists and anonymous submits of forms at the caps keep memory bounded', async (t) => {
  const { app, services } = await testApp(t);
  const flooder = await owner(services);
  const other = await owner(services);
  const body = largeFormBody();
  const forms: string[] = [];
  for (let i = 0; i < FORMS; i++) {
    const created = await app.inject({ method: 'POST', url: '/api/forms', headers: flooder.headers, payload: { ...body, title: `Large ${i}` } });
    t.equal(created.statusCode, 201, `form ${i} created`, { diagnostic: created.statusCode !== 201 });
    const id = created.json().id as string;
    await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers: flooder.headers, payload: { published: true } });
    forms.push(id);
  }
  const widget = await publishedWidget(app, other);
  const otherRead = { method: 'GET' as const, url: `/api/widgets/${widget}`, remoteAddress: '198.51.100.200' };

  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sample = () => void (peak = Math.max(peak, process.memoryUsage().rss));
  t.comment(`RSS before the flood: ${Math.round(baseline / MB)} MB (${FORMS} forms of ${Math.round(Buffer.byteLength(JSON.stringify(body)) / 1024)} KiB)`);

  for (let round = 0; round < ROUNDS; round++) {
    const lists = Array.from({ length: PARALLEL_LISTS }, () => app.inject({ method: 'GET', url: '/api/forms?limit=100', headers: flooder.headers }));
    const submits = forms.map((id, i) =>
      app.inject({ method: 'POST', url: `/api/forms/${id}/submit`, remoteAddress: `203.0.113.${(round * FORMS + i) % 250}`, payload: { answers: {} } }),
    );
    const [listed, submitted] = await Promise.all([Promise.all(lists), Promise.all(submits)]);
    sample();
    t.ok(listed.every((reply) => reply.statusCode === 200 && reply.json().forms.length === FORMS), `round ${round}: every list answered in full`);
    t.ok(submitted.every((reply) => reply.statusCode === 403 && reply.json().code === 'invalid_token'), `round ${round}: every tokenless submit refused`);
    t.equal((await app.inject(otherRead)).statusCode, 200, `round ${round}: another tenant's widget is served`);
  }
  const listed = (await app.inject({ method: 'GET', url: '/api/forms?limit=1', headers: flooder.headers })).json();
  t.strictSame(Object.keys(listed.forms[0]).sort(), ['created_at', 'description', 'id', 'published', 'title', 'updated_at', 'version'], 'a list shows summaries');

  t.comment(`RSS peak during the flood: ${Math.round(peak / MB)} MB (+${Math.round((peak - baseline) / MB)} MB)`);
  t.ok(peak - baseline < RSS_GROWTH_BOUND, `resident memory grew by under ${RSS_GROWTH_BOUND / MB} MB`);

  // A token still gets a real visitor through: the cheap checks refuse only what they must.
  const token = await tokenFor(app, 'forms', forms[0]!);
  t.equal((await app.inject({ method: 'POST', url: `/api/forms/${forms[0]}/submit`, remoteAddress: '198.51.100.9', payload: { answers: {}, _token: token } })).statusCode, 200, 'a submit with a token is taken');
});

t.test('counter-eviction flood: 5,200 other addresses do not free a limited address, nor does another address in its /64', async (t) => {
  const { app, services } = await testApp(t);
  const pro = await owner(services);
  const widget = await publishedWidget(app, pro, { settings: { rate_limit: { max: 1, window_seconds: 86_400 } } });
  await changePlan(services, pro.accountId, 'pro');
  const submitFrom = async (remoteAddress: string) =>
    app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, remoteAddress, payload: { answers: { rating: 5 }, _token: await tokenFor(app, 'widgets', widget) } });

  t.equal((await submitFrom('2001:db8:77:1::1')).statusCode, 200, 'one submission a day from the address');
  t.match((await submitFrom('2001:db8:77:1::1')).json(), D3(429, 'rate_limited'), 'a second is refused');

  const before = process.memoryUsage().rss;
  for (let i = 0; i < 5_200; i++) {
    const remoteAddress = i % 2 === 0 ? `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}` : `2001:db8:${(i >> 8).toString(16)}:${(i & 255).toString(16)}::1`;
    // Each address a counter of its own: a read of the widget (per owner and address) or of an unknown id (per address).
    const url = i % 4 < 2 ? `/api/widgets/${widget}` : '/api/widgets/wgt_unknown';
    const reply = await app.inject({ method: 'GET', url, remoteAddress });
    if (reply.statusCode === 429) t.fail(`the flood itself was limited at ${i}`);
  }
  t.comment(`RSS after 5,200 addresses: ${Math.round(process.memoryUsage().rss / MB)} MB (${Math.round((process.memoryUsage().rss - before) / MB)} MB more)`);

  t.match((await submitFrom('2001:db8:77:1::1')).json(), D3(429, 'rate_limited'), 'the limited address is still refused after the flood');
  t.match((await submitFrom('2001:db8:77:1:ffff:ffff:ffff:fffe')).json(), D3(429, 'rate_limited'), 'and so is any address of its /64');
  t.equal((await submitFrom('2001:db8:77:2::1')).statusCode, 200, 'the next /64 is another client');
});
