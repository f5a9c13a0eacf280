import type { AddressInfo } from 'node:net';
import t from 'tap';
import { changePlan } from '../../src/accounts/commands.js';
import { signalsStream } from '../../src/signals/counter.js';
import type { SignalEvent } from '../../src/signals/events.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
/** What every reply of the route carries, besides Date and Connection. */
const ROUTE_HEADERS = [
  'x-request-id',
  'x-ratelimit-limit',
  'x-ratelimit-remaining',
  'x-ratelimit-reset',
  'x-content-type-options',
  'referrer-policy',
  'x-frame-options',
  'content-security-policy',
  'cross-origin-resource-policy',
  'access-control-allow-origin',
];

/** The app listening on a real socket: displays and starts are answered there before the router sees them. */
async function served(t: Parameters<typeof testApp>[0], plan: 'free' | 'business' = 'business', env: Record<string, string> = {}) {
  const { app, services } = await testApp(t, { env });
  const who = await owner(services, 'business');
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: who.headers, payload: { title: 'Survey', questions: [{ id: 'nps', type: 'nps', title: 'How likely…' }] } });
  const form = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: who.headers, payload: { published: true } });
  if (plan !== 'business') await changePlan(services, who.accountId, plan);
  const token = await tokenFor(app, 'forms', form);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  const post = (body: unknown, { path = `/api/forms/${form}/events`, headers = {} as Record<string, string> } = {}) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': CHROME, ...headers }, body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body) });
  return { app, services, who, form, token, base, post };
}

const headerNames = (reply: Response) => [...reply.headers.keys()].filter((name) => name !== 'date' && name !== 'connection' && name !== 'keep-alive').sort();

t.test('a display over a socket: 204 with the route\'s headers, counted once a session, crawlers not', async (t) => {
  const { app, services, form, token, post } = await served(t);
  const first = await post({ _token: token, type: 'display', session: 'socket-visit-1', metadata: { pageUrl: 'https://shop.example/?utm_source=mail' } });
  t.equal(first.status, 204);
  t.strictSame(headerNames(first), [...ROUTE_HEADERS].sort(), 'the headers the route sends, no more');
  t.match(first.headers.get('x-request-id'), /^req_[0-9A-Z]{26}$/);
  t.equal(first.headers.get('access-control-allow-origin'), '*');
  t.equal(first.headers.get('cross-origin-resource-policy'), 'cross-origin');
  t.equal(first.headers.get('x-content-type-options'), 'nosniff');
  t.equal(first.headers.get('content-security-policy'), "default-src 'none'; frame-ancestors 'none'");
  t.equal(first.headers.get('x-ratelimit-limit'), '1000');
  t.equal(first.headers.get('x-ratelimit-reset'), '60');
  const remaining = Number(first.headers.get('x-ratelimit-remaining'));
  const again = await post({ _token: token, type: 'display', session: 'socket-visit-1' }, { headers: { 'content-type': 'application/json; charset=UTF-8' } });
  t.equal(again.status, 204, 'a reload in the same visit is answered');
  t.equal(Number(again.headers.get('x-ratelimit-remaining')), remaining - 1, 'and counted in the rate limit');
  t.not(again.headers.get('x-request-id'), first.headers.get('x-request-id'), 'each request its own id');
  t.equal((await post({ _token: token, type: 'start', session: 'socket-visit-1' })).status, 204);
  const crawler = await post({ _token: token, type: 'display', session: 'crawled-visit' }, { headers: { 'user-agent': GOOGLEBOT } });
  t.equal(crawler.status, 204, `a crawler is answered as anyone ${await crawler.text()}`);

  // The route answers the same request (inject never reaches the socket) with the same headers.
  const routed = await app.inject({ method: 'POST', url: `/api/forms/${form}/events`, headers: { 'user-agent': CHROME }, payload: { _token: token, type: 'display', session: 'routed-visit' } });
  t.equal(routed.statusCode, 204);
  t.strictSame(Object.keys(routed.headers).filter((name) => name !== 'date' && name !== 'connection').sort(), [...ROUTE_HEADERS].sort(), 'the route sends the same headers');

  await app.signals.stop();
  const [event] = await services.events.readStream(signalsStream(form));
  const data = event!.data as SignalEvent['data'];
  t.equal(data.display.total, 2, 'one display of the visit, one of the routed request; the crawler none');
  t.equal(data.start.total, 1);
  t.strictSame(data.display.utm_source, { mail: 1, '': 1 });
});

t.test('refusals over a socket are the route\'s, in the documented shape, with its headers', async (t) => {
  const { who, app, form, token, post, base } = await served(t);
  const refused = async (reply: Response, status: number, code: string, message: string) => {
    t.equal(reply.status, status, message);
    const body = (await reply.json()) as { code: string; statusCode: number };
    t.equal(body.code, code, message);
    t.equal(body.statusCode, status);
    t.equal(reply.headers.get('access-control-allow-origin'), '*', `${message}: CORS`);
    t.match(reply.headers.get('x-request-id'), /^req_/, `${message}: request id`);
    t.equal(reply.headers.get('x-content-type-options'), 'nosniff');
  };
  await refused(await post({ _token: token, type: 'view', session: 'abcdefgh' }), 400, 'validation_error', 'an unknown type');
  await refused(await post({ _token: token, type: 'display', session: 'short' }), 400, 'validation_error', 'a short session');
  await refused(await post('{"_token": "x", "type": "display", "session": "abcdefgh"'), 400, 'validation_error', 'broken JSON');
  await refused(await post(`{"_token": ${JSON.stringify(token)}, "type": "display", "session": "abc\\u0007defgh"}`), 400, 'validation_error', 'a control character');
  await refused(await post(`{"_token": ${JSON.stringify(token)}, "type": "display", "session": "abcdefgh", "__proto__": {"x": 1}}`), 400, 'validation_error', 'a __proto__ key');
  await refused(await post(Buffer.from(`{"_token": ${JSON.stringify(token)}, "type": "display", "session": "abcdefgh\xff"}`, 'latin1')), 400, 'validation_error', 'bytes that are not UTF-8');
  await refused(await post({ _token: 'forged', type: 'display', session: 'abcdefgh' }), 403, 'invalid_token', 'a forged token');
  await refused(await post({ type: 'display', session: 'abcdefgh' }), 403, 'invalid_token', 'no token');
  await refused(await post({ _token: token, type: 'display', session: 'abcdefgh' }, { path: '/api/forms/frm_00000000000000000000000000/events' }), 404, 'form_not_found', 'an unknown form');
  await refused(await post({ _token: token, type: 'display', session: 'abcdefgh' }, { path: `/api/polls/${form}/events` }), 404, 'poll_not_found', 'a form\'s id as a poll');
  await refused(await post({ _token: token, type: 'display', session: 'abcdefgh' }, { headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type', 'not JSON');
  await refused(await post({ _token: token, type: 'display', session: 'abcdefgh' }, { headers: { 'content-type': 'application/json; charset=latin1' } }), 415, 'unsupported_media_type', 'another charset');
  await refused(await post({ _token: token, type: 'display', session: 'abcdefgh' }, { headers: { 'content-encoding': 'gzip' } }), 415, 'unsupported_media_type', 'compressed');
  t.equal((await post({ _token: token, type: 'display', session: 'long-body', metadata: { pageUrl: `https://shop.example/?q=${'x'.repeat(5000)}` } })).status, 204, 'a long body is the router\'s');
  await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: who.headers, payload: { published: false } });
  await refused(await post({ _token: token, type: 'display', session: 'abcdefgh' }), 403, 'form_not_published', 'an unpublished form');

  const preflight = await fetch(`${base}/api/forms/${form}/events`, { method: 'OPTIONS', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type' } });
  t.equal(preflight.status, 204, 'the preflight');
  t.equal(preflight.headers.get('access-control-allow-origin'), '*');
  t.equal(preflight.headers.get('access-control-allow-methods'), 'POST, OPTIONS');
  t.equal(preflight.headers.get('access-control-allow-headers'), 'Content-Type');
  const widget = await publishedWidget(app, who);
  const widgetToken = await tokenFor(app, 'widgets', widget);
  t.equal((await post({ _token: widgetToken, type: 'display', session: 'abcdefgh' }, { path: `/api/widgets/${widget}/events` })).status, 204, 'a widget');
});

t.test('over the plan\'s rate: 429 with Retry-After from the route; one bucket per visitor address', async (t) => {
  const { post, token } = await served(t, 'free', { TRUST_PROXY: '1' });
  const from = (address: string, session: string) => post({ _token: token, type: 'display', session }, { headers: { 'x-forwarded-for': address } });
  let last: Response | undefined;
  for (let i = 0; i < 60; i++) {
    last = await from('203.0.113.7', `visit-${String(i).padStart(4, '0')}`);
    if (last.status !== 204) break;
  }
  t.equal(last!.status, 204, 'the plan\'s 60 a minute');
  t.equal(last!.headers.get('x-ratelimit-remaining'), '0');
  const over = await from('203.0.113.7', 'visit-over');
  t.equal(over.status, 429);
  t.equal(((await over.json()) as { code: string }).code, 'rate_limited');
  t.ok(Number(over.headers.get('retry-after')) >= 1 && Number(over.headers.get('retry-after')) <= 60, 'Retry-After: the seconds left of the window');
  t.equal(over.headers.get('x-ratelimit-remaining'), '0');
  t.equal(over.headers.get('access-control-allow-origin'), '*');
  t.equal((await from('203.0.113.7', 'visit-over-2')).status, 429, 'and again');
  const other = await from('198.51.100.20', 'visit-other');
  t.equal(other.status, 204, 'another visitor behind the trusted proxy has a bucket of their own');
  t.equal(other.headers.get('x-ratelimit-remaining'), '59');
});
