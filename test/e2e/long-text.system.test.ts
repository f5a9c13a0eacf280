/**
 * Text longer than its room, in a real browser: a widget title that is one
 * long word, a poll option of 200 letters, a question title of one long
 * word. Nothing may leave its panel or the screen (the close button
 * included), and the dashboard may not scroll sideways. The poll is also
 * voted in from a page that patched Array.prototype.toJSON, as old
 * Prototype.js pages do. Screenshots go to test-artifacts/long-text/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Browser, Page } from 'playwright-core';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { owner, tokenFor } from '../support/app.js';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { freePort, startServer } from '../support/processes.js';
import { tempDir, testServices } from '../support/services.js';
import { followLoginLink } from '../support/signed-in.js';

const SHOTS = `${ARTIFACTS}long-text/`;
const URL_TITLE = 'How was https://shop.example.com/collections/summer-sale-2026/linen-shirt-blue?';
const LONG_OPTION = 'W'.repeat(200);
const LONG_QUESTION = `Which${'-and-which'.repeat(12)}?`;
const LONG_ANSWER = `${'All of it, and then some more of it. '.repeat(270)}The end.`;
/** Prototype.js 1.6's Array#toJSON: JSON.stringify then writes arrays as strings of JSON. */
const PROTOTYPE_JS = "Array.prototype.toJSON = function () { return '[' + Array.prototype.map.call(this, function (v) { return JSON.stringify(v); }).join(',') + ']'; };";

interface Box {
  x: number;
  y: number;
  width: number;
  height: number;
}
const inside = (inner: Box, outer: Box) => inner.x >= outer.x - 0.5 && inner.y >= outer.y - 0.5 && inner.x + inner.width <= outer.x + outer.width + 0.5 && inner.y + inner.height <= outer.y + outer.height + 0.5;

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`, () => {});
} else {
  t.test('long text stays inside the embeds and the dashboard', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const dir = tempDir(t);
    const services = await testServices(t, { dataDir: dir });
    const app = await buildApp(services);
    const biz = await owner(services);
    const create = async (url: string, payload: object) => {
      const created = await app.inject({ method: 'POST', url, headers: biz.headers, payload });
      if (created.statusCode !== 201) throw new Error(`not created: ${created.body}`);
      const id = created.json().id as string;
      await app.inject({ method: 'PUT', url: `${url}/${id}`, headers: biz.headers, payload: { published: true } });
      return created.json() as { id: string; options?: Array<{ id: string }> };
    };
    const widget = await create('/api/widgets', { widget_type: 'feedback', title: URL_TITLE, trigger_config: { text: 'Feedback' } });
    const poll = await create('/api/polls', { question: 'Which one?', options: [{ text: 'Short' }, { text: LONG_OPTION }] });
    const form = await create('/api/forms', {
      title: 'Long questions',
      questions: [
        { id: 'q', type: 'single_choice', title: LONG_QUESTION, choices: [{ id: 'a', label: `Choice${'-long'.repeat(15)}` }, { id: 'b', label: 'B' }] },
        { id: 'story', type: 'long_text', title: 'Tell us everything' },
      ],
    });
    const answered = await app.inject({ method: 'POST', url: `/api/forms/${form.id}/submit`, payload: { _token: await tokenFor(app, 'forms', form.id), answers: { q: 'a', story: LONG_ANSWER } } });
    t.equal(answered.statusCode, 200, answered.body);
    const voted = await app.inject({ method: 'POST', url: `/api/polls/${poll.id}/vote`, payload: { option_ids: [poll.options![1]!.id], _token: await tokenFor(app, 'polls', poll.id) } });
    t.equal(voted.statusCode, 200, voted.body);
    await app.close();
    await services.close();

    const server = await startServer({ DATA_DIR: dir });
    t.teardown(() => server.stop());
    let embeds = '';
    const hostPort = await freePort();
    const host = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(
        '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
          `<title>A host page</title></head><body><main><h1>A host page</h1>${embeds}</main></body></html>`,
      );
    }).listen(hostPort, '127.0.0.1');
    t.teardown(() => host.close());
    const browser: Browser = await launch(t);
    const errors: string[] = [];
    const open = async (width: number, script?: string): Promise<Page> => {
      const context = await browser.newContext({ viewport: { width, height: 844 } });
      t.teardown(() => context.close());
      if (script) await context.addInitScript(script);
      const tab = await context.newPage();
      tab.on('pageerror', (error) => errors.push(error.message));
      return tab;
    };

    for (const width of [390, 1280]) {
      t.test(`a widget titled with one long word at ${width} px: its title wraps, its close button stays in the panel and on the screen`, async (t) => {
        embeds = `<script src="${server.url}/embed.js" data-widget="${widget.id}" async></script>`;
        const tab = await open(width);
        await tab.goto(`http://127.0.0.1:${hostPort}/`);
        await tab.locator('.launcher').click();
        const close = tab.getByRole('button', { name: 'Close' });
        await close.waitFor();
        await tab.screenshot({ path: `${SHOTS}widget-${width}.png` });
        const panel = (await tab.locator('.panel').boundingBox())!;
        const button = (await close.boundingBox())!;
        const title = (await tab.locator('.head h2').boundingBox())!;
        t.ok(inside(button, panel), `the close button ${JSON.stringify(button)} is inside the panel ${JSON.stringify(panel)}`);
        t.ok(inside(button, { x: 0, y: 0, width, height: 844 }), 'and on the screen');
        t.ok(inside(title, panel), 'the title is inside the panel');
        t.ok(title.height > 30, 'on more than one line');
      });
    }

    t.test('a poll with a 200-letter option, voted in from a page that patched Array.prototype.toJSON', async (t) => {
      embeds = `<script src="${server.url}/embed.js" data-poll="${poll.id}" async></script>`;
      const tab = await open(390, PROTOTYPE_JS);
      await tab.goto(`http://127.0.0.1:${hostPort}/`);
      const option = tab.getByLabel(LONG_OPTION);
      await option.waitFor();
      const card = (await tab.locator('.panel').boundingBox())!;
      const label = (await tab.locator('label', { hasText: LONG_OPTION }).boundingBox())!;
      t.ok(inside(label, card), 'the option stays inside its card');
      const overflow = await tab.locator('label', { hasText: LONG_OPTION }).evaluate((element: any) => element.scrollWidth - element.clientWidth);
      t.equal(overflow, 0, 'and its text inside the option: the letters wrap');
      await tab.getByLabel('Short').check();
      await tab.getByRole('button', { name: 'Vote' }).click();
      await tab.getByText('2 votes', { exact: true }).waitFor();
      await tab.screenshot({ path: `${SHOTS}poll-390.png`, fullPage: true });
      t.equal(await tab.evaluate('document.documentElement.scrollWidth'), 390, 'the host page does not scroll sideways');
    });

    t.test('the dashboard pages of the poll and the form fit the screen', async (t) => {
      const tab = await open(1280);
      await followLoginLink(tab, { url: server.url, dataDir: dir }, biz.accountId);
      for (const [name, path] of [['poll', `/dashboard/polls/${poll.id}`], ['form', `/dashboard/forms/${form.id}`]] as const) {
        for (const width of [1280, 390]) {
          await tab.setViewportSize({ width, height: 844 });
          await tab.goto(`${server.url}${path}`);
          await tab.locator('main h1').first().waitFor();
          await tab.waitForFunction(() => !(globalThis as any).document.querySelector('.loading, .summary-loading, [aria-busy="true"]'));
          await tab.screenshot({ path: `${SHOTS}dashboard-${name}-${width}.png`, fullPage: true });
          t.equal(await tab.evaluate('document.documentElement.scrollWidth'), width, `the ${name} page fits ${width} px`);
        }
      }
      // A 10,000-character answer shows its start, and the rest when asked.
      await tab.setViewportSize({ width: 1280, height: 844 });
      const row = tab.locator('.table-responses tbody tr').first();
      const rest = tab.locator('details.answer-rest');
      t.ok((await row.boundingBox())!.height < 400, `the row of a long answer stays short (${(await row.boundingBox())!.height} px)`);
      t.equal(await rest.evaluate((details: any) => details.open), false, 'its rest is not shown');
      await tab.getByText(/Show the rest \(9,/).click();
      t.equal(await rest.evaluate((details: any) => details.open), true);
      t.ok((await row.boundingBox())!.height > 1000, 'asked for, all of it is there');
      t.match(await rest.innerText(), /The end\.$/);
      await tab.screenshot({ path: `${SHOTS}dashboard-form-long-answer.png` });
    });
    t.test('no page threw', async (t) => {
      t.same(errors, []);
    });
  });
}
