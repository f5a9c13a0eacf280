/**
 * The embed script in a real browser: a host page on another origin than the
 * API pastes the script tag; headless Chromium (Debian's package, driven by
 * playwright-core) clicks, types and submits; the test then reads what was
 * stored through the API. Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:http';
import { chromium, type Browser, type Page } from 'playwright-core';
import t from 'tap';
import { buildApp } from '../../src/http/app.js';
import { owner } from '../support/app.js';
import { freePort, startServer } from '../support/processes.js';
import { tempDir, testServices } from '../support/services.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ARTIFACTS = new URL('../../test-artifacts/', import.meta.url).pathname;

if (!existsSync(CHROMIUM)) {
  t.plan(0, `skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`);
} else {
  t.test('embeds work on another site, in a real browser', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const dir = tempDir(t);
    const ids: Record<string, string> = {};
    let apiKey = '';
    {
      const services = await testServices(t, { dataDir: dir });
      const app = await buildApp(services);
      const biz = await owner(services);
      apiKey = biz.key;
      const make = async (url: string, payload: object) => {
        const id = (await app.inject({ method: 'POST', url, headers: biz.headers, payload })).json().id as string;
        await app.inject({ method: 'PUT', url: `${url}/${id}`, headers: biz.headers, payload: { published: true } });
        return id;
      };
      const modes = [
        ['click_toggle', { position: 'bottom-right', icon: 'chat', text: 'Feedback', showText: true }],
        ['scroll', { position: 'bottom-left', icon: 'star', scrollPercentage: 50 }],
        ['exit_intent', { position: 'top-right', icon: 'help' }],
        ['time_delay', { position: 'top-left', icon: 'heart', timeDelay: 1, showText: false }],
      ] as const;
      for (const [mode, trigger] of modes) {
        ids[mode] = await make('/api/widgets', { widget_type: 'feedback', title: `Rate us (${mode})`, trigger_config: { ...trigger, triggerMode: mode }, theme: { primaryColor: '#0f766e' }, settings: { allowed_domains: ['127.0.0.1'] } });
      }
      ids.form = await make('/api/forms', {
        title: 'Join the beta',
        questions: [
          { id: 'name', type: 'short_text', title: 'Your name', required: true },
          { id: 'consent', type: 'consent', title: 'Privacy', text: 'I agree that Acme stores my answers.', required: true },
        ],
      });
      ids.poll = await make('/api/polls', { question: 'Which plan do you use?', options: [{ text: 'Free' }, { text: 'Pro' }, { text: 'Business' }] });
      await app.close();
      await services.close();
    }
    const api = await startServer({ DATA_DIR: dir });
    t.teardown(() => api.stop());
    const hostPort = await freePort();
    const page = (title: string, attribute: string, id: string) =>
      `<!doctype html><html lang="en"><head><title>${title}</title></head><body><h1>${title}</h1><main style="height:3000px">Long page</main>` +
      `<script src="${api.url}/embed.js" data-${attribute}="${id}" async></script></body></html>`;
    const host = createServer((request, response) => {
      const path = new URL(request.url!, 'http://x').pathname.slice(1);
      const [attribute, id] = path === 'form' ? ['form', ids.form!] : path === 'poll' ? ['poll', ids.poll!] : ['widget', ids[path]!];
      response.writeHead(200, { 'content-type': 'text/html' }).end(page(`${path} page`, attribute, id));
    }).listen(hostPort, '127.0.0.1');
    t.teardown(() => host.close());
    const site = `http://127.0.0.1:${hostPort}`;
    t.not(new URL(site).origin, new URL(api.url).origin, 'the host page and the API are different origins');

    const browser: Browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    });
    t.teardown(() => browser.close());
    const stored = async (path: string) => (await (await fetch(`${api.url}${path}`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as any;
    const open = async (path: string): Promise<Page> => {
      const tab = await browser.newPage({ viewport: { width: 1024, height: 700 } });
      await tab.goto(`${site}/${path}`);
      return tab;
    };

    t.test('a widget: click, validate, rate, type, submit, thank you', async (t) => {
      const tab = await open('click_toggle');
      const launcher = tab.locator('.launcher');
      await launcher.waitFor();
      t.equal(await launcher.getAttribute('aria-expanded'), 'false');
      await launcher.click();
      t.equal(await launcher.getAttribute('aria-expanded'), 'true');
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByText('Please answer this question.').waitFor();
      t.pass('required answers are checked before sending');
      await tab.getByRole('button', { name: '4 of 5 stars' }).click();
      await tab.locator('textarea').fill('The embed took a minute to set up');
      await tab.screenshot({ path: `${ARTIFACTS}embed-widget.png` });
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByRole('heading', { name: 'Thank you!' }).waitFor();
      const { responses } = await stored(`/api/widgets/${ids.click_toggle}/responses`);
      t.equal(responses.length, 1, 'one response stored');
      t.same(responses[0].answers, { rating: 4, comment: 'The embed took a minute to set up' });
      t.match(responses[0].metadata, { browser: /Chrom/, os: 'Linux', device: 'Desktop', page_url: `${site}/click_toggle`, page_title: 'click_toggle page', screen_width: Number, fingerprint_hash: /^[0-9a-f]{64}$/, language: /^en/ });
      await tab.keyboard.press('Escape');
      await tab.close();
    });

    t.test('the keyboard alone opens and closes a widget', async (t) => {
      const tab = await open('click_toggle');
      await tab.locator('.launcher').waitFor();
      await tab.locator('.launcher').focus();
      await tab.keyboard.press('Enter');
      await tab.getByRole('dialog').waitFor();
      t.ok(await tab.evaluate("document.querySelector('[data-feedback-embed]').shadowRoot.activeElement?.getAttribute('aria-label')"), 'focus moved into the panel');
      await tab.keyboard.press('Escape');
      await tab.getByRole('dialog').waitFor({ state: 'hidden' });
      t.pass('Escape closes it');
      await tab.close();
    });

    for (const [mode, act] of [
      ['scroll', async (tab: Page) => tab.evaluate('window.scrollTo(0, document.body.scrollHeight)')],
      // The pointer leaving through the top of the window, as a visitor heading for the tab bar does.
      ['exit_intent', async (tab: Page) => tab.evaluate("document.dispatchEvent(new MouseEvent('mouseout', { clientY: -1, bubbles: true }))")],
    ] as const) {
      t.test(`trigger mode ${mode} opens the widget by itself`, async (t) => {
        const tab = await open(mode);
        await tab.locator('.launcher').waitFor();
        t.equal(await tab.locator('.launcher').getAttribute('aria-expanded'), 'false', 'closed at first');
        await act(tab);
        await tab.getByRole('dialog').waitFor();
        t.equal(await tab.locator('.launcher').getAttribute('aria-expanded'), 'true');
        await tab.screenshot({ path: `${ARTIFACTS}embed-widget-${mode}.png` });
        await tab.close();
      });
    }

    t.test('trigger mode time_delay opens the widget after its delay, not before', async (t) => {
      const tab = await browser.newPage({ viewport: { width: 1024, height: 700 } });
      // The page's timers run on a clock that stands still from before it loads until the test moves it.
      const start = Date.parse('2026-11-22T10:00:00.000Z');
      await tab.clock.install({ time: start });
      await tab.clock.pauseAt(start + 1000);
      await tab.goto(`${site}/time_delay`);
      const launcher = tab.locator('.launcher');
      await launcher.waitFor();
      await tab.clock.runFor(999);
      t.equal(await launcher.getAttribute('aria-expanded'), 'false', 'closed until its delay of 1 s has passed');
      await tab.clock.runFor(1);
      await tab.getByRole('dialog').waitFor();
      t.equal(await launcher.getAttribute('aria-expanded'), 'true', 'open once it has');
      await tab.screenshot({ path: `${ARTIFACTS}embed-widget-time_delay.png` });
      await tab.close();
    });

    t.test('a form with a consent question', async (t) => {
      const tab = await open('form');
      await tab.getByLabel('Your name *').fill('Ada');
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByText('Please give your consent to send this.').waitFor();
      await tab.getByLabel('I agree that Acme stores my answers. *').check();
      await tab.screenshot({ path: `${ARTIFACTS}embed-form.png` });
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByRole('heading', { name: 'Thank you!' }).waitFor();
      const { responses } = await stored(`/api/forms/${ids.form}/responses`);
      t.equal(responses.length, 1);
      t.same(responses[0].answers, { name: 'Ada', consent: true });
      t.match(responses[0].consent_record, { consent_given: true, consent_text: 'I agree that Acme stores my answers.', form_version: 1, user_agent: /Chrom/ });
      await tab.close();
    });

    t.test('a poll: vote, then the results', async (t) => {
      const tab = await open('poll');
      await tab.getByLabel('Pro').check();
      await tab.getByRole('button', { name: 'Vote' }).click();
      await tab.getByText('1 votes').waitFor();
      await tab.screenshot({ path: `${ARTIFACTS}embed-poll.png` });
      const results = (await (await fetch(`${api.url}/api/polls/${ids.poll}/results`)).json()) as any;
      t.equal(results.total_votes, 1);
      t.equal(results.options.find((o: { text: string }) => o.text === 'Pro').votes, 1);
      await tab.reload();
      await tab.getByLabel('Pro').check();
      await tab.getByRole('button', { name: 'Vote' }).click();
      await tab.getByText('1 votes').waitFor();
      const again = (await (await fetch(`${api.url}/api/polls/${ids.poll}/results`)).json()) as any;
      t.equal(again.total_votes, 1, 'the same browser voting again sees the results, and the count stays 1');
      await tab.close();
    });
  });
}
