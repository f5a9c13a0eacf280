import t from 'tap';
import { openAccount } from '../../src/accounts/commands.js';
import { issueLoginLink } from '../../src/dashboard/commands.js';
import { owner, manualClock, testApp } from '../support/app.js';
import { admin, json } from '../support/processes.js';
import { tempDir } from '../support/services.js';
import { linkToken, postLogin, signIn } from './support.js';

/** D3: every refusal has this shape. */
const D3 = (statusCode: number, code: string) => ({ statusCode, error: String, code, message: String });
const MINUTE = 60_000;

t.test('a login link signs in once: the page, the form post, the cookie, then 401 login_link_used', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'free');
  const token = await linkToken(services, who.accountId);

  const page = await app.inject({ method: 'GET', url: `/dashboard/login?t=${encodeURIComponent(token)}` });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /^text\/html/);
  t.match(page.body, /<form id="sign-in" method="post" action="\/dashboard\/login">/);
  t.notOk(page.cookies.some((c) => c.name === 'fs_session'), 'the GET does not sign in (link scanners prefetch it)');
  t.match(page.headers['content-security-policy'], /script-src 'self'/);

  const first = await postLogin(app, token);
  t.equal(first.statusCode, 303);
  t.equal(first.headers.location, '/dashboard');
  const cookie = first.cookies.find((c) => c.name === 'fs_session')!;
  t.ok(cookie, 'sets the session cookie');
  t.match(cookie.value, /^[A-Za-z0-9_-]{43}$/, '32 random bytes, base64url');
  t.equal(cookie.httpOnly, true);
  t.equal(cookie.sameSite, 'Strict');
  t.equal(cookie.path, '/dashboard');
  t.notOk(cookie.secure, 'not Secure over plain http with an http base URL');

  const session = await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: `fs_session=${cookie.value}` } });
  t.equal(session.statusCode, 200);
  t.match(session.json(), {
    account: { id: who.accountId, name: 'free owner', plan: 'free' },
    csrf_token: /^[A-Za-z0-9_-]{43}$/,
    idle_expires_at: '2026-11-22T10:30:00.000Z',
    plan_limits: { api_access: false, create_widgets: false, rate_limit_per_minute: 60, honeypot: false, per_ip_rate_limit: false },
  });

  const again = await postLogin(app, token);
  t.equal(again.statusCode, 401);
  t.match(again.json(), D3(401, 'login_link_used'));
  const pageAgain = await app.inject({ method: 'GET', url: `/dashboard/login?t=${encodeURIComponent(token)}` });
  t.match(pageAgain.json(), D3(401, 'login_link_used'), 'the page says so too');

  // A browser (which asks for HTML) is told on a page, with the same status, and how to get a new link.
  const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';
  for (const reply of [
    await app.inject({ method: 'GET', url: `/dashboard/login?t=${encodeURIComponent(token)}`, headers: { accept: html } }),
    await postLogin(app, token, { accept: html }),
  ]) {
    t.equal(reply.statusCode, 401);
    t.match(reply.headers['content-type'], /^text\/html/);
    t.match(reply.body, /This login link has been used already/);
    t.match(reply.body, /<a href="\/dashboard">Ask for a new link by email<\/a>/);
  }
  const forged = await app.inject({ method: 'GET', url: '/dashboard/login?t=%3Cscript%3E', headers: { accept: html } });
  t.equal(forged.statusCode, 401);
  t.match(forged.body, /This login link is not valid/);
  t.notOk(forged.body.includes('<script>'), 'nothing of the link is written into the page');
});

t.test('events: the link and the session are recorded, never the token or the cookie', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'pro');
  const token = await linkToken(services, who.accountId);
  const signedIn = await postLogin(app, token);
  const secret = signedIn.cookies.find((c) => c.name === 'fs_session')!.value;
  const history = await services.events.readAll({ after: 0n, limit: 1000 });
  const text = JSON.stringify(history, (_k, v) => (typeof v === 'bigint' ? String(v) : v));
  t.notOk(text.includes(token.split('.').at(-1)!), 'no event holds the link signature');
  t.notOk(text.includes(secret), 'no event holds the session secret');
  const types = history.map((e) => e.type);
  t.ok(types.includes('LoginLinkIssued'));
  t.ok(types.includes('DashboardSignedIn'));
  const signIn = history.find((e) => e.type === 'DashboardSignedIn')!;
  t.equal(signIn.streamId, `login-${token.split('.')[0]}`, 'in the link\'s own stream');
  t.match(signIn.data, { account_id: who.accountId, link_id: token.split('.')[0], session_id: /^ses_[0-9a-f]{64}$/ });
});

t.test('an expired link: 401 login_link_expired on the page and the post', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const who = await owner(services, 'free');
  const token = await linkToken(services, who.accountId);
  clock.advance(15 * MINUTE);
  const page = await app.inject({ method: 'GET', url: `/dashboard/login?t=${encodeURIComponent(token)}` });
  t.equal(page.statusCode, 401);
  t.match(page.json(), D3(401, 'login_link_expired'));
  const post = await postLogin(app, token);
  t.match(post.json(), D3(401, 'login_link_expired'));
  t.notOk(post.cookies.some((c) => c.name === 'fs_session'));
});

t.test('a forged or altered link: 401 login_link_invalid', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'free');
  const other = await owner(services, 'business');
  const token = await linkToken(services, who.accountId);
  const [linkId, accountId, expiry, signature] = token.split('.') as [string, string, string, string];
  const flip = (s: string) => (s[0] === 'A' ? 'B' : 'A') + s.slice(1);
  const forged = {
    'another account': [linkId, other.accountId, expiry, signature].join('.'),
    'a later expiry': [linkId, accountId, (parseInt(expiry, 36) + 3_600_000).toString(36), signature].join('.'),
    'an altered signature': [linkId, accountId, expiry, flip(signature)].join('.'),
    'another link id': [`lnk_${'0'.repeat(26)}`, accountId, expiry, signature].join('.'),
    'not a token': 'hello',
    empty: '',
  };
  for (const [name, bad] of Object.entries(forged)) {
    const page = await app.inject({ method: 'GET', url: `/dashboard/login?t=${encodeURIComponent(bad)}` });
    t.match({ status: page.statusCode, body: page.json() }, { status: 401, body: D3(401, 'login_link_invalid') }, `${name}: page`);
    const post = await postLogin(app, bad);
    t.match({ status: post.statusCode, body: post.json() }, { status: 401, body: D3(401, 'login_link_invalid') }, `${name}: post`);
  }
  const none = await app.inject({ method: 'GET', url: '/dashboard/login' });
  t.match(none.json(), D3(401, 'login_link_invalid'), 'no token at all');
});

t.test('a forged cookie: 401 session_required on the JSON endpoints, 303 to the signed-out page on pages', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'free');
  const real = await signIn(app, services, who.accountId);
  for (const cookie of ['fs_session=' + 'A'.repeat(43), 'fs_session=nonsense', 'fs_session=' + real.cookie.slice(11).replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), '']) {
    const api = await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: cookie ? { cookie } : {} });
    t.match({ status: api.statusCode, body: api.json() }, { status: 401, body: D3(401, 'session_required') }, `${cookie || 'no cookie'}: api`);
    const page = await app.inject({ method: 'GET', url: '/dashboard/forms', headers: cookie ? { cookie } : {} });
    t.equal(page.statusCode, 303);
    t.equal(page.headers.location, '/dashboard/signed-out');
    const cleared = String(page.headers['set-cookie'] ?? '');
    if (cookie) t.match(cleared, /^fs_session=;.*Path=\/dashboard/, `${cookie}: the useless cookie is cleared`);
    else t.equal(cleared, '', 'no cookie, none cleared');
  }
  const signedOut = await app.inject({ method: 'GET', url: '/dashboard/signed-out', headers: { cookie: real.cookie } });
  t.equal(signedOut.statusCode, 200);
  t.match(signedOut.body, /<a href="\/dashboard">Sign in again<\/a>/, 'says how to get a new link');
  t.equal(signedOut.headers['set-cookie'], undefined, 'the page itself clears nothing: a link to it from another site ends no session');
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: real.cookie } })).statusCode, 200, 'the session lives on');
});

t.test('idle expiry: 30 minutes without a request end the session, and the end is recorded', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const who = await owner(services, 'free');
  const browser = await signIn(app, services, who.accountId);
  const get = () => app.inject({ method: 'GET', url: '/dashboard/api/forms', headers: { cookie: browser.cookie } });
  clock.advance(29 * MINUTE);
  t.equal((await get()).statusCode, 200, 'used within 30 minutes');
  clock.advance(29 * MINUTE);
  t.equal((await get()).statusCode, 200, 'each request keeps it alive');
  clock.advance(30 * MINUTE);
  const idle = await get();
  t.equal(idle.statusCode, 401);
  t.match(idle.json(), D3(401, 'session_required'));
  clock.advance(-10 * MINUTE);
  t.equal((await get()).statusCode, 401, 'an ended session stays ended');
  const ended = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((e) => e.type === 'DashboardSignedOut');
  t.equal(ended.length, 1);
  t.match(ended[0]!.data, { account_id: who.accountId, reason: 'expired' });
});

t.test('DASHBOARD_IDLE_MINUTES sets the idle expiry', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock, env: { DASHBOARD_IDLE_MINUTES: '5' } });
  const who = await owner(services, 'free');
  const browser = await signIn(app, services, who.accountId);
  clock.advance(5 * MINUTE);
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: browser.cookie } })).statusCode, 401);
});

t.test('the absolute lifetime: 12 hours however active', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const who = await owner(services, 'free');
  const browser = await signIn(app, services, who.accountId);
  const get = () => app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: browser.cookie } });
  for (let minutes = 20; minutes < 12 * 60; minutes += 20) {
    clock.advance(20 * MINUTE);
    const alive = await get();
    if (alive.statusCode !== 200) return t.fail(`ended after ${minutes} minutes`);
  }
  t.equal(clock().toISOString(), '2026-11-22T21:40:00.000Z');
  t.match((await get()).json(), { idle_expires_at: '2026-11-22T22:00:00.000Z' }, 'the end shown is the lifetime\'s');
  clock.advance(20 * MINUTE);
  t.match((await get()).json(), D3(401, 'session_required'));
});

t.test('sign-out ends the session everywhere and clears the cookie', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'free');
  const browser = await signIn(app, services, who.accountId);
  const other = await signIn(app, services, who.accountId);
  const out = await app.inject({ method: 'POST', url: '/dashboard/api/sign-out', headers: browser.writes });
  t.equal(out.statusCode, 204);
  const cleared = out.cookies.find((c) => c.name === 'fs_session')!;
  t.equal(cleared.value, '');
  t.equal(cleared.path, '/dashboard');
  t.match((await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: browser.cookie } })).json(), D3(401, 'session_required'));
  const signInPage = await app.inject({ method: 'GET', url: '/dashboard', headers: { cookie: browser.cookie } });
  t.match([signInPage.statusCode, signInPage.body], [200, /action="\/dashboard\/sign-in"/], 'the dashboard is the sign-in form');
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: other.cookie } })).statusCode, 200, 'another session of the account goes on');
  const ended = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((e) => e.type === 'DashboardSignedOut');
  t.match(ended.map((e) => e.data), [{ reason: 'signed_out', account_id: who.accountId }]);
});

t.test('cross-site requests: 403 csrf_rejected', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const who = await owner(services, 'free');
  const browser = await signIn(app, services, who.accountId);
  const form = { title: 'Newsletter' };
  const post = (headers: Record<string, string>) => app.inject({ method: 'POST', url: '/dashboard/api/forms', headers, payload: form });

  const foreign = await post({ ...browser.writes, origin: 'https://evil.example' });
  t.match({ status: foreign.statusCode, body: foreign.json() }, { status: 403, body: D3(403, 'csrf_rejected') }, 'a foreign Origin');
  const crossSite = await post({ ...browser.writes, 'sec-fetch-site': 'cross-site' });
  t.match(crossSite.json(), D3(403, 'csrf_rejected'), 'Sec-Fetch-Site: cross-site');
  const { 'x-csrf-token': _token, ...withoutToken } = browser.writes;
  t.match((await post(withoutToken)).json(), D3(403, 'csrf_rejected'), 'no CSRF token');
  t.match((await post({ ...browser.writes, 'x-csrf-token': 'A'.repeat(43) })).json(), D3(403, 'csrf_rejected'), 'a wrong CSRF token');
  const other = await signIn(app, services, who.accountId);
  t.match((await post({ ...browser.writes, 'x-csrf-token': other.csrf })).json(), D3(403, 'csrf_rejected'), 'another session\'s token');
  const signOut = await app.inject({ method: 'POST', url: '/dashboard/api/sign-out', headers: { ...browser.writes, origin: 'https://evil.example' } });
  t.equal(signOut.statusCode, 403, 'sign-out is a change too');
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/forms', headers: { cookie: browser.cookie } })).json().pagination.total, 0, 'nothing was created');

  t.equal((await post(browser.writes)).statusCode, 201, 'the dashboard\'s own request passes');

  const token = await linkToken(services, who.accountId);
  const login = await postLogin(app, token, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
  t.match({ status: login.statusCode, body: login.json() }, { status: 403, body: D3(403, 'csrf_rejected') }, 'a cross-site sign-in post');
  t.equal((await postLogin(app, token)).statusCode, 303, 'the link is still unused');
});

t.test('login CSRF: the page names the account and waits for a click; another account\'s session is replaced only by choice', async (t) => {
  const { app, services } = await testApp(t, { clock: manualClock() });
  const mine = await owner(services, 'pro');
  const theirs = await openAccount(services, { name: 'Attacker & Co', plan: 'free', scopes: ['forms:read'] });
  const html = 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8';

  // Someone else's link, opened by a visitor who is signed in nowhere: a page that names the account and does nothing by itself.
  const lure = await linkToken(services, theirs.account_id);
  const page = await app.inject({ method: 'GET', url: `/dashboard/login?t=${encodeURIComponent(lure)}`, headers: { accept: html } });
  t.equal(page.statusCode, 200);
  t.match(page.body, /signs you in to the account <strong>Attacker &#38; Co<\/strong> \(acc_/, 'the account is named (escaped)');
  t.match(page.body, /<button type="submit">Sign in to Attacker &#38; Co<\/button>/, 'the button says where it signs in');
  t.notMatch(page.body, /<script/, 'no script: nothing submits the form but the visitor');
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/sign-in.js' })).statusCode, 404, 'the script that submitted it is gone');

  // The visitor is signed in to their own account, and is sent the lure.
  const browser = await signIn(app, services, mine.accountId);
  const warned = await app.inject({ method: 'GET', url: `/dashboard/login?t=${encodeURIComponent(lure)}`, headers: { accept: html, cookie: browser.cookie } });
  t.match(warned.body, /This browser is signed in to the account <strong>pro owner<\/strong>/, 'the page says which account the browser is in');
  t.match(warned.body, /<input type="hidden" name="replace" value="acc_/);
  t.match(warned.body, /<a href="\/dashboard">Stay signed in to pro owner<\/a>/, 'and lets them stay');

  // A post without that choice (a form of the old page, a script of another kind): refused, nothing changes.
  const silent = await postLogin(app, lure, { cookie: browser.cookie });
  t.match({ status: silent.statusCode, body: silent.json() }, { status: 409, body: D3(409, 'signed_in_to_other_account') });
  t.notOk(silent.cookies.some((c) => c.name === 'fs_session'), 'the cookie is not replaced');
  const onPage = await postLogin(app, lure, { cookie: browser.cookie, accept: html });
  t.equal(onPage.statusCode, 409);
  t.match(onPage.body, /This browser is signed in to the account <strong>pro owner<\/strong>/, 'a browser is shown the choice');
  const wrongChoice = await app.inject({
    method: 'POST',
    url: '/dashboard/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', cookie: browser.cookie },
    payload: new URLSearchParams({ t: lure, replace: theirs.account_id }).toString(),
  });
  t.equal(wrongChoice.statusCode, 409, 'the choice must name the session it replaces');
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: browser.cookie } })).json().account.id, mine.accountId, 'the session is still the visitor\'s own');

  // Chosen on purpose: the link still works, and the session it replaces ends.
  const chosen = await app.inject({
    method: 'POST',
    url: '/dashboard/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', cookie: browser.cookie },
    payload: new URLSearchParams({ t: lure, replace: mine.accountId }).toString(),
  });
  t.equal(chosen.statusCode, 303, 'the link was not used up by the refusals');
  const cookie = `fs_session=${chosen.cookies.find((c) => c.name === 'fs_session')!.value}`;
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } })).json().account.id, theirs.account_id);
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: browser.cookie } })).statusCode, 401, 'the replaced session ended');

  // Signing in again to the same account needs no choice.
  const again = await postLogin(app, await linkToken(services, theirs.account_id), { cookie });
  t.equal(again.statusCode, 303);
});

t.test('the cookie is Secure when the service is published over https or the request came over it', async (t) => {
  await t.test('PUBLIC_BASE_URL https', async (t) => {
    const { app, services } = await testApp(t, { clock: manualClock(), env: { PUBLIC_BASE_URL: 'https://feedback.example' } });
    const who = await owner(services, 'free');
    const signedIn = await postLogin(app, await linkToken(services, who.accountId), { origin: 'https://feedback.example' });
    t.equal(signedIn.statusCode, 303);
    t.match(signedIn.cookies.find((c) => c.name === 'fs_session'), { secure: true, httpOnly: true, sameSite: 'Strict', path: '/dashboard' });
    const { url } = await issueLoginLink(services, { accountId: who.accountId });
    t.match(url, /^https:\/\/feedback\.example\/dashboard\/login\?t=/);
  });
  await t.test('a request over https behind a trusted proxy', async (t) => {
    const { app, services } = await testApp(t, { clock: manualClock(), env: { TRUST_PROXY: '1' } });
    const who = await owner(services, 'free');
    const signedIn = await postLogin(app, await linkToken(services, who.accountId), { 'x-forwarded-proto': 'https' });
    t.match(signedIn.cookies.find((c) => c.name === 'fs_session'), { secure: true });
  });
});

t.test('login-link as a real process; the session survives admin rebuild', async (t) => {
  const dataDir = tempDir(t);
  const env = { DATA_DIR: dataDir };
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'pro'], env));
  const run = await admin(['login-link', '--account', opened.account_id, '--base', 'http://127.0.0.1:3000/'], env);
  t.equal(run.code, 0, run.stderr);
  const link = json(run);
  t.strictSame(Object.keys(link).sort(), ['expires_at', 'url']);
  t.match(link.url, /^http:\/\/127\.0\.0\.1:3000\/dashboard\/login\?t=lnk_[0-9A-Z]{26}\.acc_[0-9A-Z]{26}\.[0-9a-z]+\.[A-Za-z0-9_-]{43}$/);
  t.ok(Date.parse(link.expires_at) - Date.now() <= 15 * MINUTE && Date.parse(link.expires_at) - Date.now() > 14 * MINUTE, 'valid 15 minutes');
  const unknown = await admin(['login-link', '--account', 'acc_01M82YMAXMQAPXXC00S78T8AVK'], env);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /no such account/);
  t.match((await admin(['login-link'], env)).stderr, /missing --account/);
  for (const base of ['http://a.example/?q=1', 'http://a.example/#frag']) {
    const refused = await admin(['login-link', '--account', opened.account_id, '--base', base], env);
    t.match(refused, { code: 2, stdout: '', stderr: /^admin: --base must be an http\(s\) URL without \?query or #fragment/ }, `${base}: a link cannot be made under it`);
  }

  const { app } = await testApp(t, { dataDir });
  const token = new URL(link.url).searchParams.get('t')!;
  const signedIn = await postLogin(app, token);
  t.equal(signedIn.statusCode, 303);
  const cookie = `fs_session=${signedIn.cookies.find((c) => c.name === 'fs_session')!.value}`;
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } })).statusCode, 200);

  t.match(json(await admin(['rebuild'], env)), { rebuilt: true });
  const after = await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } });
  t.equal(after.statusCode, 200, 'the session is found after the rebuild');
  t.match(after.json(), { account: { id: opened.account_id, plan: 'pro' } });
  t.match((await postLogin(app, token)).json(), D3(401, 'login_link_used'), 'and the link stays used');
});
