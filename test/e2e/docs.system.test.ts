/**
 * The interactive reference as a newcomer opens it: a phone-sized Chromium
 * (Debian's package, driven by playwright-core) follows GET / to /docs.
 * A screenshot goes to test-artifacts/, or to docs/images/ (the README's
 * picture) with UPDATE_DOCS_IMAGES=1.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';
import t from 'tap';
import { startServer } from '../support/processes.js';
import { tempDir } from '../support/services.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = new URL('../../', import.meta.url).pathname;
const PICTURES = process.env.UPDATE_DOCS_IMAGES === '1' ? `${ROOT}docs/images/` : `${ROOT}test-artifacts/`;
/**
 * A phone's two device pixels a CSS pixel for the README's picture; one
 * otherwise: the layout is the same in CSS pixels, and drawing the whole
 * reference at four times the pixels took most of the test's time.
 */
const DEVICE_SCALE = process.env.UPDATE_DOCS_IMAGES === '1' ? 2 : 1;

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`, () => {});
} else {
  t.test('/docs on a 390 px phone: its title, integer parameters, no console error, nothing wider than the screen', async (t) => {
    mkdirSync(PICTURES, { recursive: true });
    const server = await startServer({ DATA_DIR: tempDir(t) });
    t.teardown(() => server.stop());
    const browser: Browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    t.teardown(() => browser.close());
    const tab = await browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: DEVICE_SCALE, isMobile: true, hasTouch: true });
    // swagger-ui draws the whole document in the page: on a loaded machine that outlasts playwright's 30 s default.
    tab.setDefaultTimeout(120_000);
    // A refused Content-Security-Policy shows here as a console error too.
    const errors: string[] = [];
    tab.on('console', (message) => void (message.type() === 'error' && errors.push(message.text())));
    tab.on('pageerror', (error) => errors.push(error.message));

    await tab.goto(`${server.url}/`);
    t.equal(new URL(tab.url()).pathname, '/docs', 'GET / in a browser lands on /docs');
    await tab.locator('.opblock').first().waitFor();
    t.equal(await tab.title(), 'Feedback collection service: API');
    t.equal(await tab.locator('.topbar').count(), 0, 'no top bar, so no fastify or swagger logo');
    t.match(await tab.locator('.info .title').innerText(), /^Feedback collection service/);
    await tab.screenshot({ path: `${PICTURES}docs.png` });

    const list = tab.locator('.opblock-get', { has: tab.locator('.opblock-summary-path[data-path="/api/widgets"]') });
    await list.locator('.opblock-summary-control').dispatchEvent('click');
    const parameters = list.locator('tr[data-param-in="query"]');
    await parameters.first().waitFor();
    const shown = await parameters.evaluateAll((rows) => rows.map((row) => [row.getAttribute('data-param-name'), row.querySelector('.parameter__type')?.textContent?.trim()]));
    t.same(shown, [['page', 'integer'], ['limit', 'integer']], 'page and limit read as integers');

    // The widest operations: the longest path with its query, the largest bodies and examples
    // (opening all of them takes swagger-ui minutes on a busy machine).
    for (const [method, path] of [['post', '/api/widgets'], ['get', '/api/forms/{id}/responses'], ['delete', '/api/responses']] as const) {
      const operation = tab.locator(`.opblock-${method}`, { has: tab.locator(`.opblock-summary-path[data-path="${path}"]`) });
      // A click event rather than a pointer's: where swagger-ui is still laying out, a pointer's may land on a neighbour.
      await operation.locator('.opblock-summary-control').dispatchEvent('click');
      await operation.locator('.opblock-body .responses-table').first().waitFor();
    }
    const widths = (await tab.evaluate('({ page: document.documentElement.scrollWidth, screen: window.innerWidth })')) as { page: number; screen: number };
    t.equal(widths.screen, 390, 'laid out at the width of the phone, not at 980 px and shrunk');
    t.ok(widths.page <= widths.screen, `with the widest operations open, the page is no wider than the screen (${widths.page} px on ${widths.screen})`);

    const link = tab.getByRole('link', { name: 'API reference' });
    const [reference] = await Promise.all([tab.context().waitForEvent('page'), link.click()]);
    await reference.waitForLoadState();
    t.equal(new URL(reference.url()).pathname, '/docs/api.md', 'the description links the written reference (in a new tab)');
    t.match(await reference.locator('body').innerText(), /^# API reference/, 'which opens as text');
    t.same(errors, [], 'no console errors');
  });
}
