/**
 * Displays, starts and responses end to end: the service runs as its own
 * process; a host site on another origin embeds a form; visitors in real
 * Chromium see it, some answer a question, some send it. The counts are in
 * memory until the server shuts down (which writes them out); started again,
 * the dashboard's analytics show the exact funnel and where visits ended
 * (drop-off per page, from the pages the form keeps). A reload in the same
 * visit counts once; a crawler counts nothing. axe checks the page;
 * screenshots go to test-artifacts/analytics/.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { owner } from '../support/app.js';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { freePort, startServer } from '../support/processes.js';
import { tempDir, testServices } from '../support/services.js';
import { signedInPage } from '../support/signed-in.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = `${ARTIFACTS}analytics/`;
const CRAWLER = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
/** Headless Chromium names itself in its user agent, as crawlers built on it do: visitors here show an ordinary one. */
const VISITOR = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

async function axe(tab: Page): Promise<string[]> {
  if (!(await tab.evaluate('typeof window.axe === "object"'))) await tab.evaluate(AXE);
  const violations = (await tab.evaluate(
    'axe.run(document, { preload: false, resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))',
  )) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

/** Charts drawn at their box's width, nothing loading. */
async function settled(tab: Page): Promise<void> {
  await tab.locator('main h1').first().waitFor();
  await tab.waitForFunction(() => {
    const doc = (globalThis as any).document;
    if (doc.querySelector('.loading, [aria-busy="true"]')) return false;
    return [...doc.querySelectorAll('.chart-canvas')].every((box: any) => box.querySelector('.uplot'));
  });
}

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('visits through the real embed show as exact counts and rates in the dashboard', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const dir = tempDir(t);
    const services = await testServices(t, { dataDir: dir });
    const app = await buildApp(services);
    const biz = await owner(services);
    const created = await app.inject({
      method: 'POST',
      url: '/api/forms',
      headers: biz.headers,
      payload: {
        title: 'Checkout survey',
        questions: [{ id: 'nps', type: 'nps', title: 'How likely are you to recommend us?' }, { id: 'more', type: 'short_text', title: 'Anything else?' }],
        pages: [
          { id: 'score', title: 'Your score', question_ids: ['nps'] },
          { id: 'comment', title: 'Your comment', question_ids: ['more'] },
        ],
        // Each page is kept as the visitor leaves it: the drop-off per page.
        settings: { keep_partial: true },
      },
    });
    const form = created.json().id as string;
    await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: biz.headers, payload: { published: true } });
    await app.close();
    await services.close();

    let server = await startServer({ DATA_DIR: dir });
    t.teardown(() => server.stop());
    const hostPort = await freePort();
    const host = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>The shop</title></head><body><main><h1>The shop</h1>' +
          `<script src="${server.url}/embed.js" data-form="${form}" data-remember="off" async></script></main></body></html>`,
      );
    }).listen(hostPort, '127.0.0.1');
    t.teardown(() => host.close());
    const hostUrl = `http://localhost:${hostPort}/checkout?utm_source=newsletter`;

    const browser = await launch(t);
    const signals: string[] = [];
    /** One visit in a browser of its own (its own sessionStorage): `steps` after the form is drawn. */
    const visit = async (steps: Array<'start' | 'next' | 'submit' | 'reload'>, userAgent?: string) => {
      const context = await browser.newContext({ viewport: { width: 1000, height: 900 }, userAgent: userAgent ?? VISITOR });
      context.setDefaultTimeout(120_000);
      const tab = await context.newPage();
      tab.on('request', (request) => {
        if (request.url().endsWith('/events')) signals.push(`${userAgent ? 'crawler ' : ''}${request.postDataJSON().type}`);
      });
      const displayed = tab.waitForResponse((r) => r.url().endsWith('/events') && r.request().postDataJSON().type === 'display');
      await tab.goto(hostUrl);
      await tab.getByRole('radio', { name: '9 out of 10' }).waitFor();
      t.equal((await displayed).status(), 204, 'the display is reported once the form was half in view for a second');
      for (const step of steps) {
        if (step === 'reload') {
          await tab.reload();
          await tab.getByRole('radio', { name: '9 out of 10' }).waitFor();
        } else if (step === 'start') {
          const started = tab.waitForResponse((r) => r.url().endsWith('/events') && r.request().postDataJSON().type === 'start');
          await tab.getByRole('radio', { name: '9 out of 10' }).check();
          t.equal((await started).status(), 204);
        } else if (step === 'next') {
          const kept = tab.waitForResponse((r) => r.url().endsWith('/progress'));
          await tab.getByRole('button', { name: 'Next' }).click();
          t.equal((await kept).status(), 200, 'the first page is kept as the visitor leaves it');
          await tab.getByRole('textbox', { name: 'Anything else?' }).waitFor();
        } else {
          await tab.getByRole('textbox', { name: 'Anything else?' }).fill('Quick checkout.');
          await tab.getByRole('button', { name: 'Send' }).click();
          await tab.getByRole('heading', { name: 'Thank you!' }).waitFor();
        }
      }
      await context.close();
    };
    // Seven visits seen, four started, one left after the first page, two sent; two reloaded; one crawler.
    await visit([]);
    await visit([]);
    await visit(['start']);
    await visit(['start', 'next', 'reload']);
    await visit(['start', 'next', 'submit']);
    await visit(['start', 'next', 'submit']);
    await visit(['reload']);
    await visit(['start'], CRAWLER);
    t.strictSame(
      signals.sort(),
      ['crawler display', 'crawler start', ...Array(7).fill('display'), ...Array(4).fill('start')].sort(),
      'each visit reports a display and a start once, reloads included (the crawler too: the server does not count it)',
    );

    // The counts are in the server's memory: a shutdown writes them out.
    t.match(await server.stop(), { code: 0 });
    server = await startServer({ DATA_DIR: dir });
    const { tab, errors } = await signedInPage(browser, { url: server.url, dataDir: dir }, biz.accountId, { reducedMotion: 'reduce' });

    await tab.goto(`${server.url}/dashboard/forms/${form}`);
    await tab.locator('main').getByRole('link', { name: 'Analytics', exact: true }).click();
    await tab.getByRole('heading', { level: 1, name: 'Analytics: Checkout survey' }).waitFor();
    await settled(tab);
    const stat = (slug: string) => tab.locator(`[data-stat="${slug}"] .stat-value`).textContent();
    t.equal(await stat('displays'), '7', 'seven visits seen; the reloads and the crawler not counted again');
    t.equal(await stat('starts'), '4');
    t.equal(await stat('responses'), '2');
    t.equal(await stat('start-rate'), '57.1%', '4 of 7');
    t.equal(await stat('completion-rate'), '28.6%', '2 of 7');
    const funnel = await tab.locator('[data-chart-data="funnel"] tbody tr').allTextContents();
    t.strictSame(funnel, ['Displayed7100.0%', 'Started457.1%', 'Completed228.6%'], 'the funnel’s hidden table');
    const dropOff = await tab.locator('[data-chart-data="drop-off"] tbody tr').allTextContents();
    t.strictSame(dropOff, ['Your score133.3%', 'Your comment00.0%', 'Sent266.7%'], 'the drop-off’s hidden table: one of three left after the first page, two sent');
    const bySource = await tab.locator('[data-split="utm_source"] tbody tr').allTextContents();
    t.strictSame(bySource, ['newsletter74228.6%'], 'every visit came from the newsletter');
    t.same(await axe(tab), [], 'axe: nothing serious or critical on the analytics page');
    await tab.screenshot({ path: `${SHOTS}object-1280.png`, fullPage: true });
    await tab.setViewportSize({ width: 390, height: 844 });
    await settled(tab);
    t.same(await axe(tab), [], 'axe: nothing serious or critical at 390 px');
    await tab.screenshot({ path: `${SHOTS}object-390.png`, fullPage: true });
    await tab.setViewportSize({ width: 1280, height: 900 });

    await tab.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Analytics', exact: true }).click();
    await tab.getByRole('heading', { level: 1, name: 'Analytics' }).waitFor();
    await settled(tab);
    t.equal(await stat('completion-rate'), '28.6%', 'the account’s totals');
    t.match(await tab.locator('section[aria-labelledby="best-title"]').textContent(), /Checkout survey/);
    t.same(await axe(tab), [], 'axe: nothing serious or critical on the overview');
    await tab.screenshot({ path: `${SHOTS}overview-1280.png`, fullPage: true });
    t.strictSame(errors, [], 'no script errors');
  });
}
