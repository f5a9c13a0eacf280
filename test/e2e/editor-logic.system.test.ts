/**
 * Building a form with pages, a jump, a condition on a question and a second
 * ending in the dashboard's editor, in a real browser: each rule reads back
 * in plain words, the live preview (the real embed) follows, and what is
 * saved is what was built. Screenshots go to test-artifacts/dashboard/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { owner } from '../support/app.js';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { testServices } from '../support/services.js';
import { seriousViolations, serveEditorPage } from '../support/editor-page.js';
import { signedInPage } from '../support/signed-in.js';

const SHOTS = `${ARTIFACTS}dashboard/`;
const PAGE_SCRIPT = `
import { api, setCsrfToken } from '/dashboard/assets/api.js';
import { mountEditor } from '/dashboard/assets/editor.js';
const session = await api('/session');
setCsrfToken(session.csrf_token);
mountEditor(document.getElementById('app'), { kind: 'form', api });
document.body.dataset.mounted = 'yes';
`;


if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('a form with pages, a jump, a condition and an ending, built in the editor', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const services = await testServices(t);
    const app = await buildApp(services);
    const biz = await owner(services);
    serveEditorPage(app, PAGE_SCRIPT);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    t.teardown(async () => { await app.close(); await services.close(); });
    const browser = await launch(t);
    const { tab, errors } = await signedInPage(browser, { app, services }, biz.accountId);
    await tab.goto(`${address}/test-editor`);
    await tab.locator('body[data-mounted="yes"]').waitFor();
    const preview = tab.frameLocator('iframe.editor-frame');

    await tab.getByLabel('Title', { exact: true }).fill('Join the beta');
    const add = async (type: string, title: string) => {
      await tab.getByLabel('New question type').selectOption(type);
      await tab.getByRole('button', { name: 'Add question' }).click();
      await tab.keyboard.type(title);
    };
    await add('short_text', 'Your name');
    await add('single_choice', 'Role');
    await tab.locator('#ed-questions-1-choices-0-label').fill('Developer');
    await tab.locator('#ed-questions-1-choices-1-label').fill('Designer');
    await add('short_text', 'Favourite language');
    await add('short_text', 'Design tool');
    await add('yes_no', 'Would you recommend us?');

    // A condition on a question: shown to developers only.
    await tab.getByLabel('Show only when an earlier answer says so').nth(1).check();
    await tab.getByLabel('Question 3 shows when: question').selectOption('role');
    t.ok(await tab.getByText('Shown only if Role is Developer.').isVisible(), 'the condition reads in plain words');

    // Three pages; questions moved onto them.
    await tab.getByRole('button', { name: 'Split into pages' }).click();
    await tab.getByRole('button', { name: 'Add page' }).click();
    await tab.getByLabel('Page of Design tool').selectOption({ label: 'Page 2' });
    await tab.getByLabel('Page of Would you recommend us?').selectOption({ label: 'Page 3' });
    await tab.getByLabel('Page title').first().fill('About you');

    // An ending, and a jump from the first page.
    await tab.getByRole('button', { name: 'Add ending' }).click();
    await tab.keyboard.press('Control+a');
    await tab.keyboard.type('Welcome aboard');
    await tab.getByRole('button', { name: 'Add a jump after About you' }).click();
    const jump = 'If Role is Developer, go to Page 3.';
    await tab.getByText(jump).waitFor();
    t.pass('the jump reads in plain words');
    await tab.getByLabel('Jump 1: go to').selectOption({ label: 'Ending: Welcome aboard' });
    await tab.getByText('If Role is Developer, go to Welcome aboard.').waitFor();
    await tab.getByLabel('Jump 1: go to').selectOption({ label: 'Page 3' });
    await tab.getByLabel('Presentation').selectOption('one_by_one');

    // The preview follows: the first page, one question at a time.
    await preview.getByRole('heading', { name: 'About you' }).waitFor();
    t.ok(await preview.getByRole('progressbar').isVisible(), 'the preview shows the progress bar');
    t.ok(await preview.getByLabel('Your name').isVisible(), 'and the first question');
    t.equal(await preview.getByRole('radio', { name: 'Developer' }).count(), 0, 'one question at a time');
    await tab.locator('fieldset.editor-section', { hasText: 'Pages and jumps' }).screenshot({ path: `${SHOTS}editor-logic-pages-1280.png` });
    await tab.locator('.editor-preview').screenshot({ path: `${SHOTS}editor-logic-preview-1280.png` });
    t.same(await seriousViolations(tab), [], 'axe: nothing serious or critical on the editor');

    await tab.getByRole('button', { name: 'Create form' }).click();
    await tab.getByRole('button', { name: 'Publish' }).waitFor();
    const listed = (await (await fetch(`${address}/api/forms`, { headers: { authorization: `Bearer ${biz.key}` } })).json()) as { forms: Array<{ id: string }> };
    const stored = (await (await fetch(`${address}/api/forms/${listed.forms[0]!.id}`, { headers: { authorization: `Bearer ${biz.key}` } })).json()) as Record<string, unknown>;
    t.strictSame(stored.pages, [
      { id: 'page_1', title: 'About you', question_ids: ['your_name', 'role', 'favourite_language'] },
      { id: 'page_2', question_ids: ['design_tool'] },
      { id: 'page_3', question_ids: ['would_you_recommend_us'] },
    ], 'the pages as built');
    t.strictSame(stored.logic, [{ page: 'page_1', if: { question: 'role', op: 'equals', value: 'developer' }, go_to: 'page_3' }], 'the jump as built');
    t.strictSame((stored.questions as Array<{ id: string; show_if?: unknown }>)[2]!.show_if, { question: 'role', op: 'equals', value: 'developer' }, 'the condition as built');
    t.match(stored.endings, [{ id: 'ending_1', title: 'Welcome aboard' }], 'the ending as built');
    t.equal(stored.presentation, 'one_by_one');
    t.same(errors, [], 'no uncaught error');
  });
}
