/**
 * An embed must not move the page it sits on. On an article (a paragraph,
 * the embed, six more paragraphs), at a desktop and a phone size, the test
 * sums the page's `layout-shift` entries that came without recent input, as
 * Core Web Vitals count them, once the embed has drawn: with the snippet the
 * dashboard gives (a container holding the space the service worked out),
 * at most 0.02 for inline forms, a poll, a floating widget and a hosted page.
 * The script-only tag's figure is printed beside it for comparison.
 * Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import t from 'tap';
import { signIn } from '../dashboard/support.js';
import { ARTIFACTS, CHROMIUM, embedSite, launch } from '../support/embed-site.js';

/** The dashboard's own function for the snippet it gives (a browser module, without types). */
const { snippetOf } = (await import('../../src/dashboard/assets/snippet.js' as string)) as { snippetOf(origin: string, kind: string, id: string, minHeight?: string): string };

const BUDGET = 0.02;
const SIZES = [
  { label: 'desktop', width: 1280, height: 900 },
  { label: 'phone', width: 390, height: 844 },
] as const;

const PARAGRAPH =
  'The embed sits in the middle of an article, as owners paste it: between paragraphs a reader is reading. When it draws, whatever follows it must stay where the reader saw it, or the reader loses their place and the page its standing with search engines.';
const ARTICLE_CSS = 'body{margin:0;font:18px/1.6 Georgia,serif;color:#1f2937}article{max-width:680px;margin:0 auto;padding:0 16px}h1{font-size:28px;line-height:1.2}';
const article = (embed: string) => `<article><h1>An article</h1><p>${PARAGRAPH}</p>${embed}${Array.from({ length: 6 }, (_, i) => `<p>${i + 1}. ${PARAGRAPH}</p>`).join('')}</article>`;

/** Collects layout shifts from the first paint on (buffered), as CLS counts them: without recent input. */
const OBSERVE = `window.__shifts = []; new PerformanceObserver((list) => { for (const e of list.getEntries()) if (!e.hadRecentInput) window.__shifts.push(e.value); }).observe({ type: 'layout-shift', buffered: true });`;
/** Resolves once the page has painted at least once. */
const PAINTED = "new Promise((done) => { const seen = () => performance.getEntriesByType('paint').length > 0; if (seen()) return done(); new PerformanceObserver((_l, o) => { o.disconnect(); done(); }).observe({ type: 'paint', buffered: true }); })";
/** After two frames every shift of what has drawn so far is reported. */
const SETTLED = 'new Promise((done) => requestAnimationFrame(() => requestAnimationFrame(() => done(window.__shifts.reduce((a, b) => a + b, 0)))))';

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('embeds do not move the page they sit on', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const ids: Record<string, string> = {};
    const snippets: Record<string, string> = {};
    let base = '';
    const site = await embedSite(t, async (make, { app, services, accountId }) => {
      ids.form = await make('/api/forms', {
        title: 'Join the beta',
        questions: [
          { id: 'name', type: 'short_text', title: 'Your name', required: true },
          { id: 'email', type: 'email', title: 'Your email address', required: false },
          { id: 'consent', type: 'consent', title: 'Privacy', text: 'I agree that Acme stores my answers to tell me when the beta opens.', required: true },
        ],
      });
      ids.longForm = await make('/api/forms', {
        title: 'Tell us how the onboarding went, from the first email to your first published form',
        description: 'Five questions, about two minutes. Your answers go to the product team only and help us decide what to fix first.',
        questions: [
          { id: 'score', type: 'nps', title: 'How likely are you to recommend us to a friend or colleague?', required: true },
          { id: 'stars', type: 'star_rating', title: 'How easy was it to set up the embed on your site?', required: false, starRatingSettings: { maxStars: 5 } },
          { id: 'role', type: 'single_choice', title: 'What is your role?', choices: [{ id: 'dev', label: 'Developer' }, { id: 'pm', label: 'Product manager' }, { id: 'other', label: 'Something else' }] },
          { id: 'what', type: 'long_text', title: 'What almost made you give up, if anything?', required: false },
          { id: 'contact', type: 'email', title: 'May we write to you about it? Leave your address if so.', required: false },
        ],
      });
      ids.poll = await make('/api/polls', { question: 'Which plan do you use today?', options: [{ text: 'Free' }, { text: 'Pro, paid monthly' }, { text: 'Business, paid yearly with an invoice' }] });
      ids.widget = await make('/api/widgets', { widget_type: 'feedback', title: 'Rate this article', trigger_config: { triggerMode: 'time_delay', timeDelay: 0, text: 'Feedback', showText: true } });
      // The snippets as the dashboard's object page gives them: its share route and snippet function.
      const browser = await signIn(app, services, accountId);
      for (const [name, kind] of [['form', 'form'], ['longForm', 'form'], ['poll', 'poll']] as const) {
        const share = await app.inject({ method: 'GET', url: `/dashboard/api/${kind}s/${ids[name]}/share`, headers: { cookie: browser.cookie } });
        if (share.statusCode !== 200) throw new Error(`no share: ${share.body}`);
        snippets[name] = snippetOf('{api}', kind, ids[name]!, share.json().min_height.css);
      }
      snippets.widget = snippetOf('{api}', 'widget', ids.widget!);
    });
    base = site.api;
    const browser: Browser = await launch(t);
    const errors: string[] = [];

    /** The sum of layout shifts once the embed has drawn. */
    async function shiftOf(url: string, size: (typeof SIZES)[number], drawn: string, shot: string): Promise<number> {
      const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, isMobile: size.label === 'phone', hasTouch: size.label === 'phone' });
      const tab: Page = await context.newPage();
      tab.on('pageerror', (error) => errors.push(`${url}: ${error.message}`));
      await tab.addInitScript(OBSERVE);
      // The token arrives after the page has painted, as on a slow network: a late token moves nothing either.
      await tab.route('**/token', async (route) => {
        await tab.evaluate(PAINTED).catch(() => undefined);
        await route.continue();
      });
      await tab.goto(url);
      await tab.locator(drawn).first().waitFor();
      await tab.waitForLoadState('networkidle');
      const cls = (await tab.evaluate(SETTLED)) as number;
      await tab.screenshot({ path: `${ARTIFACTS}${shot}-${size.label}.png` });
      await context.close();
      return cls;
    }

    const inline = [
      ['form', 'form', 'Send'],
      ['longForm', 'form', 'Send'],
      ['poll', 'poll', 'Vote'],
    ] as const;
    for (const size of SIZES) {
      await t.test(`${size.label} ${size.width}×${size.height}`, async (t) => {
        for (const [name, kind, button] of inline) {
          const drawn = `button:has-text("${button}")`;
          const container = await shiftOf(site.page({ embeds: [], css: ARTICLE_CSS, body: article(snippets[name]!) }), size, drawn, `shift-${name}`);
          const scriptOnly = await shiftOf(
            site.page({ embeds: [], css: ARTICLE_CSS, body: article(`<script src="{api}/embed.js" data-${kind}="${ids[name]}" async></script>`) }),
            size,
            drawn,
            `shift-${name}-script-only`,
          );
          t.comment(`${name}: layout shift ${container.toFixed(4)} with the dashboard's snippet; ${scriptOnly.toFixed(4)} with the script-only tag`);
          t.ok(container <= BUDGET, `${name}: ${container.toFixed(4)} ≤ ${BUDGET} with the dashboard's snippet`);
        }
        const widget = await shiftOf(site.page({ embeds: [], css: ARTICLE_CSS, body: article(snippets.widget!) }), size, '[role=dialog]', 'shift-widget');
        t.comment(`floating widget: layout shift ${widget.toFixed(4)}`);
        t.equal(widget, 0, 'a floating widget, open by itself, moves nothing');
        for (const name of ['form', 'longForm'] as const) {
          const hosted = await shiftOf(`${base}/f/${ids[name]}`, size, 'button:has-text("Send")', `shift-hosted-${name}`);
          t.comment(`hosted page of ${name}: layout shift ${hosted.toFixed(4)}`);
          t.ok(hosted <= BUDGET, `hosted page of ${name}: ${hosted.toFixed(4)} ≤ ${BUDGET}`);
        }
        const hostedPoll = await shiftOf(`${base}/p/${ids.poll}`, size, 'button:has-text("Vote")', 'shift-hosted-poll');
        t.comment(`hosted page of the poll: layout shift ${hostedPoll.toFixed(4)}`);
        t.ok(hostedPoll <= BUDGET, `hosted page of the poll: ${hostedPoll.toFixed(4)} ≤ ${BUDGET}`);
      });
    }
    t.same(errors, [], 'no script errors on any page');
  });
}
