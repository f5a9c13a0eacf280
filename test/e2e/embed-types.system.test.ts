/**
 * A form with one question of every type, embedded on another origin and
 * filled by keyboard alone at a desktop and a phone size: what the API then
 * lists equals what was meant, hidden fields come from the host page's
 * address and the tag's attributes, and the visitor lands on the redirect
 * with its placeholders filled in. axe finds nothing serious; screenshots
 * go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import t from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite, launch } from '../support/embed-site.js';
import { EVERY_TYPE, SENT, STORED } from '../support/every-type.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const REDIRECT = 'https://redirect.example/done?name={{name}}&src={{utm_source}}&extras={{extras}}&u={{user_id}}&none={{story_x}}';

async function axe(tab: Page): Promise<string[]> {
  await tab.addScriptTag({ path: AXE });
  const violations = (await tab.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))')) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

/** Fills the form as SENT says, with the keyboard only (focus moves as Tab would take it there). */
async function fillByKeyboard(tab: Page): Promise<void> {
  const embed = tab.locator('[data-feedback-embed]');
  const key = async (times: number, name: string) => {
    for (let i = 0; i < times; i++) await tab.keyboard.press(name);
  };
  const type = async (label: string, text: string) => {
    await embed.getByLabel(label).focus();
    await tab.keyboard.type(text);
  };
  await type('Your name', SENT.name);
  await type('Tell us about it', SENT.story);
  await type('Email', SENT.email);
  await type('Phone', SENT.phone);
  await type('Your website', SENT.site);
  await type('Guests', String(SENT.guests));
  await type('Arrival', '12242026');
  await embed.getByRole('radio', { name: 'Single', exact: true }).focus();
  await key(1, 'ArrowDown');
  await embed.getByLabel('Floor').focus();
  await key(2, 'ArrowDown');
  for (const extra of ['Breakfast', 'Late']) {
    await embed.getByRole('checkbox', { name: extra }).focus();
    await key(1, 'Space');
  }
  await embed.getByRole('radio', { name: '1 of 5 stars', exact: true }).focus();
  await key(3, 'ArrowRight');
  await embed.getByRole('radio', { name: '0 out of 10', exact: true }).focus();
  await key(9, 'ArrowRight');
  await embed.getByRole('radio', { name: '1 of 7, Noisy', exact: true }).focus();
  await key(5, 'ArrowRight');
  await embed.getByRole('radio', { name: 'Yes', exact: true }).focus();
  await key(1, 'Space');
  await embed.getByRole('button', { name: 'Move Quiet up' }).focus();
  await key(1, 'Enter');
  await key(1, 'Enter');
  await embed.getByRole('button', { name: 'Move Location up' }).focus();
  await key(1, 'Enter');
  await embed.getByRole('group', { name: 'Staff' }).getByRole('radio', { name: 'Poor', exact: true }).focus();
  await key(2, 'ArrowRight');
  await embed.getByRole('group', { name: 'Food' }).getByRole('radio', { name: 'Poor', exact: true }).focus();
  await key(1, 'ArrowRight');
  await embed.getByLabel('How bad was the worst problem?').focus();
  await key(1, 'ArrowDown');
  await embed.getByRole('checkbox', { name: /I agree that Acme/ }).focus();
  await key(1, 'Space');
}

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('a form of every type, filled by keyboard on another site, at 1280 and 390 px', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    let form = '';
    const site = await embedSite(t, async (make) => {
      form = await make('/api/forms', { title: 'Your stay', questions: EVERY_TYPE, hidden_fields: ['utm_source', 'user_id'], redirect_url: REDIRECT });
    });
    const browser = await launch(t);
    const errors: string[] = [];
    for (const size of [{ label: 'desktop', width: 1280, height: 900 }, { label: 'phone', width: 390, height: 844 }]) {
      const context = await browser.newContext({ viewport: { width: size.width, height: size.height }, hasTouch: size.label === 'phone', isMobile: size.label === 'phone', locale: 'en-US' });
      const tab = await context.newPage();
      tab.on('pageerror', (error) => errors.push(error.message));
      await tab.route('https://redirect.example/**', (route) => route.fulfill({ status: 200, contentType: 'text/html', body: '<!doctype html><title>Done</title>' }));
      await tab.goto(`${site.page({ embeds: [['form', form]], attributes: 'data-hidden-user_id="u-42"', height: 200 })}?utm_source=ads&user_id=from-the-address`);
      await tab.locator('[data-feedback-embed]').getByLabel('Your name').waitFor();
      await tab.screenshot({ path: `${ARTIFACTS}embed-types-${size.label}-empty.png`, fullPage: true });

      // Send with nothing filled: the errors are at the fields.
      await tab.locator('[data-feedback-embed]').getByRole('button', { name: 'Send' }).focus();
      await tab.keyboard.press('Enter');
      const nameField = tab.locator('[data-feedback-embed]').getByLabel('Your name');
      await tab.waitForFunction("document.querySelector('[data-feedback-embed]').shadowRoot.querySelector('[aria-invalid=true]') !== null");
      t.equal(await nameField.getAttribute('aria-invalid'), 'true', `${size.label}: a required field left empty is marked`);

      await fillByKeyboard(tab);
      const scrollWidth = (await tab.evaluate('document.documentElement.scrollWidth')) as number;
      t.ok(scrollWidth <= size.width, `${size.label}: nothing wider than the viewport (${scrollWidth} px)`);
      t.same(await axe(tab), [], `${size.label}: axe finds nothing serious or critical`);
      await tab.screenshot({ path: `${ARTIFACTS}embed-types-${size.label}-filled.png`, fullPage: true });

      await tab.locator('[data-feedback-embed]').getByRole('button', { name: 'Send' }).focus();
      await tab.keyboard.press('Enter');
      await tab.waitForURL(/^https:\/\/redirect\.example\//);
      t.equal(tab.url(), 'https://redirect.example/done?name=Ann%20Lee&src=ads&extras=breakfast%2Clate&u=u-42&none=', `${size.label}: the redirect with its placeholders filled in`);
      await context.close();
    }
    const reply = await fetch(`${site.api}/api/forms/${form}/responses`, { headers: { authorization: `Bearer ${site.apiKey}` } });
    const { responses } = (await reply.json()) as { responses: Array<{ answers: unknown; hidden: unknown }> };
    t.equal(responses.length, 2);
    for (const response of responses) {
      t.strictSame(response.answers, STORED, 'every answer read back as meant');
      t.strictSame(response.hidden, { utm_source: 'ads', user_id: 'u-42' }, 'hidden fields from the address, the tag attribute winning');
    }
    t.same(errors, [], 'no uncaught error');
  });
}
