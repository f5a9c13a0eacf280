import type { Browser, BrowserContext, BrowserContextOptions, Page } from 'playwright-core';
import type { App } from '../../src/app.js';
import type { Services } from '../../src/services.js';
import { signIn, type Browser as Session } from '../dashboard/support.js';
import { admin, json } from './processes.js';

/** Where the dashboard is served: this process's app, listening on 127.0.0.1; or a server process on a data directory. */
export type Dashboard = { app: App; services: Services } | { url: string; dataDir: string };

export interface SignedInPage {
  context: BrowserContext;
  tab: Page;
  /** The tab's uncaught errors, from its first page on. */
  errors: string[];
  /** In process: the session the browser holds (its cookie and CSRF token), for requests made beside it. */
  session?: Session;
  /** Against a server process: the login link the command line gave and the tab followed. */
  link?: LoginLink;
}

/** What `admin login-link` prints. */
export interface LoginLink {
  url: string;
  expires_at: string;
}

/**
 * A new browser context and tab signed in to the account's dashboard. In
 * process, the session of a login link posted to the app is set as the
 * browser's cookie, and the tab has opened nothing yet; against a server
 * process, the admin command line's login link is followed and its button
 * pressed, as a person does, and the tab is on `/dashboard`. `setUp` runs on
 * the tab before it opens any page (permissions, listeners). Every wait is
 * for a condition; the 120 s bound only turns one that never comes into a
 * failure, even on a loaded machine.
 */
export async function signedInPage(
  browser: Browser,
  dashboard: Dashboard,
  accountId: string,
  options: BrowserContextOptions = {},
  setUp?: (tab: Page, context: BrowserContext) => Promise<void> | void,
): Promise<SignedInPage> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  context.setDefaultTimeout(120_000);
  const session = 'app' in dashboard ? await signIn(dashboard.app, dashboard.services, accountId) : undefined;
  if (session) {
    const [name, value] = session.cookie.split('=') as [string, string];
    await context.addCookies([{ name, value, domain: '127.0.0.1', path: '/dashboard', httpOnly: true, sameSite: 'Strict' }]);
  }
  const tab = await context.newPage();
  const errors: string[] = [];
  tab.on('pageerror', (error) => errors.push(error.message));
  await setUp?.(tab, context);
  const link = 'app' in dashboard ? undefined : await followLoginLink(tab, dashboard, accountId);
  return { context, tab, errors, ...(session ? { session } : {}), ...(link ? { link } : {}) };
}

/** Signs a tab in to a server process's dashboard by its admin command line's login link, as a person does; it ends on `/dashboard`. Answers the link. */
export async function followLoginLink(tab: Page, server: { url: string; dataDir: string }, accountId: string): Promise<LoginLink> {
  const link = json(await admin(['login-link', '--account', accountId, '--base', server.url], { DATA_DIR: server.dataDir })) as LoginLink;
  await tab.goto(link.url);
  // The link's page asks for a click, so a mail scanner following it signs no one in.
  await tab.getByRole('button', { name: /^Sign in to / }).click();
  await tab.waitForURL(`${server.url}/dashboard`);
  return link;
}
