/**
 * A three-page form with a jump, two endings and partial responses kept,
 * embedded on another site and filled by keyboard alone, a page at a time
 * and one question at a time, at a desktop and a phone size: Back keeps the
 * answers, focus lands on each new page's heading, the ending the visitor
 * sees is the one the response records, and the response is `partial` after
 * the first page and `complete`, under the same id, once sent. axe finds
 * nothing serious; screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import t from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite, launch } from '../support/embed-site.js';
import { eventually } from '../support/eventually.js';
import { followLoginLink } from '../support/signed-in.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');

const FORM = {
  title: 'Join the beta',
  questions: [
    { id: 'name', type: 'short_text', title: 'Your name', required: true },
    { id: 'role', type: 'single_choice', title: 'Role', required: true, choices: [{ id: 'dev', label: 'Developer' }, { id: 'des', label: 'Designer' }] },
    { id: 'language', type: 'short_text', title: 'Favourite language', required: false, show_if: { question: 'role', op: 'equals', value: 'dev' } },
    { id: 'tool', type: 'short_text', title: 'Design tool', required: true },
    { id: 'fan', type: 'yes_no', title: 'Would you recommend us?', required: true },
  ],
  pages: [
    { id: 'about', title: 'About you', question_ids: ['name', 'role', 'language'] },
    { id: 'design', title: 'Design', question_ids: ['tool'] },
    { id: 'verdict', title: 'Your verdict', question_ids: ['fan'] },
  ],
  logic: [
    { page: 'about', if: { question: 'role', op: 'equals', value: 'dev' }, go_to: 'verdict' },
    { page: 'verdict', if: { question: 'fan', op: 'equals', value: true }, go_to: 'happy' },
  ],
  endings: [{ id: 'happy', title: 'Glad you like it', message: 'We will be in touch.' }],
  thank_you_title: 'Thanks anyway',
  thank_you_message: 'We read every answer.',
  settings: { keep_partial: true },
};

async function axe(tab: Page): Promise<string[]> {
  if (!(await tab.evaluate('typeof axe !== "undefined"'))) await tab.addScriptTag({ path: AXE });
  const violations = (await tab.evaluate('axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))')) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

/** What has focus inside the embed's shadow root, as text. */
const focused = (tab: Page) => tab.evaluate('(() => { const a = document.querySelector("[data-feedback-embed]").shadowRoot.activeElement; return a ? a.tagName + ":" + (a.textContent || a.getAttribute("aria-label") || a.value || "") : ""; })()') as Promise<string>;

interface Record {
  id: string;
  status: string;
  last_page: string | null;
  ending: string | null;
  answers: { [id: string]: unknown };
}

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('a three-page form with a jump, by keyboard, in both presentations at 1280 and 390 px', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const forms: { [presentation: string]: string } = {};
    let accountId = '';
    const site = await embedSite(t, async (make, context) => {
      accountId = context.accountId;
      for (const presentation of ['all', 'one_by_one']) forms[presentation] = await make('/api/forms', { ...FORM, presentation });
    });
    const browser = await launch(t);
    const errors: string[] = [];
    const list = async (form: string, status: string): Promise<Record[]> => {
      const reply = await fetch(`${site.api}/api/forms/${form}/responses?status=${status}`, { headers: { authorization: `Bearer ${site.apiKey}` } });
      return ((await reply.json()) as { responses: Record[] }).responses;
    };
    const runs = [
      // A developer jumps from the first page to the last and is glad; a designer sees every page and is not.
      { presentation: 'all', size: 'desktop', width: 1280, height: 900, role: 'dev', fan: true },
      { presentation: 'all', size: 'phone', width: 390, height: 844, role: 'des', fan: false },
      { presentation: 'one_by_one', size: 'desktop', width: 1280, height: 900, role: 'dev', fan: true },
      { presentation: 'one_by_one', size: 'phone', width: 390, height: 844, role: 'des', fan: false },
    ];
    for (const run of runs) {
      const label = `${run.presentation} ${run.size}`;
      const shot = (name: string) => tab.screenshot({ path: `${ARTIFACTS}embed-logic-${run.presentation}-${run.size}-${name}.png`, fullPage: true });
      const form = forms[run.presentation]!;
      const before = (await list(form, 'all')).length;
      const context = await browser.newContext({ viewport: { width: run.width, height: run.height }, hasTouch: run.size === 'phone', isMobile: run.size === 'phone', locale: 'en-US' });
      const tab = await context.newPage();
      tab.on('pageerror', (error) => errors.push(error.message));
      await tab.goto(site.page({ embeds: [['form', form]], height: 200 }));
      const embed = tab.locator('[data-feedback-embed]');
      await embed.getByLabel('Your name').waitFor();
      t.equal(await embed.getByRole('progressbar').getAttribute('aria-valuenow'), '0', `${label}: the progress bar starts at nothing`);
      t.same(await axe(tab), [], `${label}: axe finds nothing serious on the first page`);
      await shot('1-first');

      // Page one: a name, and the role, by keyboard alone.
      await embed.getByLabel('Your name').focus();
      await tab.keyboard.type('Ann');
      if (run.presentation === 'all') {
        await tab.keyboard.press('Tab');
        if (run.role === 'des') await tab.keyboard.press('ArrowDown');
        else await tab.keyboard.press('Space');
        t.equal(await embed.getByLabel('Favourite language').isVisible(), run.role === 'dev', `${label}: the question shown only to developers follows the role at once`);
      } else {
        await tab.keyboard.press('Enter');
        t.match(await focused(tab), /^INPUT:/, `${label}: Enter goes on to the next question, its control focused`);
        t.equal(await embed.getByLabel('Your name').isVisible(), false, `${label}: one question at a time`);
        await tab.keyboard.press(run.role === 'dev' ? 'a' : 'b');
        t.ok(await embed.getByRole('radio', { name: run.role === 'dev' ? 'Developer' : 'Designer' }).isChecked(), `${label}: the choice's letter picks it`);
      }
      await shot('2-role');
      await tab.keyboard.press('Enter');
      if (run.presentation === 'one_by_one' && run.role === 'dev') {
        // The developer's extra question comes next, on the same page.
        await embed.getByLabel('Favourite language').waitFor();
        await tab.keyboard.type('TypeScript');
        await tab.keyboard.press('Enter');
      }
      const next = run.role === 'dev' ? 'Your verdict' : 'Design';
      await embed.getByRole('heading', { name: next }).waitFor();
      t.equal(await focused(tab), `H3:${next}`, `${label}: focus moves to the new page's heading`);
      t.match(await tab.evaluate('document.querySelector("[data-feedback-embed]").shadowRoot.querySelector("[aria-live]").textContent'), next, `${label}: the page change is announced`);

      // The first page is kept as a partial response as the visitor leaves it.
      let partial: Record | undefined;
      t.ok(await eventually(async () => {
        partial = (await list(form, 'partial')).find((r) => r.answers.name === 'Ann' && (r.status === 'partial'));
        return partial !== undefined && (await list(form, 'all')).length === before + 1;
      }), `${label}: the first page is kept as a partial response`);
      t.equal(partial?.last_page, 'about', `${label}: its last page is the first`);

      // Back keeps the answers; on again.
      await embed.getByRole('button', { name: 'Back' }).focus();
      await tab.keyboard.press('Enter');
      await embed.getByRole('heading', { name: 'About you' }).waitFor();
      if (run.presentation === 'all') t.equal(await embed.getByLabel('Your name').inputValue(), 'Ann', `${label}: Back keeps the name`);
      if (run.presentation === 'one_by_one' && run.role === 'dev') t.equal(await embed.getByLabel('Favourite language').inputValue(), 'TypeScript', `${label}: Back returns to the page's last question, its answer kept`);
      else t.ok(await embed.getByRole('radio', { name: run.role === 'dev' ? 'Developer' : 'Designer' }).isChecked(), `${label}: Back keeps the role`);
      await shot('3-back');
      await tab.keyboard.press('Enter');
      await embed.getByRole('heading', { name: next }).waitFor();
      if (run.role === 'des') {
        // The designer's page.
        await tab.keyboard.press('Tab');
        await tab.keyboard.type('Figma');
        await tab.keyboard.press('Enter');
        await embed.getByRole('heading', { name: 'Your verdict' }).waitFor();
      }
      t.match(await embed.getByRole('progressbar').getAttribute('aria-valuenow'), /^6[67]$/, `${label}: the progress bar is two thirds along on the last page`);
      t.same(await axe(tab), [], `${label}: axe finds nothing serious on the last page`);
      await shot('4-last');
      if (run.presentation === 'all') {
        await tab.keyboard.press('Tab');
        await tab.keyboard.press(run.fan ? 'Space' : 'ArrowRight');
      } else await tab.keyboard.press(run.fan ? 'y' : 'n');
      t.equal(await embed.getByRole('button', { name: 'Send' }).isVisible(), true, `${label}: the last page sends`);
      await tab.keyboard.press('Enter');
      const ending = run.fan ? 'Glad you like it' : 'Thanks anyway';
      await embed.getByRole('heading', { name: ending }).waitFor();
      t.same(await axe(tab), [], `${label}: axe finds nothing serious on the ending`);
      await shot('5-ending');

      const all = await list(form, 'all');
      t.equal(all.length, before + 1, `${label}: one response for the visit`);
      // Lists are newest first.
      const done = all[0];
      t.equal(done?.id, partial?.id, `${label}: the submission completes the partial response, under its id`);
      t.equal(done?.status, 'complete', `${label}: and it is complete`);
      t.equal(done?.ending, run.fan ? 'happy' : null, `${label}: the ending recorded is the one shown`);
      const expected: { [id: string]: unknown } = run.role === 'dev' ? { name: 'Ann', role: 'dev', fan: run.fan } : { name: 'Ann', role: 'des', tool: 'Figma', fan: run.fan };
      if (run.presentation === 'one_by_one' && run.role === 'dev') expected.language = 'TypeScript';
      t.strictSame(done?.answers, expected, `${label}: the answers of the path, and only those`);
      await context.close();
    }

    // A visitor who leaves after the first page; the form's page in the dashboard shows where visitors stopped.
    // CSP bypassed for axe, which the test injects into the dashboard's page.
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const tab = await context.newPage();
    const form = forms.all!;
    await tab.goto(site.page({ embeds: [['form', form]], height: 200 }));
    const embed = tab.locator('[data-feedback-embed]');
    await embed.getByLabel('Your name').fill('Bo');
    await embed.getByRole('radio', { name: 'Designer' }).check();
    await embed.getByRole('button', { name: 'Next' }).click();
    t.ok(await eventually(async () => (await list(form, 'partial')).some((r) => r.answers.name === 'Bo')), 'the visitor who left is kept as partial');
    await followLoginLink(tab, { url: site.api, dataDir: site.dir }, accountId);
    await tab.goto(`${site.api}/dashboard/forms/${form}`);
    const dropOff = tab.getByRole('region', { name: /Where visitors stopped/ });
    await dropOff.waitFor();
    t.match(await dropOff.getByRole('row', { name: /About you/ }).textContent(), /About you\s*1\s*33%/, 'one of three stopped after the first page');
    t.match(await dropOff.getByRole('row', { name: /Sent/ }).textContent(), /Sent\s*2\s*67%/, 'two sent the form');
    await tab.locator('section', { has: tab.getByRole('heading', { name: 'Drop-off per page' }) }).screenshot({ path: `${ARTIFACTS}embed-logic-drop-off.png` });
    t.same(await axe(tab), [], 'axe finds nothing serious on the form\'s page');
    // The responses list of a form that keeps pages shows the unfinished ones on request.
    await tab.getByRole('combobox', { name: 'Show' }).selectOption('all');
    await tab.getByRole('button', { name: 'Apply' }).click();
    await tab.getByRole('cell', { name: 'Unfinished after About you' }).waitFor();
    await tab.locator('section', { has: tab.getByRole('heading', { name: 'Responses', exact: true }) }).screenshot({ path: `${ARTIFACTS}embed-logic-responses-all.png` });
    t.same(await axe(tab), [], 'axe finds nothing serious on the list of all responses');
    await context.close();
    t.same(errors, [], 'no uncaught error');
  });
}
