import type { App } from '../../src/app.js';
import type { Services } from '../../src/services.js';
import { issueLoginLink } from '../../src/dashboard/commands.js';

/** A signed-in browser: the cookie it sends, and the CSRF token its pages carry. */
export interface Browser {
  cookie: string;
  csrf: string;
  /** Headers of a same-origin dashboard request that changes something. */
  writes: Record<string, string>;
}

/** The token of a fresh login link for the account. */
export async function linkToken(services: Services, accountId: string): Promise<string> {
  const { url } = await issueLoginLink(services, { accountId });
  return new URL(url).searchParams.get('t')!;
}

/** Posts the sign-in form as the login page does; answers the reply. */
export function postLogin(app: App, token: string, headers: Record<string, string> = {}) {
  return app.inject({
    method: 'POST',
    url: '/dashboard/login',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin', ...headers },
    payload: new URLSearchParams({ t: token }).toString(),
  });
}

/** Follows a login link through to a session. */
export async function signIn(app: App, services: Services, accountId: string): Promise<Browser> {
  const token = await linkToken(services, accountId);
  const signedIn = await postLogin(app, token);
  if (signedIn.statusCode !== 303) throw new Error(`not signed in: ${signedIn.statusCode} ${signedIn.body}`);
  const set = signedIn.cookies.find((c) => c.name === 'fs_session');
  if (!set) throw new Error('no session cookie');
  const cookie = `fs_session=${set.value}`;
  const session = await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } });
  const csrf = session.json().csrf_token as string;
  return { cookie, csrf, writes: { cookie, 'x-csrf-token': csrf, origin: 'http://localhost:80' } };
}
