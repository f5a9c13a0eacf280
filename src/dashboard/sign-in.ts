import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { execute, load } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import type { App } from '../http/instance.js';
import type { Context } from '../kernel/context.js';
import { checkOrigin, cookieOptions, requireSession, SESSION_COOKIE, sessionIdOf, sessionOf } from './auth.js';
import { checkLinkToken } from './login-link.js';
import { escapeHtml, page, sendPage } from './pages.js';
import { linkUsed, session, SESSION_LIFETIME_MS } from './session.js';

const SIGN_IN_SCRIPT = "document.getElementById('sign-in').submit();\n";

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
    if (!code?.startsWith('login_link_') || !(request.headers.accept ?? '').includes('text/html')) throw error;
    const body = `<h1>This login link cannot sign you in</h1>
<p>${escapeHtml((error as AppError).message)}.</p>
<p>A link signs in once, within 15 minutes of being made. To sign in, ask for a new one: <code>npm run --silent admin -- login-link --account YOUR_ACCOUNT_ID</code></p>`;
    sendPage(reply, (error as AppError).statusCode, page('Sign in', body));
    return { page: true };
  }
}

/**
 * Sign-in by a login link, the signed-out page, and sign-out. The link's
 * GET only shows a button (a page that submits itself): link scanners
 * prefetch GETs, and a SameSite=Strict cookie set during a cross-site
 * navigation would not come back on the redirect after it.
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
    const form = `<h1>Sign in to the dashboard</h1>
<form id="sign-in" method="post" action="/dashboard/login">
<input type="hidden" name="t" value="${escapeHtml(String(token))}">
<button type="submit">Sign in</button>
</form>`;
    // The service's no-referrer policy would make the browser send `Origin: null` with the form, which checkOrigin refuses.
    return sendPage(reply, 200, page('Sign in', form, '<meta name="referrer" content="same-origin">\n<script src="/dashboard/sign-in.js" defer></script>\n'));
  });

  app.get('/dashboard/sign-in.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('application/javascript; charset=utf-8').header('cache-control', 'no-cache').send(SIGN_IN_SCRIPT),
  );

  // Forms post url-encoded bodies: taken on this route alone, every other one takes JSON only.
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<ZodTypeProvider>();
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
      // A repeated field stays a list, which the body's schema refuses, rather than the last one silently winning.
      const fields: Record<string, string | string[]> = {};
      for (const [name, value] of new URLSearchParams(String(body))) {
        const seen = fields[name];
        fields[name] = seen === undefined ? value : [...(Array.isArray(seen) ? seen : [seen]), value];
      }
      done(null, fields);
    });
    scope.post('/dashboard/login', { schema: { hide: true, body: z.object({ t: z.string().max(500) }) } }, async (request, reply) => {
      await app.limits.take(request, reply, app.limits.address(request));
      checkOrigin(services, request);
      const at = services.clock();
      const secret = services.random(32).toString('base64url');
      const sessionId = sessionIdOf(services, secret);
      const signedIn = await orPage(request, reply, async () => {
        const link = checkLinkToken(services.keys.loginLinks, request.body.t, at);
        // The link's stream must not exist yet: that is what makes a link sign in once, on any instance.
        await execute(services.commands, session, link.linkId, { type: 'SignIn', session_id: sessionId, account_id: link.accountId, link_id: link.linkId, at: at.toISOString() }, { actor: sessionId, at, requestId: request.id });
      });
      if ('page' in signedIn) return reply;
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
<p>To sign in again, ask for a new login link: <code>npm run --silent admin -- login-link --account YOUR_ACCOUNT_ID</code></p>`,
      ),
    );
  });

  app.post('/dashboard/api/sign-out', { preHandler: requireSession(services), schema: { hide: true } }, async (request, reply) => {
    const { sessionId, linkId } = sessionOf(request);
    const at = services.clock();
    await execute(services.commands, session, linkId, { type: 'SignOut', session_id: sessionId, reason: 'signed_out', at: at.toISOString() }, { actor: sessionId, at, requestId: request.id });
    return reply.clearCookie(SESSION_COOKIE, cookieOptions(services, request.protocol)).code(204).send();
  });
}
