import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyReply } from 'fastify';
import { malformedUrl, MAX_PATH_SEGMENT, SEGMENT_TOO_LONG } from '../http/error-body.js';
import type { App } from '../http/instance.js';
import type { Context } from '../kernel/context.js';
import { DEFAULT_QUESTIONS } from '../widgets/defaults.js';
import { cookieOptions, findSession, requireSession, SESSION_COOKIE, sessionOf } from './auth.js';

/** The policy of every dashboard page: its own scripts, styles and frames only, nothing inline. */
export const DASHBOARD_CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * The pages the front end routes between (History API); each is the same
 * shell. Spelled out per kind rather than `/dashboard/:kind/:id`, which
 * would also take `/dashboard/api/<anything>` and answer an unknown JSON
 * endpoint with a page instead of the D3 404.
 */
export const SHELL_PATHS = [
  '/dashboard',
  ...['widgets', 'forms', 'polls'].flatMap((kind) => [`/dashboard/${kind}`, `/dashboard/${kind}/new`, `/dashboard/${kind}/:id`, `/dashboard/${kind}/:id/edit`, `/dashboard/${kind}/:id/analytics`]),
  '/dashboard/analytics',
  '/dashboard/settings/developers',
  '/dashboard/settings/members',
];

const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small page of the service's own (sign-in, signed out): no script but its own files, no inline style. */
export function page(title: string, body: string, head = ''): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="stylesheet" href="/dashboard/assets/app.css">
${head}</head>
<body>
<main class="standalone">
${body}
</main>
</body>
</html>
`;
}

export const sendPage = (reply: FastifyReply, status: number, html: string) =>
  reply.code(status).type('text/html; charset=utf-8').header('content-security-policy', DASHBOARD_CSP).send(html);

export { escapeHtml };

/** The page a signed-out browser finds at /dashboard: an address to send a sign-in link to. */
export function signInFormPage(services: Pick<Context, 'config'>, notice = ''): string {
  const open = services.config.SIGNUP === 'open';
  return page(
    'Sign in',
    `<h1>Sign in to the dashboard</h1>
${notice}<form method="post" action="/dashboard/sign-in" class="sign-in">
<label for="email">Email address</label>
<input id="email" name="email" type="email" autocomplete="email" required maxlength="254">
<button type="submit">Email me a sign-in link</button>
</form>
<p>We send a link that signs you in once, within 15 minutes, to each account the address is a member of.${open ? ' An address without an account gets a link that creates a Free account.' : ''}</p>`,
    // The service's no-referrer policy would make the browser send `Origin: null` with the form, which checkOrigin refuses.
    '<meta name="referrer" content="same-origin">\n',
  );
}


function shell(csrfToken: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="csrf-token" content="${escapeHtml(csrfToken)}">
<title>Dashboard</title>
<link rel="stylesheet" href="/dashboard/assets/app.css">
<script type="module" src="/dashboard/assets/app.js"></script>
</head>
<body>
<div id="app"></div>
</body>
</html>
`;
}

const ASSETS = fileURLToPath(new URL('./assets/', import.meta.url));
const UPLOT = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
// The contract's lower-case names for uPlot's files, which its package spells uPlot.*.
const VENDOR_FILES = { 'uplot.esm.js': ['uPlot.esm.js', 'text/javascript; charset=utf-8'], 'uplot.min.css': ['uPlot.min.css', 'text/css; charset=utf-8'] } as const;

/** The HTML shell of every dashboard page, and the files it loads. */
export async function pageRoutes(app: App, services: Context): Promise<void> {
  const pageSession = requireSession(services, { page: true });
  // A signed-out browser finds the sign-in form at /dashboard itself.
  app.get('/dashboard', { schema: { hide: true } }, async (request, reply) => {
    const found = await findSession(services, request);
    if (found) return sendPage(reply, 200, shell(found.csrfToken));
    if (request.cookies[SESSION_COOKIE] !== undefined) reply.clearCookie(SESSION_COOKIE, cookieOptions(services, request.protocol));
    return sendPage(reply, 200, signInFormPage(services));
  });
  for (const url of SHELL_PATHS.filter((path) => path !== '/dashboard')) {
    app.get(url, { preHandler: pageSession, schema: { hide: true } }, async (request, reply) => sendPage(reply, 200, shell(sessionOf(request).csrfToken)));
  }
  // Any other address under /dashboard: a page saying so, for a person who typed it; under /dashboard/api/
  // the D3 404 of every unknown route, for the front end's calls.
  app.get('/dashboard/*', { schema: { hide: true } }, async (request, reply) => {
    if (request.url.startsWith('/dashboard/api/')) {
      // A segment too long for the router made it fall through to here: refused as the router refuses it under /api.
      if (request.url.split('?')[0]!.split('/').some((segment) => segment.length > MAX_PATH_SEGMENT)) return reply.code(400).send(malformedUrl(SEGMENT_TOO_LONG));
      return reply.callNotFound();
    }
    return sendPage(reply, 404, page('Not found', '<h1>Not found</h1><p><a href="/dashboard">Back to the dashboard</a></p>'));
  });
  const noCache = (res: { setHeader(name: string, value: string): unknown }) => res.setHeader('cache-control', 'no-cache');
  for (const [name, [file, type]] of Object.entries(VENDOR_FILES)) {
    const content = readFileSync(join(UPLOT, file));
    app.get(`/dashboard/assets/vendor/${name}`, { schema: { hide: true } }, async (_request, reply) => reply.type(type).header('cache-control', 'no-cache').send(content));
  }
  // The questions a new widget starts with, as a module the editor imports: the service's own list, not a copy of it.
  const widgetDefaults = `export const WIDGET_DEFAULT_QUESTIONS = ${JSON.stringify(DEFAULT_QUESTIONS)};\n`;
  app.get('/dashboard/assets/widget-defaults.js', { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'no-cache').send(widgetDefaults),
  );
  await app.register(fastifyStatic, { root: ASSETS, prefix: '/dashboard/assets/', decorateReply: false, cacheControl: false, index: false, setHeaders: noCache });
}
