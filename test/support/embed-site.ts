/**
 * A site owner's setup for browser tests: objects created through the API
 * of one data directory, the service started on it as its own process, and a
 * host site on another origin whose pages paste the embed's script tag.
 */
import { createServer } from 'node:http';
import tap, { type Test } from 'tap';
import { chromium, type Browser } from 'playwright-core';
import { buildApp, type App } from '../../src/app.js';
import type { Services } from '../../src/services.js';
import { owner } from './app.js';
import { freePort, startServer } from './processes.js';
import { tempDir, testServices } from './services.js';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

/** Creates (and by default publishes) an object; answers its id. */
export type Make = (url: string, payload: object, publish?: boolean) => Promise<string>;

export interface HostPage {
  /** `widget`, `form` or `poll` and the id, for each script tag. */
  embeds: Array<[string, string]>;
  /** Extra attributes on every script tag, such as `data-remember="off"`. */
  attributes?: string;
  /** CSS of the host page. */
  css?: string;
  /** Height of the page's content in px: tall pages scroll, short ones do not. */
  height?: number;
  /** The page's content instead of the script tags and filler: `{api}` stands for the service's address. */
  body?: string;
  /** The page's `<html lang>` (`en` by default; empty: none). */
  lang?: string;
}

export interface Site {
  api: string;
  /** The service's data directory, for the admin CLI. */
  dir: string;
  apiKey: string;
  /** Serves `page` at a fresh path on the host origin; answers its address. */
  page(page: HostPage): string;
}

/** What a setup may also reach: the app over the data directory, and the owner's account. */
export interface SetupContext {
  app: App;
  services: Services;
  accountId: string;
}

export async function embedSite(t: Test, setup: (make: Make, context: SetupContext) => Promise<void>): Promise<Site> {
  const dir = tempDir(t);
  const services = await testServices(t, { dataDir: dir });
  const app = await buildApp(services);
  const biz = await owner(services);
  const make: Make = async (url, payload, publish = true) => {
    const created = await app.inject({ method: 'POST', url, headers: biz.headers, payload });
    if (created.statusCode !== 201) throw new Error(`not created: ${created.body}`);
    const id = created.json().id as string;
    if (publish) await app.inject({ method: 'PUT', url: `${url}/${id}`, headers: biz.headers, payload: { published: true } });
    return id;
  };
  await setup(make, { app, services, accountId: biz.accountId });
  await app.close();
  await services.close();

  const api = await startServer({ DATA_DIR: dir });
  t.teardown(() => api.stop());
  const pages = new Map<string, HostPage>();
  const hostPort = await freePort();
  const host = createServer((request, response) => {
    const page = pages.get(new URL(request.url!, 'http://x').pathname);
    if (!page) return void response.writeHead(404).end();
    if (page.body !== undefined) {
      return void response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
          `<title>A host page</title><style>${page.css ?? ''}</style></head><body>${page.body.replaceAll('{api}', api.url)}</body></html>`,
      );
    }
    const lang = page.lang ?? 'en';
    const html = lang ? `<html lang="${lang}">` : '<html>';
    const scripts = page.embeds.map(([kind, id]) => `<script src="${api.url}/embed.js" data-${kind}="${id}" ${page.attributes ?? ''} async></script>`).join('');
    response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
      `<!doctype html>${html}<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
        `<title>A host page</title><style>${page.css ?? ''}</style></head><body><main><h1>A host page</h1>` +
        `<p><label>Search the site <input id="search" type="text"></label></p>${scripts}<div style="height:${page.height ?? 1600}px">Some content.</div></main></body></html>`,
    );
  }).listen(hostPort, '127.0.0.1');
  t.teardown(() => host.close());
  let n = 0;
  return {
    api: api.url,
    dir,
    apiKey: biz.key,
    page(page) {
      const path = `/page-${++n}`;
      pages.set(path, page);
      return `http://127.0.0.1:${hostPort}${path}`;
    },
  };
}

/**
 * The browser of this process: launched by the first test that asks and
 * shared by the rest (a system shard runs several files in turn, and
 * launching Chromium costs about 2.6 CPU seconds). Each test gets the same
 * browser and, when it ends, the contexts and pages it opened are closed;
 * the browser itself closes when the process's last test has ended, or is
 * launched again after a crash.
 */
export async function launch(t: Test): Promise<Browser> {
  shared ??= launchShared();
  const browser = await shared;
  const before = new Set(browser.contexts());
  t.teardown(async () => {
    for (const context of browser.contexts()) if (!before.has(context)) await context.close().catch(() => undefined);
  });
  return browser;
}
let shared: Promise<Browser> | undefined;

async function launchShared(): Promise<Browser> {
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: [
      '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync',
      // A renderer process costs about a CPU second to start, and every new context, page and
      // cross-site navigation started one: sharing a few cut the renderers' CPU of the embed
      // matrix by a quarter (39 -> 29 s). The pages behave the same; only their processes are fewer.
      '--disable-site-isolation-trials', '--renderer-process-limit=4',
    ],
  });
  browser.on('disconnected', () => (shared = undefined));
  // The root test ends once every test of the process has, and only then.
  tap.teardown(() => browser.close());
  // Playwright's 30 s for a click or a wait is sized for a quiet machine; beside
  // another test file on two cores an editor's field can take longer to show.
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (...args) => {
    const context = await newContext(...args);
    context.setDefaultTimeout(BROWSER_WAIT_MS);
    return context;
  };
  const newPage = browser.newPage.bind(browser);
  browser.newPage = async (...args) => {
    const page = await newPage(...args);
    page.setDefaultTimeout(BROWSER_WAIT_MS);
    return page;
  };
  return browser;
}

/** How long a browser test's click, fill or wait may take (a page of the tests' own, on a loaded machine). */
export const BROWSER_WAIT_MS = 120_000;
