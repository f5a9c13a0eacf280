/**
 * The owner dashboard end to end, in a real browser: the service runs as its
 * own process on a data directory; the login link comes from the admin CLI,
 * run as a process against that directory while the server runs. The owner
 * creates a widget beside its live preview, publishes it, copies its
 * snippet; a visitor answers it through the real embed on a host page of
 * another site; the answer shows in the dashboard's table and charts. Keys
 * are made and revoked; a second account's objects never show. axe checks
 * every page at both widths; screenshots of every page at 1280×800 and
 * 390×844 go to test-artifacts/dashboard/.
 */
import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { buildApp } from '../../src/app.js';
import { owner, tokenFor } from '../support/app.js';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { eventually } from '../support/eventually.js';
import { freePort, startServer } from '../support/processes.js';
import { tempDir, testServices } from '../support/services.js';
import { signedInPage } from '../support/signed-in.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = `${ARTIFACTS}dashboard/`;
/** With UPDATE_DOCS_IMAGES=1 the README's pictures of the dashboard are written too. */
const README_IMAGES = process.env.UPDATE_DOCS_IMAGES === '1' ? new URL('../../docs/images/', import.meta.url).pathname : null;
const SIZES = [
  [1280, 800],
  [390, 844],
] as const;
const CHROME_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** axe's serious and critical findings on the page (its frames included when they answer). */
async function axe(tab: Page): Promise<string[]> {
  // Evaluated rather than added as a script tag, which the dashboard's policy (rightly) refuses.
  if (!(await tab.evaluate('typeof window.axe === "object"'))) await tab.evaluate(AXE);
  // preload off: axe would otherwise fetch the stylesheets again and insert styles the policy refuses.
  const violations = (await tab.evaluate(
    'axe.run(document, { preload: false, resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))',
  )) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

/** The page has drawn: its heading, no loading state, every chart drawn at its box's width. */
async function settled(tab: Page): Promise<void> {
  await tab.locator('main h1').first().waitFor();
  await tab.waitForFunction(() => {
    const doc = (globalThis as any).document;
    if (doc.querySelector('.loading, .summary-loading, [aria-busy="true"]')) return false;
    const scheme = (globalThis as any).matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
    if ([...doc.querySelectorAll('figure.chart')].some((chart: any) => chart.dataset.scheme !== scheme)) return false;
    return [...doc.querySelectorAll('.chart-canvas')].every((box: any) => {
      const plot = box.querySelector('.uplot');
      return plot && Math.abs(plot.getBoundingClientRect().width - box.clientWidth) <= 2;
    });
  });
}

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`, () => {});
} else {
  t.test('the owner dashboard in a real browser', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const dir = tempDir(t);

    // Given: three accounts on one data directory. The owner has a form and a poll with an answer each;
    // another account has objects of its own, answered too; a Free account has nothing yet.
    const services = await testServices(t, { dataDir: dir });
    const app = await buildApp(services);
    const biz = await owner(services, 'business');
    const other = await owner(services, 'business');
    const free = await owner(services, 'free');
    const create = async (headers: Record<string, string>, url: string, payload: object) => {
      const created = await app.inject({ method: 'POST', url, headers, payload });
      if (created.statusCode !== 201) throw new Error(`not created: ${created.body}`);
      const id = created.json().id as string;
      const published = await app.inject({ method: 'PUT', url: `${url}/${id}`, headers, payload: { published: true } });
      if (published.statusCode !== 200) throw new Error(`not published: ${published.body}`);
      return { id, options: created.json().options as Array<{ id: string }> | undefined };
    };
    const submit = async (kind: 'widgets' | 'forms', id: string, answers: object) => {
      const reply = await app.inject({ method: 'POST', url: `/api/${kind}/${id}/submit`, headers: { 'user-agent': CHROME_UA }, payload: { _token: await tokenFor(app, kind, id), answers } });
      if (reply.statusCode !== 200 && reply.statusCode !== 201) throw new Error(`not submitted: ${reply.body}`);
    };
    const form = await create(biz.headers, '/api/forms', {
      title: 'Join the beta',
      questions: [
        { id: 'name', type: 'short_text', title: 'Your name', required: true },
        { id: 'team', type: 'single_choice', title: 'Team size', choices: [{ id: 'solo', label: 'Just me' }, { id: 'small', label: '2–10' }, { id: 'large', label: 'More' }] },
        // Left unanswered: its id is the name of what every object inherits.
        { id: 'constructor', type: 'short_text', title: 'Referred by' },
      ],
    });
    await submit('forms', form.id, { name: 'Ada', team: 'small' });
    const poll = await create(biz.headers, '/api/polls', { question: 'Which plan do you use?', options: [{ text: 'Free' }, { text: 'Pro' }, { text: 'Business' }] });
    const voted = await app.inject({ method: 'POST', url: `/api/polls/${poll.id}/vote`, headers: { 'user-agent': CHROME_UA }, payload: { option_ids: [poll.options![1]!.id], _token: await tokenFor(app, 'polls', poll.id), metadata: { fingerprint: 'voter-1' } } });
    if (voted.statusCode !== 200) throw new Error(`not voted: ${voted.body}`);
    const foreign = {
      widget: (await create(other.headers, '/api/widgets', { widget_type: 'feedback', title: 'Another account’s widget' })).id,
      form: (await create(other.headers, '/api/forms', { title: 'Another account’s form', questions: [{ id: 'q', type: 'short_text', title: 'Q' }] })).id,
      poll: (await create(other.headers, '/api/polls', { question: 'Another account’s poll?', options: [{ text: 'Yes' }, { text: 'No' }] })).id,
    };
    await submit('widgets', foreign.widget, { rating: 1, comment: 'Someone else’s answer' });
    await app.close();
    await services.close();

    const server = await startServer({ DATA_DIR: dir });
    t.teardown(() => server.stop());

    // A site of its own on another origin (localhost rather than 127.0.0.1: another site, too).
    let hostPage = '';
    const hostPort = await freePort();
    const host = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
          `<title>The shop</title></head><body><main><h1>The shop</h1><p>Thanks for your order.</p>${hostPage}</main></body></html>`,
      );
    }).listen(hostPort, '127.0.0.1');
    t.teardown(() => host.close());
    const hostUrl = `http://localhost:${hostPort}/checkout`;

    const browser: Browser = await launch(t);
    const errors: string[] = [];
    const refused: string[] = [];
    const watch = (tab: Page) => {
      tab.on('pageerror', (error) => errors.push(`${tab.url()}: ${error.message}`));
      // A refused request is logged as "Failed to load resource": those are counted below, by what they were.
      tab.on('console', (message) => {
        if ((message.type() === 'error' || message.type() === 'warning') && !message.text().startsWith('Failed to load resource')) errors.push(`${tab.url()}: ${message.text()}`);
      });
      tab.on('response', (response) => {
        if (response.status() >= 400) refused.push(`${response.request().method()} ${new URL(response.url()).pathname} ${response.status()}`);
      });
    };
    /** Signed in by a one-time link from the admin CLI on the server's data directory; the tab may use the clipboard. */
    const signIn = async (accountId: string): Promise<{ tab: Page; context: BrowserContext }> => {
      // Reduced motion: no colour transitions, so a page switched to dark is checked with its final colours.
      const { tab, context, link } = await signedInPage(browser, { url: server.url, dataDir: dir }, accountId, { viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' }, async (tab, context) => {
        await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.url });
        watch(tab);
      });
      t.match(link, { url: new RegExp(`^${server.url}/dashboard/login\\?t=`), expires_at: String });
      await settled(tab);
      return { tab, context };
    };
    const shots = new Set<string>();
    /** Both widths: a screenshot, axe, and nothing wider than the screen; then the dark palette. */
    const capture = async (t: Test, tab: Page, name: string) => {
      for (const [width, height] of SIZES) {
        await tab.setViewportSize({ width, height });
        await settled(tab);
        await tab.screenshot({ path: `${SHOTS}${name}-${width}.png`, fullPage: true });
        shots.add(`${name}-${width}`);
        t.same(await axe(tab), [], `axe: nothing serious or critical on ${name} at ${width} px`);
        t.equal(await tab.evaluate('document.documentElement.scrollWidth'), width, `${name} fits ${width} px without scrolling sideways`);
      }
      await tab.setViewportSize({ width: 1280, height: 800 });
      // And in the dark palette, which the system's setting chooses.
      await tab.emulateMedia({ colorScheme: 'dark' });
      await settled(tab);
      await tab.screenshot({ path: `${SHOTS}${name}-1280-dark.png`, fullPage: true });
      shots.add(`${name}-1280-dark`);
      t.same(await axe(tab), [], `axe: nothing serious or critical on ${name} in the dark palette`);
      await tab.emulateMedia({ colorScheme: 'light' });
      await settled(tab);
    };
    const nav = (tab: Page, name: string) => tab.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name, exact: true }).click();
    const heading = (tab: Page, name: string) => tab.getByRole('heading', { level: 1, name, exact: true }).waitFor();

    const { tab } = await signIn(biz.accountId);
    let widgetId = '';
    let snippet = '';

    t.test('the overview: totals, responses per day, the latest, of this account only', async (t) => {
      await heading(tab, 'Overview');
      t.equal(await tab.locator('.stat', { hasText: 'Forms' }).locator('.stat-value').textContent(), '1');
      t.equal(await tab.locator('.stat', { hasText: 'Widgets' }).locator('.stat-value').textContent(), '0');
      t.equal(await tab.locator('.stat', { hasText: 'Responses' }).locator('.stat-value').textContent(), '2', 'the form’s response and the vote; not the other account’s');
      t.equal(await tab.locator('figure.chart').getAttribute('data-total'), '2', 'the chart has the same two');
      const latest = await tab.locator('.feed').textContent();
      t.match(latest, /Join the beta/);
      t.notMatch(latest, /Another account/);
      await capture(t, tab, 'overview');
      // The keyboard's first stop is the way past the navigation, which leads to the page's content.
      await tab.keyboard.press('Tab');
      t.equal(await tab.evaluate('document.activeElement.textContent'), 'Skip to content');
      await tab.keyboard.press('Enter');
      t.equal(await tab.evaluate('document.activeElement.id'), 'main');
    });

    t.test('on a phone the navigation opens from the Menu button, by keyboard', async (t) => {
      await tab.setViewportSize({ width: 390, height: 844 });
      const menu = tab.getByRole('button', { name: 'Menu' });
      const polls = tab.getByRole('navigation', { name: 'Dashboard' }).getByRole('link', { name: 'Polls', exact: true });
      t.notOk(await polls.isVisible(), 'the navigation is folded away');
      await menu.focus();
      await tab.keyboard.press('Enter');
      t.equal(await menu.getAttribute('aria-expanded'), 'true');
      await polls.waitFor();
      await tab.screenshot({ path: `${SHOTS}menu-open-390.png` });
      await tab.keyboard.press('Enter');
      t.equal(await menu.getAttribute('aria-expanded'), 'false');
      await tab.setViewportSize({ width: 1280, height: 800 });
    });

    t.test('create a widget beside its live preview', async (t) => {
      await nav(tab, 'Widgets');
      await heading(tab, 'Widgets');
      // The heading and the list are drawn at once: what is not there now is not coming.
      t.equal(await tab.getByText('Another account’s widget').count(), 0, 'another account’s widget is not listed');
      await tab.getByText('No widgets yet').waitFor();
      await capture(t, tab, 'widgets-empty');
      await tab.getByRole('link', { name: 'New widget' }).first().click();
      await heading(tab, 'New widget');
      const preview = tab.frameLocator('iframe.editor-frame');
      await preview.getByRole('dialog').waitFor();
      await tab.getByLabel('Title', { exact: true }).fill('How was checkout?');
      await preview.getByRole('heading', { name: 'How was checkout?' }).waitFor();
      t.pass('the preview shows the title as it is typed');
      await capture(t, tab, 'widget-new');
      await tab.getByRole('button', { name: 'Create widget' }).click();
      const view = tab.getByRole('link', { name: 'View widget and responses' });
      await view.waitFor();
      widgetId = new URL(tab.url()).pathname.split('/')[3]!;
      t.match(widgetId, /^wgt_/);
      t.equal(new URL(tab.url()).pathname, `/dashboard/widgets/${widgetId}/edit`, 'the new widget stays in the editor, at its own address');
      await capture(t, tab, 'widget-edit');
      await view.click();
      await heading(tab, 'How was checkout?');
      t.equal(await tab.locator('.page-meta .pill').textContent(), 'Draft');
    });

    t.test('publish it and copy its snippet', async (t) => {
      await tab.getByRole('button', { name: 'Publish', exact: true }).click();
      await tab.getByRole('button', { name: 'Unpublish', exact: true }).waitFor();
      t.equal(await tab.locator('.page-meta .pill').textContent(), 'Published');
      const stored = await tab.evaluate(`fetch('/dashboard/api/widgets/${widgetId}').then((r) => r.json())`);
      t.equal((stored as { published: boolean }).published, true, 'published on the server');
      await tab.getByRole('button', { name: 'Copy snippet' }).click();
      await tab.getByRole('button', { name: 'Copied' }).waitFor();
      snippet = (await tab.evaluate('navigator.clipboard.readText()')) as string;
      t.equal(snippet, `<script src="${server.url}/embed.js" data-widget="${widgetId}" async></script>`);
      t.equal(await tab.locator('pre.snippet').textContent(), snippet, 'the snippet is on the page too');
      await capture(t, tab, 'widget-no-responses');
    });

    t.test('a visitor answers through the real embed on another site; the answer shows in the table and the charts', async (t) => {
      hostPage = snippet;
      const visitor = await browser.newContext({ viewport: { width: 1024, height: 700 } });
      visitor.setDefaultTimeout(120_000);
      const site = await visitor.newPage();
      watch(site);
      await site.goto(hostUrl);
      t.not(new URL(site.url()).origin, server.url, 'the host page is another origin');
      await site.locator('.launcher').click();
      await site.getByRole('radio', { name: '4 of 5 stars' }).check();
      await site.locator('textarea').fill('Paying took two clicks');
      await site.getByRole('button', { name: 'Send' }).click();
      await site.getByRole('heading', { name: 'Thank you!' }).waitFor();
      await visitor.close();

      // The summaries follow the responses a moment later: read the page again until they have it.
      const total = tab.locator('.summary-area figure.chart');
      t.ok(
        await eventually(async () => {
          await tab.reload();
          await settled(tab);
          return (await total.getAttribute('data-total')) === '1';
        }, { everyMs: 100 }),
        'the chart counts the answer',
      );
      const row = tab.getByRole('row', { name: /Paying took two clicks/ });
      await row.waitFor();
      await row.getByRole('cell', { name: '4', exact: true }).waitFor();
      t.pass('the rating in its column');
      t.match(await row.textContent(), /Desktop/, 'and the device');
      const submittedAt = (await row.locator('time').getAttribute('datetime'))!;
      const perDay = await tab.locator('.summary-area [data-chart-data="per-day"] tbody tr').evaluateAll((rows) => rows.map((r: any) => [r.dataset.day, r.querySelector('td').textContent]));
      t.same(perDay, [[submittedAt.slice(0, 10), '1']], 'the chart’s figures: one response, on the day it was sent');
      t.match(await tab.locator('.insights').textContent(), /4\.00/, 'the rating’s average');
      await capture(t, tab, 'widget');
      if (README_IMAGES) {
        copyFileSync(`${SHOTS}widget-1280.png`, `${README_IMAGES}dashboard-widget.png`);
        copyFileSync(`${SHOTS}widget-390.png`, `${README_IMAGES}dashboard-widget-phone.png`);
      }

      // The day filter, and the downloads with it.
      const day = submittedAt.slice(0, 10);
      const next = new Date(Date.parse(`${day}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10);
      await tab.getByLabel('From (UTC)').fill(next);
      await tab.getByRole('button', { name: 'Apply' }).click();
      await tab.getByText('No responses in these days').waitFor();
      t.match(new URL(tab.url()).search, `since=${next}`, 'the filter is in the address');
      await tab.getByLabel('From (UTC)').fill(day);
      await tab.getByLabel('To (UTC)').fill(day);
      await tab.getByRole('button', { name: 'Apply' }).click();
      await row.waitFor();
      const csvHref = (await tab.getByRole('link', { name: 'Download CSV' }).getAttribute('href'))!;
      t.match(csvHref, `since=${day}T00%3A00%3A00.000Z`);
      const csv = (await tab.evaluate(`fetch(${JSON.stringify(csvHref)}).then(async (r) => [r.status, r.headers.get('content-disposition'), await r.text()])`)) as [number, string, string];
      t.equal(csv[0], 200);
      t.match(csv[1], /^attachment/);
      t.match(csv[2], /Paying took two clicks/, 'the download holds the answer');
    });

    t.test('the overview has it too', async (t) => {
      await nav(tab, 'Overview');
      await heading(tab, 'Overview');
      await settled(tab);
      t.equal(await tab.locator('figure.chart').getAttribute('data-total'), '3');
      t.match(await tab.locator('.feed li').first().textContent(), /How was checkout\?/, 'the newest response first');
      t.equal(await tab.locator('.stat', { hasText: 'Widgets' }).locator('.stat-value').textContent(), '1');
    });

    t.test('forms and polls: lists, an object’s summary, a poll’s results', async (t) => {
      await nav(tab, 'Forms');
      await heading(tab, 'Forms');
      t.equal(await tab.getByRole('link', { name: 'Another account’s form' }).count(), 0);
      await capture(t, tab, 'forms');
      await tab.getByRole('link', { name: 'Join the beta' }).click();
      await heading(tab, 'Join the beta');
      await tab.getByRole('row', { name: /Ada/ }).waitFor();
      t.notMatch(await tab.getByRole('row', { name: /Ada/ }).textContent(), /function|native code/, 'an unanswered question whose id objects inherit is an empty cell');
      t.match(await tab.locator('.insights').textContent(), /Team size/, 'the choice question’s counts');
      const hosted = tab.getByRole('link', { name: `${server.url}/f/${form.id}` });
      await hosted.waitFor();
      t.equal(await hosted.getAttribute('href'), `${server.url}/f/${form.id}`, 'the hosted page’s link');
      t.match(await tab.getByRole('img', { name: `QR code of ${server.url}/f/${form.id}` }).getAttribute('src'), /^data:image\/svg\+xml/, 'its QR code, an SVG');
      await tab.getByRole('button', { name: 'Copy link' }).click();
      t.equal(await tab.evaluate('navigator.clipboard.readText()'), `${server.url}/f/${form.id}`, 'the link copied');
      await tab.getByRole('button', { name: 'Copy snippet' }).click();
      t.match(
        await tab.evaluate('navigator.clipboard.readText()'),
        new RegExp(`^<div data-form="${form.id}" style="min-height:[^"]+px\\)?"></div>\n<script src="${server.url}/embed.js" async></script>$`),
        'the snippet: a container holding the form’s space, and the script',
      );
      await capture(t, tab, 'form');
      await nav(tab, 'Polls');
      await heading(tab, 'Polls');
      t.equal(await tab.getByRole('link', { name: 'Another account’s poll?' }).count(), 0);
      await capture(t, tab, 'polls');
      await tab.getByRole('link', { name: 'Which plan do you use?' }).click();
      await heading(tab, 'Which plan do you use?');
      t.match(await tab.locator('.results').textContent(), /Pro1 · 100%/, 'the vote in the results');
      t.same(await tab.locator('section[aria-labelledby="results-title"] figure tbody tr').evaluateAll((rows) => rows.map((r: any) => r.textContent)), ['Free00%', 'Pro1100%', 'Business00%'], 'and in its chart\'s figures');
      await capture(t, tab, 'poll');
    });

    t.test('another account’s objects are not found, by address or by its endpoints', async (t) => {
      for (const [kind, id] of [['widgets', foreign.widget], ['forms', foreign.form], ['polls', foreign.poll]] as const) {
        await tab.goto(`${server.url}/dashboard/${kind}/${id}`);
        await heading(tab, 'Not found');
        t.equal(await tab.getByText('Another account’s').count(), 0, `${kind}: nothing of it shows`);
        const status = await tab.evaluate(`fetch('/dashboard/api/${kind}/${id}').then((r) => r.status)`);
        t.equal(status, 404, `${kind}: its endpoint answers 404`);
      }
      await capture(t, tab, 'not-found');
      const responses = await tab.evaluate(`fetch('/dashboard/api/widgets/${foreign.widget}/responses').then((r) => r.status)`);
      t.equal(responses, 404, 'nor its responses');
    });

    t.test('Developers: create a key with scopes, shown once; it works; revoke it', async (t) => {
      await tab.goto(`${server.url}/dashboard`);
      await settled(tab);
      await nav(tab, 'Developers');
      await heading(tab, 'Developers');
      await capture(t, tab, 'developers');
      await tab.getByLabel('Name', { exact: true }).fill('Export script');
      await tab.getByRole('checkbox', { name: /forms:write/ }).check();
      await tab.getByRole('button', { name: 'Create key' }).click();
      const shown = tab.getByLabel('New API key');
      await shown.waitFor();
      const key = await shown.inputValue();
      t.match(key, /^svc_[A-Za-z0-9]{43}$/, 'the whole key, once');
      await tab.getByRole('button', { name: 'Copy key' }).click();
      await tab.getByRole('button', { name: 'Copied' }).waitFor();
      t.equal(await tab.evaluate('navigator.clipboard.readText()'), key, 'copied whole');
      const row = tab.getByRole('row', { name: /Export script/ });
      t.match(await row.textContent(), /forms:read.*forms:write.*responses:read/);
      t.match(await row.textContent(), new RegExp(`${key.slice(0, 12)}…`), 'listed by its prefix');
      t.notMatch(await row.textContent(), new RegExp(key.slice(12)), 'never whole');
      await capture(t, tab, 'developers-new-key');

      const list = await fetch(`${server.url}/api/widgets`, { headers: { authorization: `Bearer ${key}` } });
      t.equal(list.status, 200, 'the key works on the API');
      t.same(((await list.json()) as { widgets: Array<{ id: string }> }).widgets.map((w) => w.id), [widgetId], 'for this account’s objects only');

      await row.getByRole('button', { name: /Revoke/ }).click();
      const dialog = tab.getByRole('dialog', { name: /Revoke/ });
      await dialog.waitFor();
      t.equal(await tab.evaluate('document.activeElement.textContent'), 'Cancel', 'the safe choice has focus');
      await tab.screenshot({ path: `${SHOTS}developers-revoke-1280.png` });
      t.same(await axe(tab), [], 'axe: the confirmation');
      await dialog.getByRole('button', { name: 'Revoke key' }).click();
      await row.getByText(/^Revoked/).waitFor();
      t.ok(
        await eventually(async () => (await fetch(`${server.url}/api/widgets`, { headers: { authorization: `Bearer ${key}` } })).status === 401),
        'the server refuses the revoked key',
      );
    });

    t.test('a Free account is told plainly what its plan lacks', async (t) => {
      const { tab: freeTab, context } = await signIn(free.accountId);
      await nav(freeTab, 'Widgets');
      await heading(freeTab, 'Widgets');
      await freeTab.getByText('Widgets need the Pro plan.').waitFor();
      t.ok(await freeTab.getByRole('button', { name: 'New widget' }).isDisabled(), 'no widget to create');
      await capture(t, freeTab, 'widgets-free-plan');
      await nav(freeTab, 'Developers');
      await freeTab.getByText('API access needs the Business plan.').waitFor();
      t.pass('API access: Business');
      await context.close();
    });

    t.test('delete a poll, after a confirmation that Escape cancels', async (t) => {
      await nav(tab, 'Polls');
      await tab.getByRole('link', { name: 'Which plan do you use?' }).click();
      await heading(tab, 'Which plan do you use?');
      await settled(tab);
      const remove = tab.getByRole('button', { name: 'Delete', exact: true });
      await remove.click();
      const dialog = tab.getByRole('dialog', { name: 'Delete “Which plan do you use?”?' });
      await dialog.waitFor();
      await tab.keyboard.press('Escape');
      await dialog.waitFor({ state: 'detached' });
      t.equal(await tab.evaluate('document.activeElement.textContent'), 'Delete', 'focus back on the button');
      t.equal(await tab.evaluate(`fetch('/dashboard/api/polls/${poll.id}').then((r) => r.status)`), 200, 'cancelled: still there');
      await remove.click();
      await dialog.waitFor();
      await tab.screenshot({ path: `${SHOTS}poll-delete-1280.png` });
      t.same(await axe(tab), [], 'axe: the confirmation');
      await dialog.getByRole('button', { name: 'Delete poll' }).click();
      await heading(tab, 'Polls');
      await tab.getByText('No polls yet').waitFor();
      t.equal(await tab.evaluate(`fetch('/dashboard/api/polls/${poll.id}').then((r) => r.status)`), 404, 'deleted');
    });

    t.test('delete a response by keyboard at 390 px: confirmed, gone from the table and the summary, the focus kept', async (t) => {
      await tab.setViewportSize({ width: 390, height: 844 });
      await tab.goto(`${server.url}/dashboard/widgets/${widgetId}`);
      await settled(tab);
      const row = tab.getByRole('row', { name: /Paying took two clicks/ });
      await row.waitFor();
      const remove = row.getByRole('button', { name: /^Delete the response of / });
      await remove.focus();
      await tab.keyboard.press('Enter');
      const dialog = tab.getByRole('dialog', { name: 'Delete this response?' });
      await dialog.waitFor();
      await tab.screenshot({ path: `${SHOTS}response-delete-390.png` });
      t.same(await axe(tab), [], 'axe: the confirmation at 390 px');
      t.equal(await tab.evaluate('document.activeElement.textContent'), 'Cancel', 'the safe choice has the focus');
      await tab.keyboard.press('Tab');
      await tab.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await tab.getByText('No responses yet').waitFor();
      t.pass('the table no longer holds it');
      await tab.waitForFunction(() => (globalThis as any).document.querySelector('.summary-area .stat-value')?.textContent === '0');
      t.pass('the summary counts none');
      t.equal(await tab.evaluate('document.activeElement.id'), 'responses-title', 'the focus stays in the list, on its heading');
      await tab.waitForFunction(() => (globalThis as any).document.getElementById('announcer').textContent === 'Response deleted');
      t.pass('the deletion is announced');
      await tab.screenshot({ path: `${SHOTS}response-deleted-390.png`, fullPage: true });
      const left = (await tab.evaluate(`fetch('/dashboard/api/widgets/${widgetId}/responses').then((r) => r.json())`)) as { responses: unknown[] };
      t.same(left.responses, [], 'none on the server either');
      await tab.setViewportSize({ width: 1280, height: 800 });
    });

    t.test('sign out: the session ends and the pages send to the signed-out page', async (t) => {
      await tab.getByRole('button', { name: 'Sign out' }).click();
      await tab.waitForURL(`${server.url}/dashboard/signed-out`);
      await tab.getByRole('heading', { name: 'You are signed out' }).waitFor();
      t.match(await tab.getByRole('link', { name: 'Sign in again' }).getAttribute('href'), '/dashboard', 'it says how to get a new link');
      for (const [width, height] of SIZES) {
        await tab.setViewportSize({ width, height });
        await tab.screenshot({ path: `${SHOTS}signed-out-${width}.png`, fullPage: true });
        shots.add(`signed-out-${width}`);
        t.same(await axe(tab), [], `axe: the signed-out page at ${width} px`);
      }
      await tab.goto(`${server.url}/dashboard/widgets`);
      t.equal(new URL(tab.url()).pathname, '/dashboard/signed-out', 'a page after sign-out');
    });

    t.test('no errors in any console; the only refusals were the other account’s objects and the deleted poll', async (t) => {
      t.same(errors, []);
      const foreignIds = [...Object.values(foreign), poll.id];
      t.same(
        refused.filter((line) => !foreignIds.some((id) => line.includes(id))),
        [],
        'nothing else was refused',
      );
      t.ok(shots.size >= 40, `${shots.size} screenshots`);
    });
  });
}
