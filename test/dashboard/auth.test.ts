import t from 'tap';
import { owner, manualClock, testApp } from '../support/app.js';
import { linkToken, postLogin } from './support.js';

const D3 = { statusCode: Number, error: String, code: String, message: String };

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
  t.match(session.json(), { account: { id: who.accountId, plan: 'free' }, csrf_token: String, idle_expires_at: '2026-11-22T10:30:00.000Z', plan_limits: { api_access: false, create_widgets: false, rate_limit_per_minute: 60 } });

  const again = await postLogin(app, token);
  t.equal(again.statusCode, 401);
  t.match(again.json(), { ...D3, statusCode: 401, code: 'login_link_used' });
  const pageAgain = await app.inject({ method: 'GET', url: `/dashboard/login?t=${encodeURIComponent(token)}` });
  t.match(pageAgain.json(), { ...D3, code: 'login_link_used' }, 'the page says so too');
});
