/**
 * What one account can take of the dashboard: its JSON endpoints are
 * rate-limited per session and per account, an account holds at most 50
 * unrevoked keys, the key list is paged, and making a key costs the same
 * however many keys the account ever made.
 */
import t from 'tap';
import { MAX_ACTIVE_KEYS } from '../../src/accounts/key.js';
import type { App } from '../../src/app.js';
import { DASHBOARD_RATES } from '../../src/http/rate-limits.js';
import { manualClock, owner, testApp } from '../support/app.js';
import { anAccount, apiKeys, given } from '../support/given.js';
import { signIn, type Browser } from './support.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, error: String, code, message: String });

const as = (app: App, browser: Browser) => ({
  get: (url: string) => app.inject({ method: 'GET', url, headers: { cookie: browser.cookie } }),
  post: (url: string, payload?: object) => app.inject({ method: 'POST', url, headers: browser.writes, ...(payload ? { payload } : {}) }),
  delete: (url: string) => app.inject({ method: 'DELETE', url, headers: browser.writes }),
});

t.test('the JSON endpoints are rate-limited per session, then per account across its sessions: 429 rate_limited with Retry-After', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'free');
  const first = as(app, await signIn(app, services, who.accountId));
  // Signing in asked for the session once already.
  for (let i = 2; i <= DASHBOARD_RATES.session; i++) {
    const reply = await first.get('/dashboard/api/session');
    if (reply.statusCode !== 200) return t.fail(`request ${i} refused: ${reply.body}`);
  }
  const refused = await first.get('/dashboard/api/keys');
  t.match({ status: refused.statusCode, body: refused.json() }, { status: 429, body: D3(429, 'rate_limited') }, `past ${DASHBOARD_RATES.session} a minute, a session is refused`);
  t.match(refused.headers['retry-after'], /^\d+$/, 'with Retry-After');
  t.equal(refused.headers['x-ratelimit-limit'], String(DASHBOARD_RATES.session));
  const write = await first.post('/dashboard/api/forms', { title: 'Too many' });
  t.equal(write.statusCode, 429, 'changes too');

  // Another session of the same account has room of its own, up to the account's rate (the refusals above counted for neither).
  const second = as(app, await signIn(app, services, who.accountId));
  const third = as(app, await signIn(app, services, who.accountId));
  for (let i = 1; i <= DASHBOARD_RATES.account - DASHBOARD_RATES.session - 2; i++) {
    const reply = await (i % 2 ? second : third).get('/dashboard/api/session');
    if (reply.statusCode !== 200) return t.fail(`request ${i} of the other sessions refused: ${reply.body}`);
  }
  const byAccount = await third.get('/dashboard/api/widgets');
  t.match({ status: byAccount.statusCode, body: byAccount.json() }, { status: 429, body: D3(429, 'rate_limited') }, 'the account\'s sessions together are held to its rate');

  // Another account is not held by it.
  const other = as(app, await signIn(app, services, (await owner(services, 'free')).accountId));
  t.equal((await other.get('/dashboard/api/session')).statusCode, 200);

  // Without a session: counted against the address, at the lowest plan's rate.
  let anonymous;
  for (let i = 0; i <= 60; i++) anonymous = await app.inject({ method: 'GET', url: '/dashboard/api/keys', remoteAddress: '198.51.100.9' });
  t.match(anonymous!.json(), D3(429, 'rate_limited'), 'requests without a session, per address');
});

t.test('an account holds at most 50 unrevoked keys: the 51st is 409 key_limit_reached; a revoked one frees its place', async (t) => {
  // Given an account with 50 keys: its first and 49 more.
  const who = anAccount('business');
  const more = apiKeys(who, MAX_ACTIVE_KEYS - 1);
  const made = more.ids;
  const { app, services } = await given(t, [...who.events, ...more.events], { clock: manualClock() });
  const me = as(app, await signIn(app, services, who.accountId));
  const over = await me.post('/dashboard/api/keys', { name: 'one too many' });
  t.match({ status: over.statusCode, body: over.json() }, { status: 409, body: { ...D3(409, 'key_limit_reached'), message: /50/ } });
  t.equal((await me.delete(`/dashboard/api/keys/${made[0]}`)).statusCode, 200);
  t.equal((await me.post('/dashboard/api/keys', { name: 'in its place' })).statusCode, 201, 'a revoked key frees its place');
  t.match((await me.post('/dashboard/api/keys', { name: 'and no more' })).json(), D3(409, 'key_limit_reached'));

  // Requests at the same moment are held to it too.
  await me.delete(`/dashboard/api/keys/${made[1]}`);
  await me.delete(`/dashboard/api/keys/${made[2]}`);
  const together = await Promise.all(Array.from({ length: 6 }, (_, i) => me.post('/dashboard/api/keys', { name: `together ${i}` })));
  t.same(together.map((reply) => reply.statusCode).sort(), [201, 201, 409, 409, 409, 409], 'two places, two keys');
  t.equal(await services.readModels.count('api_keys', { account_id: who.accountId, revoked_at: null }), MAX_ACTIVE_KEYS);
});

t.test('the key list is paged as the API pages its lists, newest first', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const who = await owner(services, 'business');
  const me = as(app, await signIn(app, services, who.accountId));
  for (let i = 1; i <= 11; i++) {
    clock.advance(1000);
    t.equal((await me.post('/dashboard/api/keys', { name: `key ${i}` })).statusCode, 201);
  }
  const first = (await me.get('/dashboard/api/keys')).json();
  t.match(first.pagination, { page: 1, limit: 50, total: 12, totalPages: 1 });
  t.equal(first.keys.length, 12);
  const page = (await me.get('/dashboard/api/keys?page=2&limit=5')).json();
  t.strictSame(page.pagination, { page: 2, limit: 5, total: 12, totalPages: 3 });
  t.same(page.keys.map((k: { name: string }) => k.name), ['key 6', 'key 5', 'key 4', 'key 3', 'key 2']);
  t.equal((await me.get('/dashboard/api/keys?limit=500')).json().pagination.limit, 100, 'above 100 is served as 100');
  t.match((await me.get('/dashboard/api/keys?page=0')).json(), D3(400, 'validation_error'));
});

t.test('making a key reads and writes a stream of its own: the account\'s stream does not grow with its keys', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'business');
  const me = as(app, await signIn(app, services, who.accountId));
  const accountStream = `account-${who.accountId}`;
  const before = (await services.events.readStream(accountStream)).length;
  for (let i = 0; i < 5; i++) {
    const key = (await me.post('/dashboard/api/keys', { name: `key ${i}` })).json().key_id as string;
    t.same((await services.events.readStream(`api-key-${key}`)).map((e) => e.type), ['ApiKeyIssued'], 'the key\'s own stream');
    await me.delete(`/dashboard/api/keys/${key}`);
    t.same((await services.events.readStream(`api-key-${key}`)).map((e) => e.type), ['ApiKeyIssued', 'ApiKeyRevoked'], 'revoked there');
  }
  t.equal((await services.events.readStream(accountStream)).length, before, 'nothing of them in the account\'s stream');
  // The account's first key lives in the account's stream, and is revoked there.
  t.equal((await me.delete(`/dashboard/api/keys/${who.keyId}`)).statusCode, 200);
  t.same((await services.events.readStream(accountStream)).map((e) => e.type), ['AccountOpened', 'ApiKeyIssued', 'ApiKeyRevoked']);
  const listed = (await me.get('/dashboard/api/keys')).json().keys as Array<{ revoked_at: string | null }>;
  t.equal(listed.length, 6);
  t.ok(listed.every((k) => k.revoked_at !== null), 'every key shows revoked');
  t.equal((await app.inject({ method: 'GET', url: '/api/forms', headers: who.headers })).statusCode, 401, 'and the first key no longer works');
});
