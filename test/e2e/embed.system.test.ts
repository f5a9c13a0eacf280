/**
 * The embed script in a real browser: a host page on another origin than the
 * API pastes the script tag; headless Chromium (Debian's package, driven by
 * playwright-core) clicks, types and submits; the test then reads what was
 * stored through the API. Timers run on the page's own clock, moved by the
 * test. Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { Browser, BrowserContextOptions, ConsoleMessage, Page } from 'playwright-core';
import t from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite, launch, type HostPage } from '../support/embed-site.js';

const SHADOW_FOCUS = "(() => { const host = document.querySelector('[data-feedback-embed]'); return host && host.shadowRoot.activeElement ? host.shadowRoot.activeElement.outerHTML.slice(0, 60) : null; })()";
const START = Date.parse('2026-11-22T10:00:00.000Z');

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`, () => {});
} else {
  t.test('embeds work on another site, in a real browser', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const ids: Record<string, string> = {};
    const site = await embedSite(t, async (make) => {
      const modes = [
        ['click_toggle', { position: 'bottom-right', icon: 'chat', text: 'Feedback', showText: true }],
        ['scroll', { position: 'bottom-left', icon: 'star', scrollPercentage: 50 }],
        ['exit_intent', { position: 'top-right', icon: 'help', timeDelay: 3 }],
        ['time_delay', { position: 'top-left', icon: 'heart', timeDelay: 1, showText: false }],
      ] as const;
      for (const [mode, trigger] of modes) {
        ids[mode] = await make('/api/widgets', { widget_type: 'feedback', title: `Rate us (${mode})`, trigger_config: { ...trigger, triggerMode: mode }, theme: { primaryColor: '#0f766e' }, settings: { allowed_domains: ['127.0.0.1'] } });
      }
      ids.nps = await make('/api/widgets', { widget_type: 'nps', title: 'Would you recommend us?', trigger_config: { text: 'Recommend us' }, theme: { mode: 'auto' } });
      ids.second = await make('/api/widgets', { widget_type: 'contact', title: 'Write to us', trigger_config: { text: 'Contact' } });
      ids.delayedRight = await make('/api/widgets', { widget_type: 'bug_report', title: 'Found a bug?', trigger_config: { position: 'bottom-right', triggerMode: 'time_delay', timeDelay: 1, text: 'Bug' } });
      ids.elsewhere = await make('/api/widgets', { widget_type: 'feedback', title: 'Elsewhere', settings: { allowed_domains: ['example.com'] } });
      ids.draft = await make('/api/widgets', { widget_type: 'feedback', title: 'Draft' }, false);
      ids.form = await make('/api/forms', {
        title: 'Join the beta',
        questions: [
          { id: 'name', type: 'short_text', title: 'Your name', required: true },
          { id: 'email', type: 'email', title: 'Your email address', required: false },
          { id: 'consent', type: 'consent', title: 'Privacy', text: 'I agree that Acme stores my answers.', required: true },
        ],
      });
      ids.closedForm = await make('/api/forms', { title: 'Last year', questions: [{ id: 'q', type: 'short_text', title: 'Q' }], settings: { closes_at: '2020-01-01T00:00:00Z' } });
      ids.poll = await make('/api/polls', { question: 'Which plan do you use?', options: [{ text: 'Free' }, { text: 'Pro' }, { text: 'Business' }] });
    });
    t.not(new URL(site.page({ embeds: [] })).origin, new URL(site.api).origin, 'the host page and the API are different origins');

    const browser: Browser = await launch(t);
    const errors: string[] = [];
    const stored = async (path: string) => (await (await fetch(`${site.api}${path}`, { headers: { authorization: `Bearer ${site.apiKey}` } })).json()) as any;

    /** A fresh visitor (own storage), optionally on a clock that stands still until the test moves it. */
    const visit = async (page: HostPage, options: BrowserContextOptions & { clock?: boolean } = {}) => {
      const { clock, ...contextOptions } = options;
      const context = await browser.newContext({ viewport: { width: 1024, height: 700 }, ...contextOptions });
      const tab = await context.newPage();
      tab.on('pageerror', (error) => errors.push(`${tab.url()}: ${error.message}`));
      const warnings: string[] = [];
      tab.on('console', (message: ConsoleMessage) => { if (message.type() === 'warning') warnings.push(message.text()); });
      if (clock) {
        await tab.clock.install({ time: START });
        await tab.clock.pauseAt(START + 1000);
      }
      await tab.goto(site.page(page));
      return { tab, warnings, close: () => context.close() };
    };
    const widget = (name: string, extra: Partial<HostPage> = {}): HostPage => ({ embeds: [['widget', ids[name]!]], ...extra });
    const shadowFocus = (tab: Page) => tab.evaluate(SHADOW_FOCUS);

    t.test('a widget: click, validate, rate, type, submit, thank you', async (t) => {
      const { tab, close } = await visit(widget('click_toggle'));
      const launcher = tab.locator('.launcher');
      await launcher.waitFor();
      t.equal(await launcher.getAttribute('aria-expanded'), 'false');
      const tokens: string[] = [];
      tab.on('request', (request) => { if (request.url().endsWith('/token')) tokens.push('token'); if (request.url().endsWith('/submit')) tokens.push('submit'); });
      await launcher.click();
      t.equal(await launcher.getAttribute('aria-expanded'), 'true');
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByText('Please answer this question.').waitFor();
      t.equal(await tab.getByRole('radio', { name: '1 of 5 stars' }).getAttribute('aria-invalid'), 'true', 'the unanswered rating is marked invalid');
      await tab.getByRole('radio', { name: '4 of 5 stars' }).check();
      t.equal(await tab.getByRole('radio', { name: '1 of 5 stars' }).getAttribute('aria-invalid'), null, 'an answer clears it');
      await tab.locator('textarea').fill('The embed took a minute to set up');
      await tab.screenshot({ path: `${ARTIFACTS}embed-widget.png` });
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByRole('heading', { name: 'Thank you!' }).waitFor();
      t.same(tokens, ['token', 'submit'], 'a token fetched when the panel opened, so the answer time counts from there');
      const { responses } = await stored(`/api/widgets/${ids.click_toggle}/responses`);
      t.equal(responses.length, 1, 'one response stored');
      t.same(responses[0].answers, { rating: 4, comment: 'The embed took a minute to set up' });
      t.match(responses[0].metadata, { browser: /Chrom/, os: 'Linux', device: 'Desktop', page_title: 'A host page', screen_width: Number, fingerprint_hash: /^[0-9a-f]{64}$/, language: /^en/ });
      await tab.getByRole('button', { name: 'Close' }).last().click();
      await tab.getByRole('dialog').waitFor({ state: 'hidden' });
      await tab.reload();
      await tab.getByRole('heading', { name: 'A host page' }).waitFor();
      await tab.waitForLoadState('networkidle');
      t.equal(await tab.locator('.launcher').count(), 0, 'an answered widget does not come back on the next page load');
      await close();
    });

    t.test('the thank-you card closes by itself', async (t) => {
      const { tab, close } = await visit(widget('nps'), { clock: true });
      await tab.locator('.launcher').click();
      await tab.getByRole('radio', { name: '9 out of 10' }).check();
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByRole('heading', { name: 'Thank you!' }).waitFor();
      await tab.clock.runFor(5000);
      await tab.getByRole('dialog').waitFor({ state: 'hidden' });
      t.pass('gone 5 s later');
      await close();
    });

    t.test('the keyboard alone opens and closes a widget; a dismissed one does not open by itself again', async (t) => {
      const { tab, close } = await visit(widget('time_delay'), { clock: true });
      await tab.locator('.launcher').waitFor();
      await tab.locator('.launcher').focus();
      await tab.keyboard.press('Enter');
      await tab.getByRole('dialog').waitFor();
      t.match(await shadowFocus(tab), /^<input type="radio"/, 'focus moved into the panel, to its first control');
      await tab.keyboard.press('Escape');
      await tab.getByRole('dialog').waitFor({ state: 'hidden' });
      t.match(await shadowFocus(tab), /launcher/, 'Escape closes it and focus goes back to the launcher');
      await tab.reload();
      await tab.locator('.launcher').waitFor();
      await tab.clock.runFor(60_000);
      t.equal(await tab.locator('.launcher').getAttribute('aria-expanded'), 'false', 'the delay trigger stays quiet after a dismissal');
      await close();
    });

    t.test('a panel the visitor opened and closed before the delay stays closed when the delay comes', async (t) => {
      const { tab, close } = await visit(widget('time_delay', { attributes: 'data-remember="off"' }), { clock: true });
      await tab.locator('.launcher').click();
      await tab.keyboard.press('Escape');
      await tab.clock.runFor(1000);
      t.equal(await tab.locator('.launcher').getAttribute('aria-expanded'), 'false');
      await close();
    });

    t.test('theme mode auto follows the visitor switching their system to dark and back', async (t) => {
      const { tab, close } = await visit(widget('nps'), { colorScheme: 'light' });
      await tab.locator('.launcher').click();
      const read = () => tab.getByRole('dialog').evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor as string);
      // The page hears of the switch in a change event of its own, a moment after it: wait for the repaint, up to 2 s.
      const background = async (expected: string) => {
        for (let tries = 0; tries < 100 && (await read()) !== expected; tries++) await tab.waitForTimeout(20);
        return read();
      };
      t.equal(await background('rgb(255, 255, 255)'), 'rgb(255, 255, 255)', 'light');
      await tab.emulateMedia({ colorScheme: 'dark' });
      t.equal(await background('rgb(17, 24, 39)'), 'rgb(17, 24, 39)', 'dark');
      await tab.emulateMedia({ colorScheme: 'light' });
      t.equal(await background('rgb(255, 255, 255)'), 'rgb(255, 255, 255)', 'light again');
      await close();
    });

    t.test('a dismissed widget opens by itself again when the page says data-remember="off"', async (t) => {
      const { tab, close } = await visit(widget('time_delay', { attributes: 'data-remember="off"' }), { clock: true });
      await tab.locator('.launcher').click();
      await tab.keyboard.press('Escape');
      await tab.reload();
      await tab.locator('.launcher').waitFor();
      await tab.clock.runFor(1000);
      await tab.getByRole('dialog').waitFor();
      t.pass('opened after its delay');
      await close();
    });

    t.test('arrow keys move a rating, and an NPS score, as in any radio group', async (t) => {
      const { tab, close } = await visit({ embeds: [['widget', ids.click_toggle!], ['widget', ids.nps!]], attributes: 'data-remember="off"' });
      const [stars, nps] = [tab.getByRole('button', { name: 'Feedback' }), tab.getByRole('button', { name: 'Recommend us' })];
      await stars.click();
      await tab.getByRole('radio', { name: '2 of 5 stars' }).check();
      await tab.keyboard.press('ArrowRight');
      t.ok(await tab.getByRole('radio', { name: '3 of 5 stars' }).isChecked(), 'ArrowRight: 3 stars');
      await tab.keyboard.press('ArrowRight');
      t.ok(await tab.getByRole('radio', { name: '4 of 5 stars' }).isChecked(), 'ArrowRight: 4 stars');
      await tab.keyboard.press('ArrowLeft');
      t.ok(await tab.getByRole('radio', { name: '3 of 5 stars' }).isChecked(), 'ArrowLeft: back to 3');
      t.equal(await tab.locator('[data-feedback-embed] .stars .lit').count(), 3, 'three stars lit, not only the third');
      await tab.screenshot({ path: `${ARTIFACTS}embed-stars.png` });
      await tab.keyboard.press('Escape');
      await nps.click();
      await tab.getByRole('radio', { name: '7 out of 10' }).check();
      await tab.keyboard.press('ArrowLeft');
      t.ok(await tab.getByRole('radio', { name: '6 out of 10' }).isChecked(), 'ArrowLeft: 6');
      t.ok(await tab.getByRole('radiogroup').or(tab.getByRole('group', { name: /recommend/ })).first().isVisible(), 'the scale is a named group');
      t.ok(await tab.getByText('0 · Not likely').isVisible(), 'its ends are labelled');
      t.ok(await tab.getByText('Very likely · 10').isVisible());
      await close();
    });

    t.test('two widgets in one corner stack instead of covering each other', async (t) => {
      const { tab, close } = await visit({ embeds: [['widget', ids.click_toggle!], ['widget', ids.second!]], attributes: 'data-remember="off"' });
      await tab.locator('.launcher').nth(1).waitFor();
      const [a, b] = await Promise.all([tab.locator('.launcher').first().boundingBox(), tab.locator('.launcher').last().boundingBox()]);
      t.ok(a!.y + a!.height <= b!.y || b!.y + b!.height <= a!.y, 'one launcher above the other');
      await close();
    });

    t.test('panels of one corner do not open over each other: the visitor opening one closes the other, and a trigger waits', async (t) => {
      // The same widget twice, as a page that pastes its snippet twice has it, and a third that opens by itself after 1 s.
      const { tab, close } = await visit({ embeds: [['widget', ids.click_toggle!], ['widget', ids.click_toggle!], ['widget', ids.delayedRight!]], attributes: 'data-remember="off"' }, { clock: true });
      const launchers = tab.getByRole('button', { name: 'Feedback', exact: true });
      const delayed = tab.getByRole('button', { name: 'Bug' });
      await launchers.nth(1).waitFor();
      await delayed.waitFor();
      await launchers.nth(0).click();
      await launchers.nth(1).click();
      t.same(await Promise.all([0, 1].map((i) => launchers.nth(i).getAttribute('aria-expanded'))), ['false', 'true'], 'the second opened, the first closed');
      t.equal(await tab.getByRole('dialog').count(), 1, 'one panel shows');
      await tab.clock.runFor(1500);
      t.equal(await delayed.getAttribute('aria-expanded'), 'false', 'the delay trigger did not open its panel over the open one');
      t.equal(await tab.getByRole('dialog').count(), 1);
      await tab.screenshot({ path: `${ARTIFACTS}embed-one-corner.png` });
      await close();
    });

    t.test('a delay trigger opens the panel after its delay, not before, and leaves focus where it was', async (t) => {
      const { tab, close } = await visit(widget('time_delay'), { clock: true });
      const launcher = tab.locator('.launcher');
      await launcher.waitFor();
      const search = tab.getByLabel('Search the site');
      await search.click();
      await tab.keyboard.type('shoes');
      await tab.clock.runFor(999);
      t.equal(await launcher.getAttribute('aria-expanded'), 'false', 'closed until its delay of 1 s has passed');
      await tab.clock.runFor(1);
      await tab.getByRole('dialog').waitFor();
      t.equal(await launcher.getAttribute('aria-expanded'), 'true', 'open once it has');
      t.equal(await tab.evaluate('document.activeElement.id'), 'search', 'focus is still in the search box');
      await tab.keyboard.type(' red');
      t.equal(await search.inputValue(), 'shoes red', 'and typing goes on there');
      await tab.screenshot({ path: `${ARTIFACTS}embed-widget-time_delay.png` });
      await close();
    });

    for (const [mode, act] of [
      ['scroll', async (tab: Page) => tab.evaluate('window.scrollTo(0, document.body.scrollHeight)')],
      // The pointer leaving through the top of the window, as a visitor heading for the tab bar does.
      ['exit_intent', async (tab: Page) => tab.evaluate("document.dispatchEvent(new MouseEvent('mouseout', { clientY: -1, bubbles: true }))")],
    ] as const) {
      t.test(`trigger mode ${mode} opens the widget by itself`, async (t) => {
        const { tab, close } = await visit(widget(mode));
        await tab.locator('.launcher').waitFor();
        t.equal(await tab.locator('.launcher').getAttribute('aria-expanded'), 'false', 'closed at first');
        await act(tab);
        await tab.getByRole('dialog').waitFor();
        t.equal(await tab.locator('.launcher').getAttribute('aria-expanded'), 'true');
        t.equal(await shadowFocus(tab), null, 'without taking focus');
        await close();
      });
    }

    t.test('a scroll trigger on a page too short to scroll opens at once', async (t) => {
      const { tab, close } = await visit(widget('scroll', { height: 10 }));
      await tab.getByRole('dialog').waitFor();
      t.pass('opened without any scrolling');
      await close();
    });

    t.test('exit intent on a touch screen falls back to the delay', async (t) => {
      const { tab, close } = await visit(widget('exit_intent'), { clock: true, hasTouch: true, isMobile: true, viewport: { width: 390, height: 844 } });
      await tab.locator('.launcher').waitFor();
      await tab.clock.runFor(2999);
      t.equal(await tab.locator('.launcher').getAttribute('aria-expanded'), 'false', 'closed before timeDelay');
      await tab.clock.runFor(1);
      await tab.getByRole('dialog').waitFor();
      t.pass('open at timeDelay (3 s)');
      await close();
    });

    t.test('a form: required fields exposed, a server field error shown at its field, consent, thank you', async (t) => {
      const { tab, close } = await visit({ embeds: [['form', ids.form!]] });
      const name = tab.getByLabel('Your name');
      const email = tab.getByLabel('Your email address');
      t.equal(await name.getAttribute('required'), '', 'required is exposed to assistive technology');
      await name.fill('Ada');
      await email.fill('ada@');
      await tab.getByLabel('I agree that Acme stores my answers.').check();
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByText('Please enter a valid email address.').waitFor();
      t.equal(await email.getAttribute('aria-invalid'), 'true', 'the email field is marked invalid');
      const describedBy = await email.getAttribute('aria-describedby');
      t.equal(await tab.locator(`[data-feedback-embed] #${describedBy}`).textContent(), 'Please enter a valid email address.', 'the message is the one the field points to');
      t.equal(await tab.locator('[data-feedback-embed] [role=status]').textContent(), '', 'and nothing generic under Send');
      t.match(await shadowFocus(tab), /type="email"/, 'focus goes to the field');
      const border = await email.evaluate((el) => (globalThis as any).getComputedStyle(el).borderTopColor as string);
      t.equal(border, 'rgb(185, 28, 28)', 'with a red border');
      await tab.screenshot({ path: `${ARTIFACTS}embed-form-field-error.png` });
      await email.fill('ada@example.com');
      t.equal(await email.getAttribute('aria-invalid'), null, 'typing clears the error');
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByRole('heading', { name: 'Thank you!' }).waitFor();
      const { responses } = await stored(`/api/forms/${ids.form}/responses`);
      t.equal(responses.length, 1);
      t.same(responses[0].answers, { name: 'Ada', email: 'ada@example.com', consent: true });
      t.match(responses[0].consent_record, { consent_given: true, consent_text: 'I agree that Acme stores my answers.', form_version: 1, user_agent: /Chrom/ });
      await close();
    });

    t.test('a poll: vote, the results, and a returning voter sees the results', async (t) => {
      const { tab, close } = await visit({ embeds: [['poll', ids.poll!]] });
      await tab.getByLabel('Pro').check();
      await tab.getByRole('button', { name: 'Vote' }).click();
      await tab.getByText('1 vote', { exact: true }).waitFor();
      t.ok(await tab.getByText('Pro — 1 vote (100%)').isVisible(), 'one vote, singular');
      await tab.screenshot({ path: `${ARTIFACTS}embed-poll.png` });
      const results = (await (await fetch(`${site.api}/api/polls/${ids.poll}/results`)).json()) as any;
      t.equal(results.total_votes, 1);
      await tab.reload();
      await tab.getByText('1 vote', { exact: true }).waitFor();
      t.equal(await tab.getByRole('button', { name: 'Vote' }).count(), 0, 'the results, not the ballot');
      await close();
      const other = await visit({ embeds: [['poll', ids.poll!]] });
      await other.tab.getByRole('button', { name: 'See the results' }).click();
      await other.tab.getByText('Pro — 1 vote (100%)').waitFor();
      t.pass('anyone can see the results without voting');
      await other.close();
    });

    t.test('failures: nothing rendered, one console warning naming the reason, no uncaught error', async (t) => {
      const cases: Array<[string, HostPage, RegExp]> = [
        ['a site allowed_domains leaves out', widget('elsewhere'), /may not be embedded on 127\.0\.0\.1/],
        ['an unknown id', { embeds: [['form', 'frm_01NOSUCHFORM0000000000000']] }, /Form not found/],
        ['an unpublished widget', widget('draft'), /not published/],
      ];
      for (const [name, page, reason] of cases) {
        const { tab, warnings, close } = await visit(page);
        await tab.waitForLoadState('networkidle');
        t.equal(await tab.locator('[data-feedback-embed]').count(), 0, `${name}: nothing rendered`);
        t.equal(warnings.length, 1, `${name}: one warning`);
        t.match(warnings[0], reason, `${name}: ${warnings[0]}`);
        await close();
      }
      const closed = await visit({ embeds: [['form', ids.closedForm!]] });
      await closed.tab.getByText('This form is closed.').waitFor();
      t.pass('a closed form says so');
      await closed.close();

      const context = await browser.newContext();
      const tab = await context.newPage();
      tab.on('pageerror', (error) => errors.push(`offline: ${error.message}`));
      const warnings: string[] = [];
      tab.on('console', (message) => { if (message.type() === 'warning') warnings.push(message.text()); });
      // The script loads, then the API stops answering.
      await tab.route(/\/api\//, (route) => route.abort('connectionrefused'));
      await tab.goto(site.page(widget('click_toggle')));
      await tab.waitForLoadState('networkidle');
      t.equal(warnings.length, 1, 'an unreachable server: one warning');
      t.match(warnings[0], /could not reach/);
      await context.close();
    });

    t.test('network errors on send are shown in the form', async (t) => {
      const { tab, close } = await visit(widget('click_toggle', { attributes: 'data-remember="off"' }));
      await tab.locator('.launcher').click();
      await tab.getByRole('radio', { name: '5 of 5 stars' }).check();
      await tab.route(/\/api\//, (route) => route.abort('connectionrefused'));
      await tab.getByRole('button', { name: 'Send' }).click();
      await tab.getByText('Could not reach the server. Please try again.').waitFor();
      t.pass('shown under Send');
      await close();
    });

    t.test('no uncaught error reached any host page', async (t) => {
      t.same(errors, []);
    });
  });
}
