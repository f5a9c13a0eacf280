/**
 * The hosted page in a real browser, at a desktop and a phone width: answers
 * prefilled from its query string, the rest filled in, submitted and read
 * back through the API, though the form's allowed_domains name another site;
 * axe finds nothing serious. And prefill from `data-prefill-*` on a host
 * site's container. Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, Page } from 'playwright-core';
import t from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite, launch } from '../support/embed-site.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

async function axe(tab: Page): Promise<string[]> {
  await tab.addScriptTag({ path: AXE });
  const violations = (await tab.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))')) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('a hosted form: prefilled from its link, submitted, read back', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    let form = '';
    let open = '';
    const site = await embedSite(t, async (make) => {
      const definition = {
        title: 'Join the beta',
        description: 'Tell us who you are and we will write when it opens.',
        questions: [
          { id: 'name', type: 'short_text', title: 'Your name', required: true },
          { id: 'email', type: 'email', title: 'Your email address', required: true },
          { id: 'rating', type: 'star_rating', title: 'How much do you want it?', required: false, starRatingSettings: { maxStars: 5 } },
          { id: 'plan', type: 'single_choice', title: 'Your plan', required: false, choices: [{ id: 'free', label: 'Free' }, { id: 'pro', label: 'Pro' }], display: 'dropdown' },
          { id: 'notes', type: 'long_text', title: 'Anything else?', required: false },
          { id: 'consent', type: 'consent', title: 'Privacy', text: 'I agree that Acme stores my answers.', required: true },
        ],
      };
      form = await make('/api/forms', { ...definition, settings: { allowed_domains: ['shop.example'] } });
      open = await make('/api/forms', definition);
    });
    const browser: Browser = await launch(t);
    const errors: string[] = [];
    const stored = async () =>
      ((await (await fetch(`${site.api}/api/forms/${form}/responses`, { headers: { authorization: `Bearer ${site.apiKey}` } })).json()) as { responses: Array<{ answers: object }> }).responses;

    for (const size of [{ label: 'desktop', width: 1280, height: 900 }, { label: 'phone', width: 390, height: 844 }] as const) {
      await t.test(`${size.label}: prefill, submit, axe`, async (t) => {
        const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, isMobile: size.label === 'phone', hasTouch: size.label === 'phone' });
        t.teardown(() => context.close());
        const tab = await context.newPage();
        tab.on('pageerror', (error) => errors.push(error.message));
        await tab.goto(`${site.api}/f/${form}?name=Ada%20Lovelace&rating=4&plan=pro&consent=yes&unknown=x&email=`);
        t.equal(await tab.title(), 'Join the beta');
        await tab.getByRole('button', { name: 'Send' }).waitFor();
        t.equal(await tab.getByLabel('Your name').inputValue(), 'Ada Lovelace', 'a text answer from the link');
        t.ok(await tab.getByRole('radio', { name: '4 of 5 stars' }).isChecked(), 'a rating from the link');
        t.equal(await tab.getByLabel('Your plan').inputValue(), 'pro', 'a choice from the link');
        t.ok(await tab.getByRole('checkbox').isChecked(), 'consent from the link');
        t.equal(await tab.getByLabel('Your email address').inputValue(), '', 'an empty value leaves the question empty');
        await tab.screenshot({ path: `${ARTIFACTS}hosted-form-${size.label}.png`, fullPage: true });
        await tab.getByLabel('Your name').fill(`Ada (${size.label})`);
        await tab.getByRole('radio', { name: '5 of 5 stars' }).check();
        await tab.getByLabel('Your email address').fill('ada@example.com');
        await tab.getByRole('button', { name: 'Send' }).click();
        await tab.getByRole('heading', { name: 'Thank you!' }).waitFor();
        await tab.screenshot({ path: `${ARTIFACTS}hosted-form-${size.label}-thanks.png` });
        const mine = (await stored()).find((r) => (r.answers as { name?: string }).name === `Ada (${size.label})`);
        t.same(mine?.answers, { name: `Ada (${size.label})`, email: 'ada@example.com', rating: 5, plan: 'pro', consent: true }, 'stored as submitted, though allowed_domains names another site');
        // axe is a script the page's policy would refuse: a browser that sets the policy aside reads the same page.
        const audit = await browser.newContext({ viewport: { width: size.width, height: size.height }, bypassCSP: true });
        t.teardown(() => audit.close());
        const audited = await audit.newPage();
        await audited.goto(`${site.api}/f/${form}?name=Ada`);
        await audited.getByRole('button', { name: 'Send' }).waitFor();
        t.same(await axe(audited), [], 'axe finds nothing serious or critical');
      });
    }

    await t.test('data-prefill-* on a container of a host site', async (t) => {
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
      t.teardown(() => context.close());
      const tab = await context.newPage();
      await tab.goto(site.page({ embeds: [], body: `<main><div data-form="${open}" data-prefill-name="Grace" data-prefill-plan="free" data-prefill-rating="9"></div><script src="{api}/embed.js" async></script></main>` }) + '?name=Ignored');
      await tab.getByRole('button', { name: 'Send' }).waitFor();
      t.equal(await tab.getByLabel('Your name').inputValue(), 'Grace', 'the attribute, not the host page query');
      t.equal(await tab.getByLabel('Your plan').inputValue(), 'free');
      t.equal(await tab.getByRole('radio', { checked: true }).count(), 0, 'a value no control takes is left out');
    });
    t.same(errors, [], 'no script errors');
  });
}
