/**
 * A form with one question of every type, filled with the mouse at a
 * desktop and a phone size: embedded on another origin (hidden fields from
 * the host page's address and the tag's attributes), and on its hosted page
 * `/f/:id` (hidden fields and prefill from its own address). Clicks choose
 * every option, the ranking is ordered by dragging; only text is typed and
 * the native pickers (a dropdown, a date) set, which a mouse cannot reach in
 * a headless browser. What the API then lists equals what was meant, the
 * redirect's placeholders are filled in, axe finds nothing serious and
 * screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Locator, Page } from 'playwright-core';
import t from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite, launch } from '../support/embed-site.js';
import { EVERY_TYPE, SENT, STORED } from '../support/every-type.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const REDIRECT = 'https://redirect.example/done?name={{name}}&src={{utm_source}}&extras={{extras}}&u={{user_id}}&none={{story_x}}';
const SIZES = [
  { label: 'desktop', width: 1280, height: 900 },
  { label: 'phone', width: 390, height: 844 },
] as const;

async function axe(tab: Page): Promise<string[]> {
  await tab.addScriptTag({ path: AXE });
  const violations = (await tab.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))')) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

/** Fills the form as SENT says by clicking and dragging; `typed` leaves out the text questions a prefill already answered. */
async function fillByMouse(form: Locator, typed: { name: boolean }): Promise<void> {
  const type = async (label: string, text: string) => {
    await form.getByLabel(label).click();
    await form.getByLabel(label).pressSequentially(text);
  };
  if (typed.name) await type('Your name', SENT.name);
  await type('Tell us about it', SENT.story);
  await type('Email', SENT.email);
  await type('Phone', SENT.phone);
  await type('Your website', SENT.site);
  await type('Guests', String(SENT.guests));
  await form.getByLabel('Arrival').click();
  await form.getByLabel('Arrival').fill(SENT.arrival);
  await form.getByRole('radio', { name: 'Double', exact: true }).click();
  await form.getByLabel('Floor').selectOption('high');
  await form.getByRole('checkbox', { name: 'Breakfast' }).click();
  await form.getByRole('checkbox', { name: 'Late' }).click();
  await form.getByRole('radio', { name: '4 of 5 stars', exact: true }).click();
  await form.getByRole('radio', { name: '9 out of 10', exact: true }).click();
  await form.getByRole('radio', { name: /^6 of 7/ }).click();
  await form.getByRole('radio', { name: 'Yes', exact: true }).click();
  // Price, Location, Quiet → Quiet, Location, Price: Quiet dropped on the first place, then Price on the last.
  const item = (label: string) => form.locator('ol.rank li').filter({ hasText: label });
  await item('Quiet').dragTo(item('Price'));
  await item('Price').dragTo(item('Location'));
  await form.getByRole('group', { name: 'Staff' }).getByRole('radio', { name: 'Great', exact: true }).click();
  await form.getByRole('group', { name: 'Food' }).getByRole('radio', { name: 'Fine', exact: true }).click();
  await form.getByLabel('How bad was the worst problem?').selectOption('low');
  await form.getByRole('checkbox', { name: /I agree that Acme/ }).click();
}

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('a form of every type, filled with the mouse, embedded on another site and on its hosted page', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    let form = '';
    const site = await embedSite(t, async (make) => {
      form = await make('/api/forms', { title: 'Your stay', questions: EVERY_TYPE, hidden_fields: ['utm_source', 'user_id'], redirect_url: REDIRECT });
    });
    const browser = await launch(t);
    const errors: string[] = [];
    const listed = async () =>
      ((await (await fetch(`${site.api}/api/forms/${form}/responses`, { headers: { authorization: `Bearer ${site.apiKey}` } })).json()) as { responses: Array<{ answers: unknown; hidden: unknown }> }).responses;

    for (const size of SIZES) {
      await t.test(`embedded, ${size.label}`, async (t) => {
        const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, locale: 'en-US' });
        t.teardown(() => context.close());
        const tab = await context.newPage();
        tab.on('pageerror', (error) => errors.push(error.message));
        await tab.route('https://redirect.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Done</title>' }));
        await tab.goto(`${site.page({ embeds: [['form', form]], attributes: 'data-hidden-user_id="u-42"', height: 200 })}?utm_source=ads&user_id=from-the-address`);
        const embed = tab.locator('[data-feedback-embed]');
        await embed.getByLabel('Your name').waitFor();
        await fillByMouse(embed, { name: true });
        t.equal(await embed.locator('ol.rank li').evaluateAll((items) => items.map((li) => li.querySelector('.grow')!.textContent)).then((x) => x.join(',')), 'Quiet,Location,Price', 'the ranking in the order dragged');
        t.ok(((await tab.evaluate('document.documentElement.scrollWidth')) as number) <= size.width, 'nothing wider than the viewport');
        t.same(await axe(tab), [], 'axe finds nothing serious or critical');
        await tab.screenshot({ path: `${ARTIFACTS}embed-types-mouse-${size.label}.png`, fullPage: true });
        await embed.getByRole('button', { name: 'Send' }).click();
        await tab.waitForURL(/^https:\/\/redirect\.example\//);
        t.equal(tab.url(), 'https://redirect.example/done?name=Ann%20Lee&src=ads&extras=breakfast%2Clate&u=u-42&none=', 'the redirect with its placeholders filled in');
      });
    }

    for (const size of SIZES) {
      await t.test(`hosted page, ${size.label}`, async (t) => {
        const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, locale: 'en-US' });
        t.teardown(() => context.close());
        const tab = await context.newPage();
        tab.on('pageerror', (error) => errors.push(error.message));
        await tab.route('https://redirect.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Done</title>' }));
        await tab.goto(`${site.api}/f/${form}?name=Ann%20Lee&utm_source=mail&user_id=u-${size.label}`);
        await tab.getByRole('button', { name: 'Send' }).waitFor();
        t.equal(await tab.getByLabel('Your name').inputValue(), SENT.name, 'prefilled from the link');
        await fillByMouse(tab.locator('body'), { name: false });
        t.ok(((await tab.evaluate('document.documentElement.scrollWidth')) as number) <= size.width, 'nothing wider than the viewport');
        await tab.screenshot({ path: `${ARTIFACTS}hosted-every-type-mouse-${size.label}.png`, fullPage: true });
        await tab.getByRole('button', { name: 'Send' }).click();
        await tab.waitForURL(/^https:\/\/redirect\.example\//);
        t.equal(tab.url(), `https://redirect.example/done?name=Ann%20Lee&src=mail&extras=breakfast%2Clate&u=u-${size.label}&none=`, 'the redirect with its placeholders filled in');
        // axe is a script the page's policy would refuse: a browser that sets the policy aside reads the same page.
        const audit = await browser.newContext({ viewport: { width: size.width, height: size.height }, bypassCSP: true });
        t.teardown(() => audit.close());
        const audited = await audit.newPage();
        await audited.goto(`${site.api}/f/${form}?name=Ann`);
        await audited.getByRole('button', { name: 'Send' }).waitFor();
        t.same(await axe(audited), [], 'axe finds nothing serious or critical');
      });
    }

    const responses = await listed();
    t.equal(responses.length, 4, 'four responses');
    t.strictSame(
      responses.map((r) => r.answers),
      [STORED, STORED, STORED, STORED],
      'every answer read back as meant',
    );
    t.strictSame(
      responses.map((r) => r.hidden).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b))),
      [{ utm_source: 'ads', user_id: 'u-42' }, { utm_source: 'ads', user_id: 'u-42' }, { utm_source: 'mail', user_id: 'u-desktop' }, { utm_source: 'mail', user_id: 'u-phone' }],
      "hidden fields: the tag's attribute winning over the host's address; the hosted page's from its own",
    );
    t.same(errors, [], 'no uncaught error');
  });
}
