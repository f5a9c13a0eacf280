/**
 * The embed in the visitor's language, in real Chromium: which language a
 * form shows (the tag's data-lang, else a translation matching the page's
 * <html lang> or the browser's languages, else the form's own), every
 * interface string of a form in German for a German visitor, Arabic right to
 * left with the progress bar and buttons mirrored, and one pack per page.
 * Screenshots go to test-artifacts/languages/.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import t from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite, launch, type HostPage } from '../support/embed-site.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = `${ARTIFACTS}languages/`;
const ENGLISH = JSON.parse(readFileSync(new URL('../../src/embed/languages/en.json', import.meta.url), 'utf8')) as Record<string, string | Record<string, string>>;

async function axe(tab: Page): Promise<string[]> {
  if (!(await tab.evaluate('typeof window.axe === "object"'))) await tab.evaluate(AXE);
  const violations = (await tab.evaluate(
    'axe.run(document, { preload: false, resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))',
  )) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

/** Every string the embed shows or names a control by, as a visitor or a screen reader meets it. */
const RENDERED = `(() => {
  const root = document.querySelector('[data-feedback-embed]').shadowRoot;
  const out = [];
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (el.closest('[hidden]') || el.closest('style')) continue;
    const text = n.textContent.replace(/\\u2060/g, '').trim();
    if (text) out.push(text);
  }
  for (const el of root.querySelectorAll('[aria-label],[placeholder]')) {
    if (el.closest('[hidden]')) continue;
    for (const a of ['aria-label', 'placeholder']) if (el.getAttribute(a)) out.push(el.getAttribute(a));
  }
  return out;
})()`;

const QUESTIONS = [
  { id: 'name', type: 'short_text', title: 'Your name', required: true },
  { id: 'plan', type: 'single_choice', title: 'Your plan', required: true, choices: [{ id: 'free', label: 'Free' }, { id: 'pro', label: 'Pro plan' }] },
  { id: 'again', type: 'yes_no', title: 'Would you come again?' },
  { id: 'consent', type: 'consent', title: 'Privacy', text: 'I agree that Acme stores my answers.', required: true },
];
const PAGES = [
  { id: 'you', question_ids: ['name', 'plan'] },
  { id: 'more', question_ids: ['again', 'consent'] },
];
const TRANSLATIONS = {
  de: {
    title: 'Treten Sie der Beta bei',
    thank_you_title: 'Vielen Dank für Ihre Anmeldung',
    thank_you_message: 'Wir melden uns bald.',
    questions: {
      name: { title: 'Ihr Name' },
      plan: { title: 'Ihr Tarif', choices: { free: 'Kostenlos', pro: 'Profi-Tarif' } },
      again: { title: 'Würden Sie wiederkommen?' },
      consent: { title: 'Datenschutz', text: 'Ich bin einverstanden, dass Acme meine Antworten speichert.' },
    },
  },
  fr: { title: 'Rejoignez la bêta', questions: { name: { title: 'Votre nom' } } },
  ar: { title: 'انضم إلى النسخة التجريبية', questions: { name: { title: 'اسمك' }, plan: { title: 'خطتك', choices: { free: 'مجانية', pro: 'احترافية' } } } },
};

if (!CHROMIUM || !(await import('node:fs')).existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('the embed speaks the visitor\'s language', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    let form = '';
    let second = '';
    const site = await embedSite(t, async (make) => {
      form = await make('/api/forms', { title: 'Join the beta', questions: QUESTIONS, pages: PAGES, translations: TRANSLATIONS });
      second = await make('/api/forms', { title: 'Another', questions: [{ id: 'q', type: 'short_text', title: 'Q' }], translations: { de: { title: 'Noch eine' } } });
    });
    const browser: Browser = await launch(t);
    const errors: string[] = [];
    const visit = async (page: HostPage, options: BrowserContextOptions = {}) => {
      const context = await browser.newContext({ viewport: { width: 800, height: 900 }, locale: 'en-US', ...options });
      const tab = await context.newPage();
      tab.on('pageerror', (error) => errors.push(error.message));
      const packs: string[] = [];
      tab.on('request', (request) => { if (request.url().includes('/embed/lang/')) packs.push(new URL(request.url()).pathname); });
      await tab.goto(site.page(page));
      await tab.locator('[data-feedback-embed] section').first().waitFor();
      return { tab, packs, close: () => context.close() };
    };
    const panel = (tab: Page) => tab.evaluate('(() => { const s = document.querySelector("[data-feedback-embed]").shadowRoot.querySelector("section"); return { lang: s.lang, dir: s.dir, direction: getComputedStyle(s).direction, title: s.querySelector("h2").textContent, submit: s.querySelector("button[type=submit]").textContent }; })()') as Promise<{ lang: string; dir: string; direction: string; title: string; submit: string }>;

    t.test('data-lang, then <html lang>, then the browser\'s languages, then the form\'s own', async (t) => {
      const cases: Array<[string, HostPage, BrowserContextOptions, string, string]> = [
        ['data-lang wins over the page and the browser', { embeds: [['form', form]], attributes: 'data-lang="fr"', lang: 'de' }, { locale: 'de-DE' }, 'fr', 'Rejoignez la bêta'],
        ['the page\'s <html lang> wins over the browser', { embeds: [['form', form]], lang: 'de-CH' }, { locale: 'fr-FR' }, 'de', 'Treten Sie der Beta bei'],
        ['the browser\'s languages when the page names none the form has', { embeds: [['form', form]], lang: 'ja' }, { locale: 'de-AT' }, 'de', 'Treten Sie der Beta bei'],
        ['the form\'s own when no language it has is asked for', { embeds: [['form', form]], lang: 'ja' }, { locale: 'ko-KR' }, 'en', 'Join the beta'],
      ];
      for (const [label, page, options, lang, title] of cases) {
        const { tab, close } = await visit(page, options);
        const seen = await panel(tab);
        t.equal(seen.title, title, `${label}: the title`);
        t.equal(primary(seen.lang), lang, `${label}: the language`);
        await close();
      }
    });

    t.test('a German visitor meets no English: every string of the form, its errors and its thank-you', async (t) => {
      const { tab, close } = await visit({ embeds: [['form', form]], lang: 'de' }, { locale: 'de-DE' });
      const seen: string[] = [];
      seen.push(...((await tab.evaluate(RENDERED)) as string[]));
      await tab.locator('[data-feedback-embed] button[type=submit]').click();
      seen.push(...((await tab.evaluate(RENDERED)) as string[]));
      t.ok(seen.includes('Bitte beantworten Sie diese Frage.'), 'the error for a question not answered');
      await tab.screenshot({ path: `${SHOTS}german-errors.png` });
      t.same(await axe(tab), [], 'axe: no serious or critical violation (German, with errors)');
      await tab.locator('[data-feedback-embed] input#q0').fill('Ada');
      await tab.locator('[data-feedback-embed] label:has-text("Profi-Tarif")').click();
      await tab.locator('[data-feedback-embed] button[type=submit]').click();
      await tab.locator('[data-feedback-embed] button:has-text("Zurück")').waitFor();
      await tab.locator('[data-feedback-embed] button[type=submit]').click();
      seen.push(...((await tab.evaluate(RENDERED)) as string[]));
      t.ok(seen.includes('Bitte stimmen Sie zu, um dies zu senden.'), 'the error for consent not given');
      await tab.screenshot({ path: `${SHOTS}german-page-2.png` });
      await tab.locator('[data-feedback-embed] input[type=checkbox]').check();
      await tab.locator('[data-feedback-embed] button[type=submit]').click();
      await tab.locator('[data-feedback-embed] h2:has-text("Vielen Dank für Ihre Anmeldung")').waitFor();
      seen.push(...((await tab.evaluate(RENDERED)) as string[]));
      const unique = [...new Set(seen)];
      t.comment(`rendered: ${unique.join(' | ')}`);
      const english = new Set(Object.values(ENGLISH).flatMap((v) => (typeof v === 'string' ? [v] : Object.values(v))).map((s) => s.replace(/\{\w+\}/g, '').trim()).filter((s) => s.length > 2));
      const leftovers = unique.filter((s) => english.has(s) || /\b(Your|Join|Privacy|agree|Yes|No|Send|Next|Back|Page|Progress|Thank)\b/.test(s));
      t.same(leftovers, [], 'no English string left');
      for (const expected of ['Treten Sie der Beta bei', 'Seite 1 von 2', 'Ihr Name', 'Kostenlos', 'Weiter', 'Fortschritt', 'Seite 2 von 2', 'Ja', 'Nein', 'Zurück', 'Senden', 'Datenschutz', 'Ich bin einverstanden, dass Acme meine Antworten speichert.', 'Vielen Dank für Ihre Anmeldung']) {
        t.ok(unique.includes(expected), `shows ${expected}`);
      }
      const stored = (await (await fetch(`${site.api}/api/forms/${form}/responses`, { headers: { authorization: `Bearer ${site.apiKey}` } })).json()) as any;
      t.match(stored.responses[0], { language: 'de', consent_record: { consent_given: true, consent_text: 'Ich bin einverstanden, dass Acme meine Antworten speichert.' } }, 'the response records German and the German consent text');
      await close();
    });

    t.test('Arabic reads right to left: the progress bar fills from the right, Back sits right of Next', async (t) => {
      const { tab, close } = await visit({ embeds: [['form', form]], attributes: 'data-lang="ar"', lang: 'en' });
      const seen = await panel(tab);
      t.match(seen, { lang: 'ar', dir: 'rtl', direction: 'rtl', title: 'انضم إلى النسخة التجريبية', submit: 'التالي' });
      await tab.locator('[data-feedback-embed] input#q0').fill('ليلى');
      await tab.locator('[data-feedback-embed] label:has-text("مجانية")').click();
      await tab.locator('[data-feedback-embed] button[type=submit]').click();
      await tab.locator('[data-feedback-embed] button:has-text("رجوع")').waitFor();
      const boxes = (await tab.evaluate(`(() => {
        const root = document.querySelector('[data-feedback-embed]').shadowRoot;
        const box = (el) => { const r = el.getBoundingClientRect(); return { left: r.left, right: r.right, width: r.width }; };
        const bar = root.querySelector('.bar');
        return { bar: box(bar), fill: box(bar.firstChild), back: box(root.querySelector('.nav button:not([type=submit])')), next: box(root.querySelector('.nav button[type=submit]')), label: root.querySelector('input[type=checkbox]').nextSibling.getBoundingClientRect().right, input: root.querySelector('input[type=checkbox]').getBoundingClientRect().right };
      })()`)) as any;
      t.ok(boxes.fill.width > 0 && boxes.fill.width < boxes.bar.width, 'the bar is part filled');
      t.equal(Math.round(boxes.fill.right), Math.round(boxes.bar.right), 'the fill starts at the right');
      t.ok(boxes.fill.left > boxes.bar.left, 'and grows to the left');
      t.ok(boxes.back.left > boxes.next.right - 1, 'Back is on the right, Next on the left');
      t.ok(boxes.input > boxes.label, 'a checkbox sits right of its text');
      await tab.screenshot({ path: `${SHOTS}arabic-page-2.png` });
      t.same(await axe(tab), [], 'axe: no serious or critical violation (Arabic)');
      await close();
    });

    t.test('a pack is fetched once per page, however many embeds need it', async (t) => {
      const { tab, packs, close } = await visit({ embeds: [['form', form], ['form', second]], attributes: 'data-lang="de"' });
      await tab.locator('[data-feedback-embed]').nth(1).locator('section').waitFor();
      const titles = await tab.evaluate('[...document.querySelectorAll("[data-feedback-embed]")].map((h) => h.shadowRoot.querySelector("h2").textContent)');
      t.same(titles, ['Treten Sie der Beta bei', 'Noch eine']);
      t.same(packs, ['/embed/lang/de.json'], 'one request for the German pack');
      await close();
      const english = await visit({ embeds: [['form', form]] });
      t.same(english.packs, [], 'English needs no pack');
      await english.close();
    });

    t.test('no page errors', async (t) => t.same(errors, []));
  });
}

function primary(tag: string): string {
  return tag.split('-')[0]!;
}
