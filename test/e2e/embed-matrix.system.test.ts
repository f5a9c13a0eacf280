/**
 * Every embed kind in a real browser on another origin, at a desktop and a
 * phone size, in light and dark: it fits the viewport, hostile host CSS
 * changes nothing inside it, axe finds nothing serious, and screenshots of
 * each go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import t, { type Test } from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite, launch, type Site } from '../support/embed-site.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

/** What the issue calls hostile: host CSS that tries to reach everything. */
const HOSTILE = '* { all: revert; font-size: 40px; color: red; } div { font-size: 20px; line-height: 2; } button, input { padding: 30px; border: 5px solid lime; }';

const TALL = Array.from({ length: 8 }, (_, i) =>
  i % 2 === 0
    ? { id: `r${i}`, type: 'star_rating', title: `Question ${i + 1}: how would you rate this part?`, required: true, starRatingSettings: { maxStars: 5 } }
    : { id: `t${i}`, type: 'long_text', title: `Question ${i + 1}: what would you change?`, required: false },
);

/** The embeds' shadow roots, every element in them: its box and the computed styles that show. */
const SNAPSHOT = `(() => {
  const props = ['font-family', 'font-size', 'font-weight', 'line-height', 'color', 'background-color', 'padding', 'margin', 'border', 'display', 'letter-spacing', 'text-transform'];
  return [...document.querySelectorAll('[data-feedback-embed]')].flatMap((host) =>
    [...host.shadowRoot.querySelectorAll('*')].filter((el) => el.tagName !== 'STYLE').map((el) => {
      const style = getComputedStyle(el);
      const box = el.getBoundingClientRect();
      return [el.tagName, el.className && el.className.baseVal === undefined ? el.className : '', Math.round(box.width), Math.round(box.height), ...props.map((p) => style.getPropertyValue(p))].join('|');
    }));
})()`;

/** The first visible panel (floating or inline) in the viewport's terms. */
const PANEL = `(() => {
  for (const host of document.querySelectorAll('[data-feedback-embed]')) {
    const panel = host.shadowRoot.querySelector('.panel:not([hidden])');
    if (!panel) continue;
    const box = panel.getBoundingClientRect();
    const body = panel.querySelector('.body');
    const close = panel.querySelector('.close')?.getBoundingClientRect();
    return { top: box.top, left: box.left, bottom: box.bottom, right: box.right, scrolls: body.scrollHeight > body.clientHeight, close: close && { top: close.top, width: close.width, height: close.height },
      viewport: { width: innerWidth, height: innerHeight }, pageWidth: document.documentElement.scrollWidth };
  }
  return null;
})()`;

/** Sizes a visitor's finger and eyes meet: every control's clickable box, and the text inputs' font size. */
const TARGETS = `(() => [...document.querySelectorAll('[data-feedback-embed]')].flatMap((host) =>
  [...host.shadowRoot.querySelectorAll('button, select, textarea, input:not([type=radio]):not([type=checkbox]):not([tabindex="-1"]), .scale label, label.check')]
    .filter((el) => el.getClientRects().length > 0)
    .map((el) => { const b = el.getBoundingClientRect(); return { what: el.tagName + '.' + el.className, width: Math.round(b.width), height: Math.round(b.height), font: getComputedStyle(el).fontSize }; })))()`;

/** The box around every visible part of the embeds (panel, launcher), 16 px wider on each side. */
const EMBED_BOX = `(() => {
  const boxes = [...document.querySelectorAll('[data-feedback-embed]')].flatMap((host) => [...host.shadowRoot.querySelectorAll('.panel:not([hidden]), .launcher')].map((el) => el.getBoundingClientRect()));
  const x = Math.max(0, Math.min(...boxes.map((b) => b.left)) - 16);
  const y = Math.max(0, Math.min(...boxes.map((b) => b.top)) - 16);
  return { x, y, width: Math.min(innerWidth, Math.max(...boxes.map((b) => b.right)) + 16) - x, height: Math.min(innerHeight, Math.max(...boxes.map((b) => b.bottom)) + 16) - y };
})()`;

/** Required asterisks that start a line of their own: at their label's left edge. */
const LONE_ASTERISKS = `[...document.querySelectorAll('[data-feedback-embed]')].flatMap((host) =>
  [...host.shadowRoot.querySelectorAll('.req')].filter((req) => req.getClientRects().length > 0 && req.getBoundingClientRect().left - req.parentElement.getBoundingClientRect().left < 2).map((req) => req.parentElement.textContent))`;

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`, () => {});
} else {
  t.test('the embed matrix: kinds × sizes × colour schemes', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const ids: Record<string, string> = {};
    const site: Site = await embedSite(t, async (make) => {
      const theme = { primaryColor: '#0f766e', mode: 'auto' };
      for (const type of ['feedback', 'nps', 'contact', 'bug_report'] as const) {
        ids[type] = await make('/api/widgets', { widget_type: type, title: `A ${type.replace('_', ' ')} widget`, theme, trigger_config: { text: 'Feedback' } });
      }
      // An owner's own dark colours, text colour left to the embed, and a light primary colour under white-on-primary text.
      ids.owner_dark = await make('/api/widgets', { widget_type: 'feedback', title: 'Dark by the owner', theme: { backgroundColor: '#1e1b4b', primaryColor: '#fbbf24' }, trigger_config: { position: 'bottom-left' } });
      ids.tall = await make('/api/widgets', { widget_type: 'custom', title: 'Eight questions', questions: TALL, theme, trigger_config: { position: 'top-left', icon: 'star' } });
      ids.form = await make('/api/forms', {
        title: 'Join the beta',
        description: 'Two minutes, and we will write back.',
        theme,
        questions: [
          { id: 'name', type: 'short_text', title: 'Your name', required: true },
          { id: 'email', type: 'email', title: 'Your email address', required: true },
          { id: 'consent', type: 'consent', title: 'Privacy', text: 'I agree that Acme stores my answers to reply to me.', required: true },
        ],
      });
      ids.poll = await make('/api/polls', { question: 'Which plan do you use?', options: [{ text: 'Free' }, { text: 'Pro' }, { text: 'Business' }] });
    });
    const browser: Browser = await launch(t);
    const errors: string[] = [];

    const kinds = [
      ...['feedback', 'nps', 'contact', 'bug_report', 'owner_dark', 'tall'].map((name) => ({ name, kind: 'widget' })),
      { name: 'form', kind: 'form' },
      { name: 'poll', kind: 'poll' },
    ];
    const sizes = [
      { label: 'desktop', width: 1280, height: 800 },
      { label: 'phone', width: 390, height: 844 },
    ];

    /** Shows the embed as a visitor would see it: widgets opened by a click on their launcher. */
    async function show(tab: Page, kind: string) {
      if (kind === 'widget') {
        await tab.locator('.launcher').click();
        await tab.getByRole('dialog').waitFor();
      } else {
        await tab.locator(kind === 'poll' ? 'text=Which plan do you use?' : 'text=Join the beta').waitFor();
      }
    }

    async function axe(tab: Page): Promise<string[]> {
      await tab.addScriptTag({ path: AXE });
      const violations = (await tab.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))')) as Array<{ id: string; impact: string; nodes: string[] }>;
      return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
    }

    /** One visitor's browser at one size and scheme, through every kind in turn. */
    async function visitAll(t: Test, size: (typeof sizes)[number], scheme: 'light' | 'dark') {
      const label = `${size.label} ${scheme}`;
      const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, colorScheme: scheme, hasTouch: size.label === 'phone', isMobile: size.label === 'phone' });
      t.teardown(() => context.close());
      const tab = await context.newPage();
      tab.on('pageerror', (error) => errors.push(`${tab.url()}: ${error.message}`));
      for (const { name, kind } of kinds) {
        await tab.goto(site.page({ embeds: [[kind, ids[name]!]], attributes: `data-remember="off"${kind === 'poll' ? ' data-mode="auto"' : ''}` }));
        await show(tab, kind);
        const panel = (await tab.evaluate(PANEL)) as any;
        t.ok(panel.top >= 0 && panel.left >= 0 && panel.right <= panel.viewport.width, `${label} ${name}: the panel lies inside the viewport's width${kind === 'widget' ? ' and below its top' : ''}`);
        if (kind === 'widget') t.ok(panel.bottom <= panel.viewport.height, `${label} ${name}: and above its bottom`);
        t.ok(panel.pageWidth <= panel.viewport.width, `${label} ${name}: nothing overflows the page sideways`);
        if (panel.close) t.ok(panel.close.top >= 0 && panel.close.width >= 44 && panel.close.height >= 44, `${label} ${name}: its close button is on screen and 44×44`);
        if (name === 'tall') t.ok(panel.scrolls, `${label}: the tall panel scrolls inside itself`);
        const small = ((await tab.evaluate(TARGETS)) as Array<{ what: string; width: number; height: number; font: string }>).filter(
          (x) => x.height < 44 || x.width < 24 || (/INPUT|TEXTAREA|SELECT/.test(x.what) && x.font !== '16px'),
        );
        t.same(small, [], `${label} ${name}: every control at least 44 px high (24 wide), text inputs at 16 px`);
        t.same(await tab.evaluate(LONE_ASTERISKS), [], `${label} ${name}: no required asterisk wraps onto a line of its own`);
        t.same(await axe(tab), [], `${label} ${name}: axe finds nothing serious or critical`);
        await tab.screenshot({ path: `${ARTIFACTS}matrix-${name}-${size.label}-${scheme}.png` });
        if (['feedback', 'form', 'poll'].includes(name) && size.label === 'desktop') {
          // The pictures in the README: the embed alone, with a margin of the page around it.
          const clip = (await tab.evaluate(EMBED_BOX)) as { x: number; y: number; width: number; height: number };
          await tab.screenshot({ path: `${ARTIFACTS}readme-${kind}-${scheme}.png`, clip });
        }
      }
    }

    // The four browsers run side by side: the matrix is most of this file's time.
    t.test('1280×800 and 390×844, light and dark', async (t) => {
      await Promise.all(sizes.flatMap((size) => (['light', 'dark'] as const).map((scheme) => visitAll(t, size, scheme))));
    });

    t.test('hostile host CSS changes nothing inside the embed', async (t) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
      t.teardown(() => context.close());
      const tab = await context.newPage();
      for (const { name, kind } of kinds) {
        const snapshots: string[][] = [];
        for (const css of ['', HOSTILE]) {
          await tab.goto(site.page({ embeds: [[kind, ids[name]!]], attributes: 'data-remember="off"', css }));
          await show(tab, kind);
          snapshots.push((await tab.evaluate(SNAPSHOT)) as string[]);
        }
        t.ok(snapshots[0]!.length > 10, `${name}: ${snapshots[0]!.length} elements compared`);
        t.same(snapshots[1], snapshots[0], `${name}: the same sizes, fonts, colours and spacing`);
        if (name === 'tall' || name === 'form') await tab.screenshot({ path: `${ARTIFACTS}matrix-${name}-hostile-css.png` });
      }
    });

    t.test('a landscape phone: even the default NPS widget fits, title and close reachable', async (t) => {
      const context = await browser.newContext({ viewport: { width: 844, height: 390 }, hasTouch: true, isMobile: true });
      t.teardown(() => context.close());
      const tab = await context.newPage();
      for (const name of ['nps', 'tall']) {
        await tab.goto(site.page({ embeds: [['widget', ids[name]!]], attributes: 'data-remember="off"' }));
        await show(tab, 'widget');
        const panel = (await tab.evaluate(PANEL)) as any;
        t.ok(panel.top >= 0 && panel.bottom <= 390, `${name}: the panel's box lies inside the 390 px height`);
        t.ok(panel.close.top >= 0, `${name}: the close button is on screen`);
        await tab.screenshot({ path: `${ARTIFACTS}matrix-${name}-landscape-phone.png` });
      }
    });

    t.test('no uncaught error reached any host page', async (t) => {
      t.same(errors, []);
    });
  });
}
