import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { execute, load } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import type { App } from '../http/instance.js';
import type { Context } from '../kernel/context.js';
import { checkOrigin, cookieOptions, requireSession, SESSION_COOKIE, sessionIdOf, sessionOf, findSession, type DashboardSession } from './auth.js';
import { ACCOUNTS } from '../../projections/accounts.js';
import { checkLinkToken } from './login-link.js';
import { escapeHtml, page, sendPage } from './pages.js';
import { linkUsed, session, SESSION_LIFETIME_MS } from './session.js';

const wantsHtml = (request: FastifyRequest) => (request.headers.accept ?? '').includes('text/html');

/**
 * A link that cannot sign in, told to a browser as a page (the same status,
 * and how to get a new link) rather than as the JSON error a client gets.
 * Answers `{ page }` once that page is sent: a reply is thenable, so it must
 * not be handed back as a value to await.
 */
async function orPage<T>(request: FastifyRequest, reply: FastifyReply, run: () => Promise<T>): Promise<{ value: T } | { page: true }> {
  try {
    return { value: await run() };
  } catch (error) {
    const code = error instanceof AppError ? error.code : undefined;
    if (!code?.startsWith('login_link_') || !wantsHtml(request)) throw error;
    const body = `<h1>This login link cannot sign you in</h1>
<p>${escapeHtml((error as AppError).message)}.</p>
<p>A link signs in once, within 15 minutes of being made.</p>
<p><a href="/dashboard">Ask for a new link by email</a></p>`;
    sendPage(reply, (error as AppError).statusCode, page('Sign in', body));
    return { page: true };
  }
}

interface AccountLabel {
  id: string;
  name: string;
}

async function accountLabel(services: Context, accountId: string): Promise<AccountLabel> {
  const doc = await services.readModels.get(ACCOUNTS, accountId);
  return { id: accountId, name: doc && typeof doc.name === 'string' ? doc.name : accountId };
}

const named = (account: AccountLabel) => `<strong>${escapeHtml(account.name)}</strong> (${escapeHtml(account.id)})`;

/**
 * The sign-in page: which account the link signs in to, and a button. It
 * never submits itself: another site can send a visitor to a link of its own
 * account, and only the visitor's click, with the account's name before
 * them, signs them in to it. When the browser is signed in to another
 * account, the page says so, and the button switches only on purpose.
 */
function signInPage(token: string, target: AccountLabel, current: AccountLabel | undefined): string {
  const other = current && current.id !== target.id ? current : undefined;
  const intro = other
    ? `<p>This browser is signed in to the account ${named(other)}.</p>
<p>This login link is for another account, ${named(target)}. Signing in with it signs you out of ${escapeHtml(other.name)}.</p>
<p>If you did not ask for a link to ${escapeHtml(target.name)}, someone else may have sent it to you: stay where you are.</p>`
    : `<p>This login link signs you in to the account ${named(target)}.</p>
<p>If this is not your account, or you did not ask for a link, do not sign in: close this page.</p>`;
  const label = other ? `Sign out of ${other.name} and sign in to ${target.name}` : `Sign in to ${target.name}`;
  return `<h1>Sign in to the dashboard</h1>
${intro}
<form id="sign-in" method="post" action="/dashboard/login">
<input type="hidden" name="t" value="${escapeHtml(token)}">
${other ? `<input type="hidden" name="replace" value="${escapeHtml(other.id)}">
` : ''}<button type="submit">${escapeHtml(label)}</button>
</form>
${other ? `<p><a href="/dashboard">Stay signed in to ${escapeHtml(other.name)}</a></p>
` : ''}`;
}

/** The session a sign-in would replace, if the browser holds a live one. */
async function currentAccount(services: Context, request: FastifyRequest): Promise<{ session: DashboardSession; account: AccountLabel } | undefined> {
  const found = await findSession(services, request);
  return found ? { session: found, account: { id: found.account.id, name: found.account.name } } : undefined;
}

/** Lets a scope's routes take url-encoded forms, as a page without script posts them. */
export function takeForms(scope: { addContentTypeParser: App['addContentTypeParser'] }): void {
  scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    // A repeated field stays a list, which the body's schema refuses, rather than the last one silently winning.
    const fields: Record<string, string | string[]> = {};
    for (const [name, value] of new URLSearchParams(String(body))) {
      const seen = fields[name];
      fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
    }
    done(null, fields);
  });
}

/**
 * Sign-in by a login link, the signed-out page, and sign-out. The link's
 * GET only shows the account and a button: link scanners prefetch GETs, a
 * SameSite=Strict cookie set during a cross-site navigation would not come
 * back on the redirect after it, and a page that submitted itself would sign
 * a visitor in to whatever account another site sent them a link of.
 */
export async function signInRoutes(app: App, services: Context): Promise<void> {
  app.get('/dashboard/login', { schema: { hide: true, querystring: z.object({ t: z.string().max(500).optional() }) } }, async (request, reply) => {
    await app.limits.take(request, reply, app.limits.address(request));
    const token = request.query.t;
    const link = await orPage(request, reply, async () => {
      const claims = checkLinkToken(services.keys.loginLinks, token, services.clock());
      if ((await load(services.commands, session, claims.linkId)).status !== 'none') throw linkUsed();
      return claims;
    });
    if ('page' in link) return reply;
    // The cookie comes with a navigation from this site (or a typed address) only; from another site the post finds it.
    const current = await currentAccount(services, request);
    const body = signInPage(String(token), await accountLabel(services, link.value.accountId), current?.account);
    // The service's no-referrer policy would make the browser send `Origin: null` with the form, which checkOrigin refuses.
    return sendPage(reply, 200, page('Sign in', body, '<meta name="referrer" content="same-origin">\n'));
  });

  // Forms post url-encoded bodies: taken on this route alone, every other one takes JSON only.
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<ZodTypeProvider>();
    takeForms(scope);
    const Body = z.object({ t: z.string().max(500), replace: z.string().max(100).optional() });
    scope.post('/dashboard/login', { schema: { hide: true, body: Body } }, async (request, reply) => {
      await app.limits.take(request, reply, app.limits.address(request));
      checkOrigin(services, request);
      const at = services.clock();
      const secret = services.random(32).toString('base64url');
      const sessionId = sessionIdOf(services, secret);
      let replaced: DashboardSession | undefined;
      const signedIn = await orPage(request, reply, async () => {
        const link = checkLinkToken(services.keys.loginLinks, request.body.t, at);
        const current = await currentAccount(services, request);
        // Another account's live session is replaced only when the visitor chose to, on the page that named both.
        if (current && current.account.id !== link.accountId && request.body.replace !== current.account.id) {
          if ((await load(services.commands, session, link.linkId)).status !== 'none') throw linkUsed();
          return { choose: current.account, target: link.accountId };
        }
        // The link's stream must not exist yet: that is what makes a link sign in once, on any instance.
        await execute(services.commands, session, link.linkId, { type: 'SignIn', session_id: sessionId, account_id: link.accountId, link_id: link.linkId, at: at.toISOString() }, { actor: sessionId, at, requestId: request.id });
        replaced = current?.session;
        return true as const;
      });
      if ('page' in signedIn) return reply;
      if (signedIn.value !== true) {
        const message = `This browser is signed in to another account (${signedIn.value.choose.id}): nothing changed. Send the form again with replace=${signedIn.value.choose.id} to switch`;
        if (!wantsHtml(request)) throw new AppError('signed_in_to_other_account', message);
        return sendPage(reply, 409, page('Sign in', signInPage(request.body.t, await accountLabel(services, signedIn.value.target), signedIn.value.choose), '<meta name="referrer" content="same-origin">\n'));
      }
      // The browser holds one session: the one it replaces ends now rather than linger until it expires.
      if (replaced) {
        const old = replaced;
        await execute(services.commands, session, old.linkId, { type: 'SignOut', session_id: old.sessionId, reason: 'signed_out', at: at.toISOString() }, { actor: old.sessionId, at, requestId: request.id });
      }
      return reply
        .setCookie(SESSION_COOKIE, secret, { ...cookieOptions(services, request.protocol), maxAge: SESSION_LIFETIME_MS / 1000 })
        .code(303)
        .redirect('/dashboard');
    });
  });

  // Clears nothing: a link from another site to this page must not end anyone's session (a page that finds the session gone clears its cookie).
  app.get('/dashboard/signed-out', { schema: { hide: true } }, async (_request, reply) => {
    return sendPage(
      reply,
      200,
      page(
        'Signed out',
        `<h1>You are signed out</h1>
<p>Sessions end after a while without use, after 12 hours, and when you sign out.</p>
<p><a href="/dashboard">Sign in again</a></p>`,
      ),
    );
  });

  app.post('/dashboard/api/sign-out', { preHandler: requireSession(services, { role: 'viewer' }), schema: { hide: true } }, async (request, reply) => {
    const { sessionId, linkId } = sessionOf(request);
    const at = services.clock();
    await execute(services.commands, session, linkId, { type: 'SignOut', session_id: sessionId, reason: 'signed_out', at: at.toISOString() }, { actor: sessionId, at, requestId: request.id });
    return reply.clearCookie(SESSION_COOKIE, cookieOptions(services, request.protocol)).code(204).send();
  });
}
