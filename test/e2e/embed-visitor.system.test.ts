/**
 * The embed as a visitor meets it, in Chromium, keyboard first: an answer
 * the server refuses on an earlier page, the thank-you after Send, a
 * right-to-left form on a left-to-right page at 390 px, the results of a
 * poll asked for before voting, hidden fields on the container, and the
 * hosted page's heading and icon.
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { Page } from 'playwright-core';
import t from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite, launch } from '../support/embed-site.js';

const SHOTS = `${ARTIFACTS}embed-visitor/`;

/** The element focused inside the embed's shadow root: its tag, id and text. */
const focused = (tab: Page) =>
  tab.evaluate(() => {
    const doc = (globalThis as any).document;
    const host = doc.querySelector('[data-feedback-embed]');
    const el = host?.shadowRoot?.activeElement;
    return el ? { tag: el.tagName.toLowerCase(), id: el.id as string, text: (el.textContent as string).trim() } : null;
  });

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('the embed as a visitor meets it', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    let form = '';
    let arabic = '';
    let poll = '';
    const site = await embedSite(t, async (make) => {
      form = await make('/api/forms', {
        title: 'Stay in touch',
        questions: [
          { id: 'email', type: 'email', title: 'Your email', required: true },
          { id: 'note', type: 'short_text', title: 'Anything else?' },
        ],
        pages: [
          { id: 'p1', question_ids: ['email'] },
          { id: 'p2', question_ids: ['note'] },
        ],
        hidden_fields: ['utm_source'],
      });
      arabic = await make('/api/forms', { title: 'رأيك', language: 'ar', questions: [{ id: 'site', type: 'url', title: 'موقعك' }] });
      poll = await make('/api/polls', { question: 'Tea or coffee?', options: [{ text: 'Tea' }, { text: 'Coffee' }] });
    });
    const browser = await launch(t);
    const errors: string[] = [];
    const watch = (tab: Page) => {
      tab.on('pageerror', (error) => errors.push(error.message));
      tab.on('console', (message) => {
        // A refused request is logged as "Failed to load resource" (the refused submission, the host page's icon): the hosted page's are checked below.
        if (message.type() === 'error' && !message.text().startsWith('Failed to load resource')) errors.push(`${tab.url()}: ${message.text()}`);
      });
    };

    t.test('a refused answer on an earlier page: back there, its message at the field, the focus on it; then the thank-you takes the focus', async (t) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      const tab = await context.newPage();
      watch(tab);
      const body = `<main><h1>Host</h1><div data-form="${form}" data-hidden-utm_source="from-the-tag"></div><script src="{api}/embed.js" async></script></main>`;
      await tab.goto(`${site.page({ embeds: [], body })}?utm_source=from-the-query`);
      const embed = tab.locator('[data-feedback-embed]');
      const email = embed.getByLabel('Your email');
      await email.waitFor();
      await email.focus();
      await tab.keyboard.type('not-an-email');
      await tab.keyboard.press('Enter');
      const note = embed.getByLabel('Anything else?');
      await note.waitFor();
      await note.focus();
      await tab.keyboard.type('Thanks');
      await tab.keyboard.press('Enter');
      await email.waitFor();
      t.match(await focused(tab), { tag: 'input' }, 'the refused answer has the focus');
      t.equal(await email.getAttribute('aria-invalid'), 'true', 'marked invalid');
      const describedBy = (await email.getAttribute('aria-describedby'))!;
      t.match(await embed.locator(`[id="${describedBy.split(' ')[0]}"]`).textContent(), /email/i, 'its message at the field');
      t.ok(await note.isHidden(), 'on its own page, the later one left');
      await tab.screenshot({ path: `${SHOTS}refused-on-page-1.png` });
      await email.fill('ada@example.com');
      await email.focus();
      await tab.keyboard.press('Enter');
      await note.waitFor();
      await note.focus();
      await tab.keyboard.press('Enter');
      const thanks = embed.getByRole('heading', { name: 'Thank you!' });
      await thanks.waitFor();
      t.match(await focused(tab), { tag: 'h2', text: 'Thank you!' }, 'the thank-you takes the focus from Send');
      const listed = (await (await fetch(`${site.api}/api/forms/${form}/responses`, { headers: { authorization: `Bearer ${site.apiKey}` } })).json()) as { responses: Array<{ answers: object; hidden: object }> };
      t.match(listed.responses, [{ answers: { email: 'ada@example.com', note: 'Thanks' }, hidden: { utm_source: 'from-the-tag' } }], "the container's data-hidden-* wins over the query");
      await context.close();
    });

    t.test('a right-to-left form on a left-to-right page at 390 px widens nothing; its address field reads left to right', async (t) => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const tab = await context.newPage();
      watch(tab);
      await tab.goto(site.page({ embeds: [['form', arabic]], height: 200 }));
      const field = tab.locator('[data-feedback-embed]').getByLabel('موقعك');
      await field.waitFor();
      t.equal(await tab.evaluate('document.documentElement.scrollWidth'), 390, 'no sideways scrolling');
      t.equal(await field.getAttribute('dir'), 'ltr');
      await tab.screenshot({ path: `${SHOTS}arabic-on-ltr-390.png`, fullPage: true });
      await context.close();
    });

    t.test('results asked for before voting lead back to the ballot; a vote without a choice is said at the options', async (t) => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const tab = await context.newPage();
      watch(tab);
      await tab.goto(site.page({ embeds: [['poll', poll]], height: 200, attributes: 'data-remember="off"' }));
      const embed = tab.locator('[data-feedback-embed]');
      const vote = embed.getByRole('button', { name: 'Vote' });
      await vote.waitFor();
      await vote.focus();
      await tab.keyboard.press('Enter');
      const group = embed.getByRole('group', { name: 'Tea or coffee?' });
      t.equal(await group.getAttribute('aria-describedby'), 'ballot-error');
      t.match(await embed.locator('#ballot-error').textContent(), /choose/i, 'the options are described by the error');
      await embed.getByRole('button', { name: 'See the results' }).focus();
      await tab.keyboard.press('Enter');
      const back = embed.getByRole('button', { name: 'Back' });
      await back.waitFor();
      await tab.screenshot({ path: `${SHOTS}poll-results-before-voting-390.png` });
      await back.focus();
      await tab.keyboard.press('Enter');
      await vote.waitFor();
      t.match(await focused(tab), { tag: 'input' }, 'back on the ballot, its first option focused');
      await tab.keyboard.press('Space');
      await vote.focus();
      await tab.keyboard.press('Enter');
      await embed.getByText('1 vote', { exact: true }).waitFor();
      t.pass('and the vote counts');
      await context.close();
    });

    t.test("the hosted page: the form's title is its heading, and it names an icon", async (t) => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      const tab = await context.newPage();
      watch(tab);
      const failed: string[] = [];
      tab.on('response', (response) => {
        if (response.status() >= 400) failed.push(`${response.status()} ${response.url()}`);
      });
      await tab.goto(`${site.api}/f/${form}`);
      await tab.locator('[data-feedback-embed]').getByRole('heading', { level: 1, name: 'Stay in touch' }).waitFor();
      t.pass('one h1: the title');
      t.match(await tab.locator('link[rel=icon]').getAttribute('href'), /icon\.svg$/);
      t.same(failed, [], 'nothing it asks for is missing');
      await context.close();
    });

    t.test('no error in any console', async (t) => {
      t.same(errors, []);
    });
  });
}
