import type { InjectOptions } from 'fastify';
import t from 'tap';
import { changePlan, createKey } from '../../src/accounts/commands.js';
import type { App } from '../../src/app.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { metricsHeaders, tempDir } from '../support/services.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });
const REDIS_URL = process.env.REDIS_URL;
// These tests count, they do not time Redis: a command slowed by a busy machine must not fall back to counting in memory.
const PATIENT = { REDIS_TIMEOUT_MS: '2000' };

async function burst(app: App, n: number, request: InjectOptions) {
  let last;
  for (let i = 0; i < n; i++) last = await app.inject(request);
  return last!;
}

/** The same checks against the in-memory store and, when REDIS_URL is set, against Redis. */
for (const store of ['memory', 'redis'] as const) {
  t.test(`plan rates per account (${store})`, { skip: store === 'redis' && !REDIS_URL ? 'REDIS_URL is not set, so there is no Redis server to share counters in' : false }, async (t) => {
    const env = store === 'redis' ? { REDIS_URL: REDIS_URL!, ...PATIENT } : undefined;
    const { app, services } = await testApp(t, env ? { env } : {});
    const biz = await owner(services);
    const other = await owner(services);
    const list = { method: 'GET' as const, url: '/api/widgets', headers: biz.headers };
    const first = await app.inject(list);
    t.equal(first.headers['x-ratelimit-limit'], '1000', 'Business: 1000 a minute');
    t.equal(first.headers['x-ratelimit-remaining'], '999');
    t.ok(Number(first.headers['x-ratelimit-reset']) > 0 && Number(first.headers['x-ratelimit-reset']) <= 60);
    const thousandth = await burst(app, 999, list);
    t.equal(thousandth.statusCode, 200, 'the 1000th is served');
    const over = await app.inject(list);
    t.equal(over.statusCode, 429, 'the 1001st within the minute is refused');
    t.match(over.json(), D3(429, 'rate_limited'));
    t.ok(Number(over.headers['retry-after']) > 0, 'with Retry-After');
    t.equal(over.headers['x-ratelimit-remaining'], '0');
    t.equal((await app.inject({ ...list, headers: other.headers })).statusCode, 200, 'another account is unaffected');

    await changePlan(services, other.accountId, 'pro');
    t.match((await app.inject({ ...list, headers: other.headers })).headers, { 'x-ratelimit-limit': '300' }, 'Pro: 300 (and then plan_required)');
    await changePlan(services, other.accountId, 'free');
    t.match((await app.inject({ ...list, headers: other.headers })).headers, { 'x-ratelimit-limit': '60' }, 'Free: 60');
  });
}

t.test('an account\'s keys share its rate: more keys make no more room', async (t) => {
  const { app, services } = await testApp(t);
  const free = await owner(services, 'free');
  const keys = [free.headers, ...(await Promise.all([1, 2].map(async (i) => ({ authorization: `Bearer ${(await createKey(services, { accountId: free.accountId, name: `more ${i}`, scopes: ['forms:read'] })).api_key}` }))))];
  // Free: 60 a minute, answered 403 plan_required on K endpoints once counted.
  for (let i = 0; i < 60; i++) {
    const reply = await app.inject({ method: 'GET', url: '/api/widgets', headers: keys[i % 3]! });
    if (reply.statusCode !== 403) return t.fail(`request ${i + 1}: ${reply.body}`);
  }
  for (const [i, headers] of keys.entries()) {
    const over = await app.inject({ method: 'GET', url: '/api/widgets', headers });
    t.match({ status: over.statusCode, body: over.json() }, { status: 429, body: D3(429, 'rate_limited') }, `key ${i + 1} is refused once the account's 60 are used`);
  }
  const other = await owner(services, 'free');
  t.equal((await app.inject({ method: 'GET', url: '/api/widgets', headers: other.headers })).statusCode, 403, 'another account counts on its own');
});

t.test('bad keys count against the address; the window resets', async (t) => {
  // Short, so the test can wait it out; yet the 62 requests below must fit in one window,
  // which takes well under a second even on a loaded machine.
  const { app, services } = await testApp(t, { rateWindowMs: 5000 });
  const biz = await owner(services);
  const guess = { method: 'GET' as const, url: '/api/widgets', headers: { authorization: `Bearer svc_${'x'.repeat(43)}` }, remoteAddress: '198.51.100.7' };
  const sixtieth = await burst(app, 60, guess);
  t.equal(sixtieth.statusCode, 401);
  t.match((await app.inject(guess)).json(), D3(429, 'rate_limited'), 'the 61st guess from one address is refused');
  t.equal((await app.inject({ ...guess, remoteAddress: '198.51.100.8' })).statusCode, 401, 'another address is not');
  t.equal((await app.inject({ method: 'GET', url: '/api/widgets', headers: biz.headers, remoteAddress: '198.51.100.7' })).statusCode, 200, 'a valid key from that address counts on its own');
  // Each try is refused, and counted, until the window ends; the first after it is counted afresh.
  t.ok(await eventually(async () => (await app.inject(guess)).statusCode === 401, { everyMs: 250 }), 'after the window it is counted afresh');
});

t.test('public endpoints count per owner and address at the owner’s rate', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  await changePlan(services, biz.accountId, 'free');
  const read = { method: 'GET' as const, url: `/api/widgets/${widget}`, remoteAddress: '203.0.113.1' };
  const first = await app.inject(read);
  t.equal(first.headers['x-ratelimit-limit'], '60', "the owner's plan sets the rate");
  await burst(app, 59, read);
  t.match((await app.inject(read)).json(), D3(429, 'rate_limited'));
  t.match((await app.inject({ method: 'GET', url: `/api/widgets/${widget}/token`, remoteAddress: '203.0.113.1' })).json(), D3(429, 'rate_limited'), 'token and read share the visitor’s count');
  t.equal((await app.inject({ ...read, remoteAddress: '203.0.113.2' })).statusCode, 200, 'another visitor is not limited');
  const probe = { method: 'GET' as const, url: '/api/widgets/wgt_nothing', remoteAddress: '203.0.113.3' };
  await burst(app, 60, probe);
  t.match((await app.inject(probe)).json(), D3(429, 'rate_limited'), 'probing unknown ids is limited per address');
});

t.test('per-object submission limits and honeypot (Pro and Business), duplicate protection (every plan)', async (t) => {
  const { app, services } = await testApp(t);
  const pro = await owner(services);
  const submitTo = async (widget: string, body: object = {}, remoteAddress = '192.0.2.10') =>
    app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, remoteAddress, payload: { answers: { rating: 4 }, _token: await tokenFor(app, 'widgets', widget), ...body } });
  const limited = await publishedWidget(app, pro, { settings: { rate_limit: { max: 2, window_seconds: 60 } } });
  const trapped = await publishedWidget(app, pro, { settings: { honeypot: true } });
  const single = await publishedWidget(app, pro, { settings: { prevent_duplicates: true } });
  const freeOwner = await owner(services);
  const freeWidget = await publishedWidget(app, freeOwner, { settings: { rate_limit: { max: 1, window_seconds: 60 }, honeypot: true, prevent_duplicates: true } });
  await changePlan(services, pro.accountId, 'pro');
  await changePlan(services, freeOwner.accountId, 'free');
  const count = async (who: typeof pro, widget: string) => {
    await changePlan(services, who.accountId, 'business');
    const total = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: who.headers })).json().pagination.total;
    await changePlan(services, who.accountId, who === pro ? 'pro' : 'free');
    return total;
  };

  t.equal((await submitTo(limited)).statusCode, 200);
  t.equal((await submitTo(limited)).statusCode, 200);
  const third = await submitTo(limited);
  t.match(third.json(), D3(429, 'rate_limited'), 'the object’s own limit, per address');
  t.ok(Number(third.headers['retry-after']) > 0);
  t.equal(third.headers['x-ratelimit-limit'], '2', 'the headers of the limit that refused it, not the plan’s');
  t.equal(third.headers['x-ratelimit-remaining'], '0');
  t.equal((await submitTo(limited, {}, '192.0.2.11')).statusCode, 200, 'another address is not limited');

  const events = (await services.events.readAll({ after: 0n, limit: 100_000 })).length;
  const caught = await submitTo(trapped, { _hp: 'http://spam.example' });
  t.equal(caught.statusCode, 200, 'a bot gets the normal reply');
  t.match(caught.json(), { success: true, id: /^rsp_/ });
  t.equal((await services.events.readAll({ after: 0n, limit: 100_000 })).length, events, 'and nothing is stored');
  t.equal(await count(pro, trapped), 0);
  t.match((await app.inject({ method: 'GET', url: '/metrics', headers: metricsHeaders })).body, /feedback_honeypot_caught_total\{kind="widget"\} 1/, 'it is counted in the metrics');
  t.equal((await submitTo(trapped, { _hp: '' })).statusCode, 200);
  t.equal(await count(pro, trapped), 1, 'an empty honeypot is a person');

  const fp = (fingerprint: string) => ({ metadata: { fingerprint } });
  t.equal((await submitTo(single, fp('visitor-a'))).statusCode, 200);
  t.match((await submitTo(single, fp('visitor-a'))).json(), D3(409, 'duplicate_submission'));
  t.equal((await submitTo(single, fp('visitor-b'))).statusCode, 200, 'another visitor');
  const race = await Promise.all(Array.from({ length: 8 }, () => submitTo(single, fp('visitor-c'))));
  t.equal(race.filter((r) => r.statusCode === 200).length, 1, 'one of eight simultaneous submissions of one visitor is kept');
  t.equal(await count(pro, single), 3);
  await changePlan(services, pro.accountId, 'business');
  const first = (await app.inject({ method: 'GET', url: `/api/widgets/${single}/responses`, headers: pro.headers })).json().responses.at(-1).id;
  t.match((await app.inject({ method: 'DELETE', url: '/api/responses', headers: pro.headers, payload: { ids: [first], widgetId: single } })).json(), { success: true, deleted: 1, erasure_id: /^ers_/ });
  t.match((await submitTo(single, fp('visitor-a'))).json(), D3(409, 'duplicate_submission'), 'an erased response still counts as its visitor\'s one answer');

  for (let i = 0; i < 3; i++) t.equal((await submitTo(freeWidget, { _hp: 'bot', ...fp(`free-${i}`) })).statusCode, 200, `Free owners get neither the rate limit nor the honeypot (${i})`);
  t.equal(await count(freeOwner, freeWidget), 3);
  t.match((await submitTo(freeWidget, fp('free-0'), '192.0.2.12')).json(), D3(409, 'duplicate_submission'), 'but duplicate protection holds on every plan (spec 5.7)');
});

t.test('two instances on one Redis share their counters', { skip: REDIS_URL ? false : 'REDIS_URL is not set, so there is no Redis server to share counters in' }, async (t) => {
  const first = await testApp(t, { env: { REDIS_URL: REDIS_URL!, ...PATIENT }, dataDir: tempDir(t) });
  const second = await testApp(t, { env: { REDIS_URL: REDIS_URL!, ...PATIENT }, dataDir: tempDir(t) });
  const address = `198.18.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}`;
  const guess = { method: 'GET' as const, url: '/api/widgets', headers: { authorization: 'Bearer nope' }, remoteAddress: address };
  await burst(first.app, 30, guess);
  t.equal((await burst(second.app, 30, guess)).statusCode, 401, '60 across both instances');
  t.match((await first.app.inject(guess)).json(), D3(429, 'rate_limited'), 'the 61st is refused on either');
});
