import { Writable } from 'node:stream';
import t from 'tap';
import { createLogger } from '../../src/services.js';
import { isCrawler } from '../../src/signals/routes.js';
import { FACETS } from '../../src/signals/counter.js';
import { captureFacets, captureMetadata } from '../../src/submissions/metadata.js';
import { changePlan } from '../../src/accounts/commands.js';
import { SignalCounter, signalsStream } from '../../src/signals/counter.js';
import { catalog } from '../../src/domain-events.js';
import { manualClock, owner, publishedWidget, testApp, tokenFor } from '../support/app.js';
import { silent } from '../support/services.js';
import type { EventStore, NewEvent } from '../../src/infra/event-store/port.js';

const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

async function publishedForm(app: Awaited<ReturnType<typeof testApp>>['app'], headers: Record<string, string>): Promise<string> {
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers, payload: { title: 'Survey', questions: [{ id: 'nps', type: 'nps', title: 'How likely…' }] } });
  if (created.statusCode !== 201) throw new Error(created.body);
  const id = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers, payload: { published: true } });
  return id;
}

t.test('displays and starts: counted once per session and type, crawlers not at all, one event per object and minute', async (t) => {
  const clock = manualClock('2026-12-01T09:00:10.000Z');
  const { app, services } = await testApp(t, { clock, geo: async () => ({ country: 'DE', region: 'Berlin', city: 'Berlin', timezone: 'Europe/Berlin' }) });
  const biz = await owner(services);
  const form = await publishedForm(app, biz.headers);
  const token = await tokenFor(app, 'forms', form);
  const send = (type: string, session: string, agent = CHROME, extra: Record<string, unknown> = {}) =>
    app.inject({ method: 'POST', url: `/api/forms/${form}/events`, headers: { 'user-agent': agent }, payload: { _token: token, type, session, ...extra } });

  const first = await send('display', 'visit-one-1', CHROME, { metadata: { pageUrl: 'https://shop.example/?utm_source=mail&utm_medium=email', referrer: 'https://news.example.org/a' } });
  t.equal(first.statusCode, 204, first.body);
  t.equal(first.headers['access-control-allow-origin'], '*', 'called from any site');
  t.equal((await send('display', 'visit-one-1')).statusCode, 204, 'a reload in the same visit is answered');
  t.equal((await send('start', 'visit-one-1')).statusCode, 204);
  t.equal((await send('display', 'visit-two-2', IPHONE)).statusCode, 204);
  t.equal((await send('display', 'crawler-visit', GOOGLEBOT)).statusCode, 204, 'a crawler is answered as anyone');
  t.equal(app.signals.pending, 1, 'one object-minute buffered');

  await app.signals.flush();
  t.equal((await services.events.readStream(signalsStream(form))).length, 0, 'the minute under way is not written yet');
  clock.advance(60_000);
  t.equal((await send('display', 'visit-three', CHROME)).statusCode, 204, 'the next minute');
  await app.signals.flush();
  const written = await services.events.readStream(signalsStream(form));
  t.equal(written.length, 1, 'the minute that ended, once');
  t.strictSame(written[0]!.data, {
    target: 'form',
    target_id: form,
    account_id: biz.accountId,
    minute: '2026-12-01T09:00:00.000Z',
    display: {
      total: 2,
      device: { Desktop: 1, Mobile: 1 },
      referer_domain: { 'news.example.org': 1, '': 1 },
      country: { DE: 2 },
      utm_source: { mail: 1, '': 1 },
      utm_medium: { email: 1, '': 1 },
      utm_campaign: { '': 2 },
    },
    start: { total: 1, device: { Desktop: 1 }, referer_domain: { '': 1 }, country: { DE: 1 }, utm_source: { '': 1 }, utm_medium: { '': 1 }, utm_campaign: { '': 1 } },
  });
  const stored = JSON.stringify({ data: written[0]!.data, metadata: written[0]!.metadata });
  for (const secret of ['127.0.0.1', 'visit-one-1', 'Chrome', 'iPhone']) t.notOk(stored.includes(secret), `nothing of the visitor is stored (${secret})`);

  await app.signals.stop();
  t.equal((await services.events.readStream(signalsStream(form))).length, 2, 'shutdown writes the minute under way');
});

t.test('a Pro plan records devices and referring domains only; refusals in the documented shape', async (t) => {
  const { app, services } = await testApp(t);
  const pro = await owner(services);
  const form = await publishedForm(app, pro.headers);
  await changePlan(services, pro.accountId, 'pro');
  const token = await tokenFor(app, 'forms', form);
  const post = (payload: Record<string, unknown>, id = form) => app.inject({ method: 'POST', url: `/api/forms/${id}/events`, headers: { 'user-agent': CHROME }, payload });
  t.equal((await post({ _token: token, type: 'display', session: 'abcdefgh', metadata: { pageUrl: 'https://a.example/?utm_source=x' } })).statusCode, 204);
  await app.signals.stop();
  const [event] = await services.events.readStream(signalsStream(form));
  t.strictSame(event!.data.display, { total: 1, device: { Desktop: 1 }, referer_domain: { '': 1 } });
  t.strictSame(event!.data.start, { total: 0 });

  t.match((await post({ _token: 'forged', type: 'display', session: 'abcdefgh' })).json(), { statusCode: 403, code: 'invalid_token' });
  t.match((await post({ _token: token, type: 'view', session: 'abcdefgh' })).json(), { statusCode: 400, code: 'validation_error' });
  t.match((await post({ _token: token, type: 'display', session: 'short' })).json(), { statusCode: 400, code: 'validation_error' });
  t.match((await post({ _token: token, type: 'display', session: 'abcdefgh' }, 'frm_00000000000000000000000000')).json(), { statusCode: 404, code: 'form_not_found' });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  t.equal((await app.inject({ method: 'POST', url: `/api/widgets/${widget}/events`, payload: { _token: await tokenFor(app, 'widgets', widget), type: 'display', session: 'abcdefgh' } })).statusCode, 204, 'a widget');
  const preflight = await app.inject({ method: 'OPTIONS', url: `/api/polls/pol_1/events` });
  t.equal(preflight.statusCode, 204);
});

t.test('the counter: sessions forgotten oldest first past their bound; breakdown values bounded; a failed write is kept for the next', async (t) => {
  const clock = manualClock('2026-12-01T09:00:00.000Z');
  const appended: Array<{ stream: string; events: NewEvent[] }> = [];
  let failing = true;
  const events = {
    append: async (stream: string, list: NewEvent[]) => {
      if (failing) throw new Error('store down');
      appended.push({ stream, events: list });
      return { nextRevision: 0n, position: 1n };
    },
  } as unknown as EventStore;
  const counter = new SignalCounter({ events, catalog, clock, logger: silent }, { sessionsKept: 2, valuesKept: 2 });
  const signal = (session: string, country: string) => ({ target: 'poll' as const, id: 'pol_1', account: 'acc_1', type: 'display' as const, session, facets: { country } });
  t.ok(counter.count(signal('s1', 'DE')));
  t.notOk(counter.count(signal('s1', 'DE')), 'the same session again');
  t.ok(counter.count(signal('s2', 'FR')));
  t.ok(counter.count(signal('s3', 'PL')), 'a third value counts under (other)');
  t.ok(counter.count(signal('s1', 'DE')), 'past two sessions, the oldest is forgotten');
  clock.advance(60_000);
  await counter.flush();
  t.equal(counter.pending, 1, 'kept after a failed write');
  failing = false;
  counter.count(signal('s9', 'DE'));
  clock.advance(-60_000);
  counter.count(signal('s8', 'DE'));
  clock.advance(60_000);
  await counter.flush();
  t.equal(appended.length, 1);
  t.strictSame(appended[0]!.events[0]!.data.display, { total: 5, country: { DE: 3, FR: 1, '(other)': 1 } }, 'what failed and what came since, in one event');
  counter.start(10);
  counter.start(10);
  await counter.stop();
  t.equal(appended.length, 2, 'the minute under way on stop');
  clock.advance(7 * 3_600_000);
  t.ok(counter.count(signal('s9', 'DE')), 'a session is forgotten after hours');
});

t.test('the counter: many sessions, forgotten oldest first past their bound and after their hours, each counted once while remembered', async (t) => {
  const clock = manualClock('2026-12-01T09:00:00.000Z');
  const events = { append: async () => ({ nextRevision: 0n, position: 1n }) } as unknown as EventStore;
  const counter = new SignalCounter({ events, catalog, clock, logger: silent }, { sessionsKept: 3000 });
  const signal = (session: string) => ({ target: 'form' as const, id: 'frm_1', account: 'acc_1', type: 'start' as const, session, facets: {} });
  // Enough that the list of keys in the order counted is compacted more than once.
  for (let n = 0; n < 10_000; n++) counter.count(signal(`s${n}`));
  t.notOk(counter.count(signal('s9999')), 'the latest is remembered');
  t.notOk(counter.count(signal('s7001')), 'and the 3000th before it');
  t.ok(counter.count(signal('s6999')), 'one older is forgotten, and counts again');
  t.notOk(counter.count(signal('s8500')), 'the rest still remembered');
  clock.advance(7 * 3_600_000);
  const again = Array.from({ length: 3000 }, (_, i) => `s${7000 + i}`).filter((session) => !counter.count(signal(session)));
  t.same(again, [], 'after hours, every session remembered is forgotten, and counts again');
  await counter.stop();
});

t.test('a signal counts under the breakdowns its response would record, by plan, with the same values', async (t) => {
  const geo = async () => ({ country: 'FR', region: 'Île-de-France', city: 'Paris', timezone: 'Europe/Paris' });
  const now = new Date('2026-12-01T09:00:00.000Z');
  const requests = [
    { headers: { 'user-agent': IPHONE }, ip: '203.0.113.5', client: { pageUrl: 'https://a.example/p?utm_source=mail&utm_campaign=winter', referrer: 'https://news.example.org/a' } },
    { headers: { 'user-agent': CHROME }, ip: '2001:db8::1', client: { pageUrl: 'not an address', referrer: 'ftp://files.example' } },
    { headers: {}, ip: '198.51.100.9', client: {} },
  ];
  for (const plan of ['free', 'pro', 'business'] as const) {
    for (const request of requests) {
      const metadata = (await captureMetadata({ plan, request, issuedAt: now, now }, { hashKey: Buffer.alloc(32, 1), geo })) as Record<string, unknown>;
      const recorded = Object.fromEntries(FACETS.filter((facet) => Object.hasOwn(metadata, facet)).map((facet) => [facet, metadata[facet]]));
      t.strictSame(await captureFacets(plan, request, geo), recorded, `${plan}: ${request.headers['user-agent'] ?? 'no agent'}`);
    }
  }
});

t.test('crawlers are told by their user agent, the answer kept for the next request', async (t) => {
  for (let i = 0; i < 2; i++) {
    t.equal(isCrawler(GOOGLEBOT), true);
    t.equal(isCrawler(CHROME), false);
  }
  t.equal(isCrawler(undefined), false, 'no user agent: not known as a crawler');
  const long = `${'x'.repeat(600)} Googlebot/2.1`;
  t.equal(isCrawler(long), true, 'a long agent is judged, not kept');
  t.equal(isCrawler(long), true);
  for (let i = 0; i < 1001; i++) isCrawler(`Mozilla/5.0 (X11; Linux x86_64) Firefox/${i}.0`);
  t.equal(isCrawler(GOOGLEBOT), true, 'past the bound, the oldest answers are forgotten and worked out again');
});

t.test('displays and starts write no request-log lines at the default level; other requests do', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  const { app, services } = await testApp(t, { logger: createLogger({ LOG_LEVEL: 'info' }, sink) });
  const biz = await owner(services);
  const form = await publishedForm(app, biz.headers);
  const token = await tokenFor(app, 'forms', form);
  const reply = await app.inject({ method: 'POST', url: `/api/forms/${form}/events`, headers: { 'user-agent': CHROME }, payload: { _token: token, type: 'display', session: 'logged-or-not' } });
  t.equal(reply.statusCode, 204);
  const urls = lines.map((line) => JSON.parse(line) as { msg: string; req?: { url: string } }).filter((line) => line.msg === 'incoming request').map((line) => line.req!.url);
  t.ok(urls.some((url) => url.startsWith(`/api/forms/${form}/token`)), 'the token request is logged');
  t.notOk(urls.some((url) => url.endsWith('/events')), 'the display is not');
});
