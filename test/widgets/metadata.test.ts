import { createHash, createHmac } from 'node:crypto';
import t, { type Test } from 'tap';
import { changePlan } from '../../src/accounts/commands.js';
import type { App } from '../../src/app.js';
import { manualClock, owner, publishedWidget, testApp, tokenFor, type Owner } from '../support/app.js';

const ALL = ['browser', 'browser_version', 'completion_time_ms', 'device', 'ip_hash', 'language', 'os', 'page_title', 'page_url'];
const PRO = ['fingerprint_hash', 'referer', 'referer_domain', 'screen_height', 'screen_width'];
const BUSINESS = ['city', 'country', 'is_proxy', 'region', 'timezone', 'utm_campaign', 'utm_medium', 'utm_source'];
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
const LONDON = '81.2.69.160';

const PAGE = { pageUrl: 'https://shop.example/p?utm_source=newsletter&utm_medium=email&utm_campaign=spring', pageTitle: 'Spring sale', fingerprint: 'fp-123', screenWidth: 390, screenHeight: 844, referrer: 'https://search.example/?q=shoes' };
const BROWSER = { 'user-agent': IPHONE, 'accept-language': 'fr-CH, fr;q=0.9, en;q=0.8', referer: 'https://shop.example/checkout' };

function submitAs(app: App, widget: string, token: string, extra: { headers?: Record<string, string>; remoteAddress?: string } = {}) {
  return app.inject({
    method: 'POST',
    url: `/api/widgets/${widget}/submit`,
    remoteAddress: extra.remoteAddress ?? LONDON,
    headers: { ...BROWSER, ...extra.headers },
    payload: { answers: { rating: 5 }, _token: token, metadata: PAGE },
  });
}

async function submitOnce(app: App, who: Owner, widget: string, extra: { headers?: Record<string, string>; remoteAddress?: string } = {}) {
  const reply = await submitAs(app, widget, await tokenFor(app, 'widgets', widget), extra);
  if (reply.statusCode !== 200) throw new Error(reply.body);
  return metadataOf(app, who, widget, reply.json().id);
}

/** A new owner's published widget, and a submit of the given page facts that answers the metadata stored for it. */
async function pageFactsSubmitter(t: Test, headers: Record<string, string> = {}) {
  const { app, services } = await testApp(t);
  const who = await owner(services);
  const widget = await publishedWidget(app, who);
  return async (metadata: object) => {
    const reply = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, headers, payload: { answers: { rating: 5 }, _token: await tokenFor(app, 'widgets', widget), metadata } });
    if (reply.statusCode !== 200) throw new Error(reply.body);
    return metadataOf(app, who, widget, reply.json().id);
  };
}

async function metadataOf(app: App, who: Owner, widget: string, id: string): Promise<Record<string, unknown>> {
  const list = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: who.headers })).json();
  return list.responses.find((r: { id: string }) => r.id === id).metadata;
}

t.test("each plan's metadata set, by the owner's plan at submission time", async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const who = await owner(services);
  const widget = await publishedWidget(app, who);

  // Reading responses takes Business (D4): submit under each plan, read back as Business.
  const ids: Record<string, string> = {};
  for (const plan of ['free', 'pro', 'business'] as const) {
    await changePlan(services, who.accountId, plan);
    const token = await tokenFor(app, 'widgets', widget);
    ids[plan] = (await submitAs(app, widget, token)).json().id;
  }
  const free = await metadataOf(app, who, widget, ids.free!);
  const pro = await metadataOf(app, who, widget, ids.pro!);
  const business = await metadataOf(app, who, widget, ids.business!);

  t.strictSame(Object.keys(free).sort(), ALL, 'Free: the all-plans fields and nothing else');
  t.strictSame(Object.keys(pro).sort(), [...ALL, ...PRO].sort(), 'Pro: plus the Pro fields');
  t.strictSame(Object.keys(business).sort(), [...ALL, ...PRO, ...BUSINESS].sort(), 'Business: everything');
  t.match(free, { browser: 'Safari', browser_version: '17.0', os: 'iOS', device: 'Mobile', language: 'fr-CH', page_url: 'https://shop.example/p?utm_source=newsletter&utm_medium=email&utm_campaign=spring', page_title: 'Spring sale' });
  t.match(pro, { screen_width: 390, screen_height: 844, referer: 'https://search.example/?q=shoes', referer_domain: 'search.example' });
  t.match(business, { country: 'GB', region: String, city: String, timezone: 'Europe/London', utm_source: 'newsletter', utm_medium: 'email', utm_campaign: 'spring', is_proxy: false });

  const secretHash = (value: string) => createHmac('sha256', services.keys.hashes).update(value).digest('hex');
  t.equal(free.ip_hash, secretHash(LONDON), 'ip_hash is an HMAC under the server secret');
  t.not(free.ip_hash, createHash('sha256').update(LONDON).digest('hex'), 'not a bare SHA-256 that 2^32 guesses reverse');
  t.equal(pro.fingerprint_hash, secretHash('fp-123'));
});

t.test('completion time, devices, and what a request leaves out', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const who = await owner(services);
  const widget = await publishedWidget(app, who);
  const token = await tokenFor(app, 'widgets', widget);
  clock.advance(42_000);
  await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 1 }, _token: token } });
  const bare = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: who.headers })).json().responses[0].metadata;
  t.equal(bare.completion_time_ms, 42_000, 'from the token issue to the submission');
  t.match(bare, { browser: null, device: null, os: null, language: null, page_url: null, page_title: null, screen_width: null, fingerprint_hash: null, referer: null, utm_source: null });

  const ipad = 'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';
  const desktop = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
  t.match(await submitOnce(app, who, widget, { headers: { 'user-agent': ipad } }), { device: 'Tablet' });
  t.match(await submitOnce(app, who, widget, { headers: { 'user-agent': desktop } }), { device: 'Desktop', browser: 'Chrome', os: 'Windows' });
  t.match(await submitOnce(app, who, widget, { headers: { 'accept-language': 'de;q=0.5, nl-BE;q=0.8, *;q=0.1' } }), { language: 'nl-BE' });
  const madeUp = await submitOnce(app, who, widget, { headers: { 'user-agent': `${'B'.repeat(7000)}/${'9'.repeat(3000)} (${'O'.repeat(3000)})`, 'accept-language': `en-${'abcdefgh-'.repeat(20)}x, it;q=0.2` } });
  t.ok(typeof madeUp.browser === 'string' && (madeUp.browser as string).length <= 100 && (madeUp.browser as string).startsWith('BBB'), `a made-up agent's names are cut to 100 characters (${String(madeUp.browser).length})`);
  t.ok(madeUp.browser_version === null || (madeUp.browser_version as string).length <= 100, 'its version too');
  t.equal(madeUp.language, 'it', 'a tag longer than 35 characters is passed over');
  t.match(await submitOnce(app, who, widget, { headers: { via: '1.1 some-proxy' } }), { is_proxy: true });
  t.match(await submitOnce(app, who, widget, { headers: { 'x-forwarded-for': '10.1.2.3' } }), { is_proxy: true, country: 'GB' }, 'without TRUST_PROXY the forwarded address is not believed');
});

t.test('TRUST_PROXY: the client address comes from the trusted hops', async (t) => {
  const { app, services } = await testApp(t, { env: { TRUST_PROXY: '1' } });
  const who = await owner(services);
  const widget = await publishedWidget(app, who);
  const viaProxy = await submitOnce(app, who, widget, { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': LONDON } });
  t.match(viaProxy, { country: 'GB', is_proxy: false }, 'the load balancer is trusted, the visitor is not behind a proxy');
  t.equal(viaProxy.ip_hash, createHmac('sha256', services.keys.hashes).update(LONDON).digest('hex'));
  const chained = await submitOnce(app, who, widget, { remoteAddress: '127.0.0.1', headers: { 'x-forwarded-for': `192.0.2.1, ${LONDON}` } });
  t.match(chained, { is_proxy: true, country: 'GB' }, 'an extra hop beyond the trusted one is a proxy');
});

t.test("referer is where the visitor came from, as the embed reports it; never the host page the request's Referer names", async (t) => {
  const submit = await pageFactsSubmitter(t, { referer: 'https://shop.example/' });
  t.match(await submit({ pageUrl: 'https://shop.example/p', referrer: 'https://news.example/story?id=7' }), { referer: 'https://news.example/story?id=7', referer_domain: 'news.example' });
  t.match(await submit({ pageUrl: 'https://shop.example/p' }), { referer: null, referer_domain: null }, 'a page opened directly has no referrer, whatever the Referer header says');
  t.match(await submit({ referrer: 'javascript:alert(1)' }), { referer: null, referer_domain: null }, 'only http(s) addresses');
});

t.test('page_url and referer are at most 2,048 characters as stored, percent-encoded, and never cut inside an escape', async (t) => {
  const submit = await pageFactsSubmitter(t);
  // 1,030 emoji (2,060 characters, cut to 2,048 as sent) become twelve characters each once encoded.
  for (const offset of [0, 1, 2]) {
    const address = `https://x.example/${'a'.repeat(offset)}${'😀'.repeat(1030)}`;
    const stored = (await submit({ pageUrl: address, referrer: address })) as { page_url: string; referer: string };
    t.ok(stored.page_url.length <= 2048 && stored.page_url.length > 2030, `page_url ${stored.page_url.length} characters`);
    t.equal(stored.referer.length, stored.page_url.length, 'referer the same');
    t.match(stored.page_url, /(%[0-9A-F]{2})$/, 'ends on a whole escape');
    t.ok(new URL(address).href.startsWith(stored.page_url), 'the beginning of the encoded address');
  }
  // Characters of two, three and four bytes, the cut falling at every place among their escapes: the stored address decodes.
  for (const [character, count] of [['ü', 400], ['€', 250], ['😀', 200]] as const) {
    for (let offset = 0; offset < 12; offset++) {
      const stored = (await submit({ pageUrl: `https://x.example/${'a'.repeat(offset)}${character.repeat(count)}` })) as { page_url: string };
      t.doesNotThrow(() => decodeURIComponent(stored.page_url), `${character} after ${offset}: ends on a whole character (${stored.page_url.slice(-12)})`);
      t.ok(stored.page_url.length > 2048 - 12, 'and loses no more than that character');
    }
  }
  const utm = await submit({ pageUrl: `https://x.example/${'ü'.repeat(400)}?utm_source=mail` });
  t.match(utm, { page_url: /^[^?]+$/, utm_source: 'mail' }, 'UTM values are read from the whole address, the cut query included');
  const short = await submit({ pageUrl: 'https://shop.example/café' });
  t.equal(short.page_url, 'https://shop.example/caf%C3%A9', 'a short one whole');
});
