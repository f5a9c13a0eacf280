/**
 * The dashboard's create/edit editor in a real browser, beside the live
 * preview of the real embed. The editor is mounted on a page the service
 * itself serves (under the dashboard's CSP), saving through the service's
 * own routes; the preview is the embed script in its preview mode, framed.
 * Screenshots go to test-artifacts/dashboard/.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Browser, BrowserContext, FrameLocator, Page } from 'playwright-core';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { DEFAULT_QUESTIONS } from '../../src/widgets/defaults.js';
import { owner } from '../support/app.js';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { testServices } from '../support/services.js';
import { signIn } from '../dashboard/support.js';

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
const SHOTS = `${ARTIFACTS}dashboard/`;
const ASSETS = new URL('../../src/dashboard/assets/', import.meta.url);
const DASHBOARD_CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; frame-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";

/**
 * The page: the editor mounted with the dashboard's own api() on a signed-in
 * session, as the edit page mounts it, on a page of the service under the
 * dashboard's policy.
 */
const PAGE_SCRIPT = `
import { api, setCsrfToken } from '/dashboard/assets/api.js';
import { mountEditor } from '/dashboard/assets/editor.js';
const params = new URLSearchParams(location.search);
const session = await api('/session');
setCsrfToken(session.csrf_token);
const kind = params.get('kind');
const id = params.get('id');
const object = id ? await api('/' + kind + 's/' + id) : undefined;
window.saved = [];
mountEditor(document.getElementById('app'), { kind, object, api, onSaved: (o) => window.saved.push(o) });
document.body.dataset.mounted = 'yes';
`;

const PAGE =
  '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">' +
  '<title>Edit — Dashboard</title><link rel="stylesheet" href="/dashboard/assets/app.css"><link rel="stylesheet" href="/dashboard/assets/editor.css"></head>' +
  '<body><main class="editor-page"><h1>Editor</h1><div id="app"></div></main><script type="module" src="/test-editor.js"></script></body></html>';


async function axe(target: Page | ReturnType<Page['frames']>[number]): Promise<string[]> {
  // Evaluated rather than added as a script tag, which the pages' policy (rightly) refuses; without
  // preloading style sheets, whose copies axe would put in <style> elements that the policy refuses too.
  await target.evaluate(readFileSync(AXE, 'utf8'));
  const violations = (await target.evaluate('axe.run(document, { resultTypes: ["violations"], preload: false }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))')) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

t.test('the editor gets the questions a new widget of each type starts with from the service, and the snippet the README gives', async (t) => {
  const services = await testServices(t);
  const app = await buildApp(services);
  t.teardown(() => app.close());
  const served = await app.inject({ method: 'GET', url: '/dashboard/assets/widget-defaults.js' });
  t.equal(served.statusCode, 200);
  t.match(served.headers['content-type'], /^text\/javascript/);
  const { WIDGET_DEFAULT_QUESTIONS } = await import(`data:text/javascript,${encodeURIComponent(served.body)}`);
  t.same(WIDGET_DEFAULT_QUESTIONS, DEFAULT_QUESTIONS);
  // A browser module with no types: imported by address.
  const { snippetOf } = await import(new URL('snippet.js', ASSETS).href);
  t.equal(snippetOf('https://feedback.example.com', 'widget', 'wgt_1'), '<script src="https://feedback.example.com/embed.js" data-widget="wgt_1" async></script>', 'the snippet the README gives');
});

if (!existsSync(CHROMIUM)) {
  t.skip(`browser part skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('the editor and the live preview of the real embed, in a real browser', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const services = await testServices(t);
    const app = await buildApp(services);
    const biz = await owner(services);
    const free = await owner(services, 'free');
    app.get('/test-editor', async (_request, reply) => reply.type('text/html; charset=utf-8').header('content-security-policy', DASHBOARD_CSP).send(PAGE));
    app.get('/test-editor.js', async (_request, reply) => reply.type('text/javascript; charset=utf-8').send(PAGE_SCRIPT));
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    t.teardown(async () => { await app.close(); await services.close(); });
    const sessions = { business: await signIn(app, services, biz.accountId), free: await signIn(app, services, free.accountId) };
    const stored = async (path: string) => (await (await fetch(`${address}${path}`, { headers: { authorization: `Bearer ${biz.key}` } })).json()) as any;

    const browser: Browser = await launch(t);
    const errors: string[] = [];
    const refused: string[] = [];
    /** The editor page for a new object (or an existing one), in a fresh context that may use the clipboard. */
    async function open(kind: string, options: { id?: string; page?: string; plan?: 'business' | 'free'; viewport?: { width: number; height: number }; scheme?: 'light' | 'dark' } = {}) {
      const context: BrowserContext = await browser.newContext({ viewport: options.viewport ?? { width: 1280, height: 800 }, colorScheme: options.scheme ?? 'light' });
      const [name, value] = sessions[options.plan ?? 'business'].cookie.split('=') as [string, string];
      await context.addCookies([{ name, value, domain: '127.0.0.1', path: '/dashboard', httpOnly: true, sameSite: 'Strict' }]);
      await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: address });
      const tab = await context.newPage();
      const sent: string[] = [];
      tab.on('pageerror', (error) => errors.push(`${tab.url()}: ${error.message}`));
      // Refused requests are counted below, by what they were.
      tab.on('console', (message) => {
        if ((message.type() === 'error' || message.type() === 'warning') && !message.text().startsWith('Failed to load resource')) errors.push(`${tab.url()}: ${message.text()}`);
      });
      tab.on('response', (response) => {
        const path = new URL(response.url()).pathname;
        if (response.status() >= 400 && path !== '/favicon.ico') refused.push(`${response.request().method()} ${path.replace(/\/[a-z]+_[A-Za-z0-9]+/g, '/ID')} ${response.status()}`);
      });
      tab.on('request', (request) => { if (/\/(submit|vote|token)$/.test(new URL(request.url()).pathname)) sent.push(request.url()); });
      const query = new URLSearchParams({ kind, ...(options.id ? { id: options.id } : {}) });
      if (options.page) {
        await tab.goto(`${address}${options.page}`);
        await tab.locator('iframe.editor-frame').waitFor();
      } else {
        await tab.goto(`${address}/test-editor?${query}`);
        await tab.locator('body[data-mounted="yes"]').waitFor();
      }
      const preview: FrameLocator = tab.frameLocator('iframe.editor-frame');
      return { tab, preview, sent, close: () => context.close() };
    }

    t.test('the preview page may be framed by the service\'s own pages only, and runs nothing but the embed', async (t) => {
      const reply = await fetch(`${address}/embed/preview`);
      t.equal(reply.status, 200);
      t.equal(reply.headers.get('x-frame-options'), 'SAMEORIGIN');
      t.match(reply.headers.get('content-security-policy'), /frame-ancestors 'self'/);
      t.match(reply.headers.get('content-security-policy'), /script-src 'self';/);
      t.match(await reply.text(), /<script src="\/embed\.js" data-preview><\/script>/);
    });

    let widgetId = '';
    t.test('a new widget: the preview follows the title, the type and an added question as they are typed', async (t) => {
      const { tab, preview, sent, close } = await open('widget');
      await preview.getByRole('dialog').waitFor();
      t.ok(await preview.getByRole('radio', { name: '1 of 5 stars' }).isVisible(), 'a feedback widget starts with its star rating');
      await tab.getByLabel('Title', { exact: true }).fill('Tell us how we did');
      await preview.getByRole('heading', { name: 'Tell us how we did' }).waitFor();
      t.pass('the typed title is the panel\'s heading');
      await tab.getByLabel('Type', { exact: true }).first().selectOption('nps');
      await preview.getByRole('radio', { name: '9 out of 10' }).waitFor();
      t.equal(await preview.getByRole('radio', { name: '1 of 5 stars' }).count(), 0, 'the type\'s own questions replace the stars');
      await tab.getByLabel('New question type').selectOption('single_choice');
      await tab.getByRole('button', { name: 'Add question' }).click();
      t.equal(await tab.evaluate('document.activeElement.id'), 'ed-questions-2-title', 'focus goes to the new question\'s title');
      await tab.keyboard.type('Which plan are you on?');
      await preview.getByText('Which plan are you on?').waitFor();
      await tab.getByLabel('Choice 1', { exact: true }).fill('Starter');
      // Two choices: radio buttons (a dropdown past six).
      await preview.getByRole('radio', { name: 'Starter' }).waitFor();
      t.pass('a new question and its choices show as typed');
      await tab.getByLabel('Button text').fill('Rate us');
      await tab.getByLabel('Corner').selectOption('bottom-left');
      await preview.locator('[data-feedback-corner="bottom-left"]').getByRole('button', { name: 'Rate us' }).waitFor();
      const [launcher, frame] = await Promise.all([preview.getByRole('button', { name: 'Rate us' }).boundingBox(), tab.locator('iframe.editor-frame').boundingBox()]);
      t.ok(launcher!.x - frame!.x < 100, 'the launcher moved to the left corner of the preview');
      await tab.getByRole('button', { name: 'Move up: question 3' }).click();
      t.equal(await tab.evaluate('document.activeElement.id'), 'ed-question-1-up', 'focus follows the moved question');
      await preview.locator('.label').nth(1).filter({ hasText: 'Which plan are you on?' }).waitFor();
      t.pass('the preview shows the new order');
      t.ok(await preview.getByText('Preview — responses are not recorded').first().isVisible(), 'the preview says it records nothing');
      await tab.screenshot({ path: `${SHOTS}editor-new-widget-1280.png` });
      t.same(await axe(tab), [], 'axe: nothing serious or critical on the editor');
      t.same(await axe(tab.frames().find((f) => f.url().endsWith('/embed/preview'))!), [], 'axe: nor in the preview');

      // Saving: the server's word on a field shows beside it.
      await tab.getByLabel('Question', { exact: true }).nth(1).fill('');
      await tab.getByRole('button', { name: 'Create widget' }).click();
      const invalid = tab.locator('#ed-questions-1-title');
      await tab.locator('#ed-questions-1-title-error').filter({ hasText: /\w/ }).waitFor();
      t.equal(await invalid.getAttribute('aria-invalid'), 'true', 'the empty question title is marked invalid');
      t.match(await invalid.getAttribute('aria-describedby'), /ed-questions-1-title-error/, 'and described by the server\'s message');
      t.equal(await tab.evaluate('document.activeElement.id'), 'ed-questions-1-title', 'focus goes to it');
      t.match(await tab.getByRole('alert').textContent(), /Not saved: one field needs a change/);
      await tab.screenshot({ path: `${SHOTS}editor-validation-1280.png` });
      await invalid.fill('Which plan are you on?');
      await tab.getByRole('button', { name: 'Create widget' }).click();
      await tab.getByRole('button', { name: 'Publish' }).waitFor();
      widgetId = (await tab.evaluate('window.saved[0].id')) as string;
      const saved = await stored(`/api/widgets/${widgetId}`);
      t.match(saved, { title: 'Tell us how we did', widget_type: 'nps', published: false, trigger_config: { text: 'Rate us', position: 'bottom-left' } }, 'created as edited');
      t.same(saved.questions.map((q: any) => q.title), ['How likely are you to recommend us to a friend or colleague?', 'Which plan are you on?', 'What is the main reason for your score?']);
      t.same(saved.questions[1].choices.map((c: any) => c.label), ['Starter', 'No']);

      // The preview's Send shows the thank-you card and sends nothing.
      await preview.getByRole('radio', { name: '8 out of 10' }).check();
      await preview.getByRole('radio', { name: 'Starter' }).check();
      await preview.getByRole('button', { name: 'Send' }).click();
      await preview.getByRole('heading', { name: 'Thank you!' }).waitFor();
      t.ok(await preview.getByText('Preview — responses are not recorded').isVisible(), 'the thank-you card says so too');
      t.same(sent, [], 'no token, submission or vote requested');
      t.equal((await stored(`/api/widgets/${widgetId}/responses`)).responses.length, 0, 'no response stored');

      // Copy the snippet.
      await tab.getByRole('button', { name: 'Copy the snippet' }).click();
      await tab.getByText(/^Copied\./).waitFor();
      const expected = `<script src="${address}/embed.js" data-widget="${widgetId}" async></script>`;
      t.equal(await tab.evaluate('navigator.clipboard.readText()'), expected, 'the snippet copied is the README\'s, with this widget\'s id');
      t.equal(await tab.getByLabel('Embed code').inputValue(), expected, 'and it stays on the page to select by hand');

      // Publish and unpublish.
      await tab.getByRole('button', { name: 'Publish', exact: true }).click();
      await tab.getByRole('button', { name: 'Unpublish' }).waitFor();
      t.equal((await stored(`/api/widgets/${widgetId}`)).published, true, 'published');
      t.match(await tab.getByRole('status').first().textContent(), /Published/);
      await tab.getByRole('button', { name: 'Unpublish' }).click();
      await tab.getByRole('button', { name: 'Publish', exact: true }).waitFor();
      t.equal((await stored(`/api/widgets/${widgetId}`)).published, false, 'unpublished');
      await close();
    });

    t.test('an existing widget: edits saved with PUT, the thank-you screen previewed, the type fixed', async (t) => {
      const { tab, preview, close } = await open('widget', { id: widgetId });
      await preview.getByRole('heading', { name: 'Tell us how we did' }).waitFor();
      t.match(await tab.getByText(/fixed when it was created/).textContent(), /Net Promoter Score/);
      await tab.getByRole('button', { name: 'Thank-you screen' }).click();
      await tab.getByLabel('Heading').fill('Much appreciated');
      await preview.getByRole('heading', { name: 'Much appreciated' }).waitFor();
      t.pass('the thank-you card shows its heading as typed');
      await tab.getByLabel('Colour scheme').selectOption('dark');
      await preview.getByRole('dialog').waitFor();
      const background = async () => preview.getByRole('dialog').evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor as string);
      // Drawn again on the next frame after the change: waited for, up to 10 s on a loaded machine.
      for (let tries = 0; tries < 500 && (await background()) !== 'rgb(17, 24, 39)'; tries++) await tab.waitForTimeout(20);
      t.equal(await background(), 'rgb(17, 24, 39)', 'the dark palette, painted under the preview page\'s strict style policy');
      await tab.screenshot({ path: `${SHOTS}editor-edit-widget-thanks-1280.png` });
      await tab.getByRole('button', { name: 'Save changes' }).click();
      await tab.getByText('Saved.', { exact: true }).waitFor();
      t.match(await stored(`/api/widgets/${widgetId}`), { thank_you_title: 'Much appreciated', theme: { mode: 'dark' } });
      await close();
    });

    t.test('a form at 390 px: the preview stacked under the form, a consent question, keyboard only', async (t) => {
      const { tab, preview, close } = await open('form', { viewport: { width: 390, height: 844 } });
      await tab.getByLabel('Title', { exact: true }).focus();
      await tab.keyboard.type('Join the beta');
      await preview.getByRole('heading', { name: 'Join the beta' }).waitFor();
      await tab.getByLabel('New question type').selectOption('consent');
      await tab.getByRole('button', { name: 'Add question' }).focus();
      await tab.keyboard.press('Enter');
      await tab.keyboard.type('Privacy');
      await preview.getByRole('checkbox', { name: /I agree that my answers are stored/ }).waitFor();
      const [form, frame] = await Promise.all([tab.locator('.editor-form').boundingBox(), tab.locator('iframe.editor-frame').boundingBox()]);
      t.ok(frame!.y >= form!.y + form!.height, 'the preview comes after the form');
      t.ok(frame!.x >= 0 && frame!.x + frame!.width <= 390, 'and fits the width');
      t.ok((await tab.evaluate('document.documentElement.scrollWidth')) as number <= 390, 'nothing overflows sideways');
      t.same(await axe(tab), [], 'axe: nothing serious or critical at 390 px');
      await tab.screenshot({ path: `${SHOTS}editor-new-form-390.png`, fullPage: true });
      await tab.getByRole('button', { name: 'Create form' }).click();
      await tab.getByRole('button', { name: 'Publish' }).waitFor();
      const id = (await tab.evaluate('window.saved[0].id')) as string;
      t.match((await stored(`/api/forms/${id}`)).questions, [{ type: 'consent', title: 'Privacy', text: 'I agree that my answers are stored.' }]);
      await close();
    });

    t.test('a form of the newer types: each with its settings, hidden fields and a redirect, the preview following', async (t) => {
      const { tab, preview, close } = await open('form');
      await tab.getByLabel('Title', { exact: true }).fill('Your stay');
      const add = async (type: string, title: string) => {
        await tab.getByLabel('New question type').selectOption(type);
        await tab.getByRole('button', { name: 'Add question' }).click();
        await tab.keyboard.type(title);
      };
      await add('opinion_scale', 'How calm was it?');
      await tab.getByLabel('To', { exact: true }).fill('7');
      await tab.getByLabel('Label at the end').fill('Calm');
      await preview.getByRole('radio', { name: '7 of 7, Calm' }).waitFor();
      await add('ranking', 'What matters most?');
      await preview.getByRole('button', { name: 'Move No up' }).waitFor();
      await add('matrix', 'Rate each');
      await tab.locator('#ed-questions-2-rows-0-label').fill('Staff');
      await preview.getByRole('group', { name: 'Staff' }).getByRole('radio', { name: 'Good' }).waitFor();
      await add('number', 'Guests');
      await tab.getByLabel('Largest').fill('12');
      await tab.getByLabel('Whole numbers only').check();
      await add('multiple_choice', 'Extras');
      await tab.getByLabel('At most').fill('1');
      await preview.getByRole('checkbox', { name: 'Yes' }).waitFor();
      await tab.getByLabel('Hidden fields').fill('utm_source');
      await tab.getByLabel('After sending, go to').fill('https://example.com/thanks?c={{calm}}');
      t.same(await axe(tab), [], 'axe: nothing serious or critical');
      await tab.screenshot({ path: `${SHOTS}editor-new-types-1280.png`, fullPage: true });
      await tab.getByRole('button', { name: 'Create form' }).click();
      await tab.getByRole('button', { name: 'Publish' }).waitFor();
      const id = (await tab.evaluate('window.saved[0].id')) as string;
      const form = await stored(`/api/forms/${id}`);
      t.match(form.questions, [
        { type: 'opinion_scale', title: 'How calm was it?', start: 1, end: 7, end_label: 'Calm' },
        { type: 'ranking', title: 'What matters most?', choices: [{ label: 'Yes' }, { label: 'No' }] },
        { type: 'matrix', title: 'Rate each', rows: [{ label: 'Staff' }], columns: [{ label: 'Poor' }, { label: 'Good' }] },
        { type: 'number', title: 'Guests', max: 12, integer: true },
        { type: 'multiple_choice', title: 'Extras', max_selected: 1 },
      ]);
      t.same(form.hidden_fields, ['utm_source']);
      t.equal(form.redirect_url, 'https://example.com/thanks?c={{calm}}');
      await close();
    });

    t.test('a new poll: options typed show in the preview, a vote there counts nowhere', async (t) => {
      const { tab, preview, sent, close } = await open('poll');
      await tab.getByLabel('Question', { exact: true }).fill('Which feature next?');
      await tab.getByLabel('Option 1', { exact: true }).fill('Dark mode');
      await tab.getByLabel('Option 2', { exact: true }).fill('Exports');
      await tab.getByRole('button', { name: 'Add option' }).click();
      await tab.keyboard.type('Webhooks');
      await preview.getByRole('radio', { name: 'Webhooks' }).waitFor();
      t.ok(await preview.getByText('Which feature next?').isVisible());
      await preview.getByRole('radio', { name: 'Exports' }).check();
      await preview.getByRole('button', { name: 'Vote' }).click();
      await preview.getByText('Exports — 1 vote (100%)').waitFor();
      t.same(sent, [], 'the preview\'s vote went nowhere');
      // A poll has a theme as forms and widgets do: the preview paints it as it is picked.
      await tab.getByLabel('Colour scheme').selectOption('dark');
      const background = async () => preview.locator('section.panel').evaluate((el) => (globalThis as any).getComputedStyle(el).backgroundColor as string);
      for (let tries = 0; tries < 500 && (await background()) !== 'rgb(17, 24, 39)'; tries++) await tab.waitForTimeout(20);
      t.equal(await background(), 'rgb(17, 24, 39)', 'the dark palette in the preview');
      await tab.screenshot({ path: `${SHOTS}editor-new-poll-1280.png` });
      await tab.getByRole('button', { name: 'Create poll' }).click();
      await tab.getByRole('button', { name: 'Publish' }).waitFor();
      const id = (await tab.evaluate('window.saved[0].id')) as string;
      const poll = await stored(`/api/polls/${id}`);
      t.same(poll.options.map((o: any) => o.text), ['Dark mode', 'Exports', 'Webhooks']);
      t.same(poll.theme, { primaryColor: '#4f46e5', backgroundColor: '#ffffff', text_color: null, mode: 'dark' }, 'created with its theme');
      await tab.getByRole('button', { name: 'Move up: option 3' }).click();
      await tab.getByRole('button', { name: 'Save changes' }).click();
      await tab.getByText('Saved.', { exact: true }).waitFor();
      const moved = await stored(`/api/polls/${id}`);
      t.same(moved.options.map((o: any) => o.text), ['Dark mode', 'Webhooks', 'Exports'], 'reordered');
      t.same(moved.options.map((o: any) => o.id).sort(), poll.options.map((o: any) => o.id).sort(), 'the options keep their ids (and votes)');
      await close();
    });

    t.test('new questions and choices take their keys from their titles and labels until saved; the downloads name them so', async (t) => {
      const { tab, close } = await open('form');
      await tab.getByLabel('Title', { exact: true }).fill('Tell us about you');
      await tab.getByLabel('New question type').selectOption('single_choice');
      await tab.getByRole('button', { name: 'Add question' }).click();
      const key = tab.getByLabel('Answer key').first();
      t.equal(await key.inputValue(), 'question_1', 'a question with no title yet');
      await tab.keyboard.type('How did you hear about us?');
      t.equal(await key.inputValue(), 'how_did_you_hear_about_us', 'the key follows the title as it is typed');
      // The two choices a single-choice question starts with follow their labels too, not only added ones.
      await tab.getByLabel('Choice 1', { exact: true }).fill('A friend');
      await tab.getByLabel('Choice 2', { exact: true }).fill('An advert');
      await tab.getByRole('button', { name: 'Add choice' }).click();
      await tab.keyboard.type('Somewhere else');
      // A key typed by hand is the owner's: the title no longer moves it.
      await tab.getByRole('button', { name: 'Add question' }).click();
      await tab.getByLabel('Answer key').nth(1).fill('referrer');
      await tab.getByLabel('Question', { exact: true }).nth(1).fill('Who sent you?');
      t.equal(await tab.getByLabel('Answer key').nth(1).inputValue(), 'referrer', 'a key typed by hand stays');
      await tab.getByRole('button', { name: 'Create form' }).click();
      await tab.getByRole('button', { name: 'Publish' }).waitFor();
      const id = (await tab.evaluate('window.saved[0].id')) as string;
      const created = await stored(`/api/forms/${id}`);
      t.same(created.questions.map((q: any) => q.id), ['how_did_you_hear_about_us', 'referrer'], 'saved under keys from their titles');
      t.same(created.questions[0].choices, [{ id: 'a_friend', label: 'A friend' }, { id: 'an_advert', label: 'An advert' }, { id: 'somewhere_else', label: 'Somewhere else' }], 'choices saved under ids from their labels');

      // Saved ids never change: answers were given under them.
      await tab.getByLabel('Question', { exact: true }).first().fill('Where did you first hear of us?');
      t.equal(await key.inputValue(), 'how_did_you_hear_about_us', 'a saved key stays when the title changes');
      await tab.getByLabel('Choice 1', { exact: true }).fill('A friend or colleague');
      await tab.getByRole('button', { name: 'Add choice' }).click();
      await tab.keyboard.type('A friend');
      await tab.getByRole('button', { name: 'Publish' }).click();
      await tab.getByRole('button', { name: 'Unpublish' }).waitFor();
      const edited = await stored(`/api/forms/${id}`);
      t.same(edited.questions[0].choices.map((c: any) => [c.id, c.label]), [['a_friend', 'A friend or colleague'], ['an_advert', 'An advert'], ['somewhere_else', 'Somewhere else'], ['a_friend_2', 'A friend']], 'saved choices keep their ids; a new one differs from them');

      // A visitor picks the first choice: the API and both downloads name it by its readable id.
      const token = await app.inject({ method: 'GET', url: `/api/forms/${id}/token` });
      const submitted = await app.inject({ method: 'POST', url: `/api/forms/${id}/submit`, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' }, payload: { _token: token.json().token, answers: { how_did_you_hear_about_us: 'a_friend', referrer: 'Ada' } } });
      t.equal(submitted.statusCode, 200, submitted.body);
      t.match((await stored(`/api/forms/${id}/responses`)).responses, [{ answers: { how_did_you_hear_about_us: 'a_friend', referrer: 'Ada' } }], 'the API');
      const download = (format: string) => tab.evaluate(`fetch('/dashboard/api/forms/${id}/responses.${format}').then((r) => r.text())`) as Promise<string>;
      const csv = (await download('csv')).split('\r\n');
      // Every field is quoted (see the downloads' formula guard).
      t.match(csv[0], /^"id","submitted_at","Where did you first hear of us\?","Who sent you\?",/, 'the CSV heads the answers by their questions');
      t.match(csv[1], /^"[^"]+","[^"]+","a_friend","Ada",/, 'and holds the chosen id');
      t.match(JSON.parse((await download('ndjson')).trim()), { answers: { how_did_you_hear_about_us: 'a_friend', referrer: 'Ada' } }, 'the NDJSON download');
      await close();
    });

    t.test('what the plan does not include is switched off with the reason beside it', async (t) => {
      const { tab, close } = await open('widget', { plan: 'free', scheme: 'dark', viewport: { width: 390, height: 844 } });
      // The session's plan comes a moment after the editor shows.
      await tab.getByText(/The honeypot is not part of your plan \(Free\)/).waitFor();
      t.ok(await tab.getByLabel('Honeypot against bots').isDisabled(), 'the honeypot');
      t.ok(await tab.getByLabel('Limit submissions per visitor address').isDisabled(), 'the per-address rate limit');
      t.ok(await tab.getByRole('button', { name: 'Create widget' }).isDisabled(), 'creating a widget');
      t.ok(await tab.getByText(/Widgets are not part of your plan \(Free\)/).isVisible());
      t.same(await axe(tab), [], 'axe: nothing serious or critical in the dark scheme');
      await tab.screenshot({ path: `${SHOTS}editor-free-plan-dark-390.png` });
      await close();
    });

    t.test('the dashboard\'s own edit page mounts the editor, preview and all', async (t) => {
      const { tab, preview, close } = await open('widget', { id: widgetId, page: `/dashboard/widgets/${widgetId}/edit` });
      await preview.getByRole('dialog').waitFor();
      await tab.getByLabel('Title', { exact: true }).fill('Tell us how we did, again');
      await preview.getByRole('heading', { name: 'Tell us how we did, again' }).waitFor();
      t.pass('the preview follows the title on the real page');
      // Summaries count answers by key and value: a saved question given another type asks under another key.
      const type = tab.getByLabel('Type', { exact: true }).first();
      const key = tab.getByLabel('Answer key').first();
      t.equal(await key.inputValue(), 'score');
      await type.selectOption('star_rating');
      t.equal(await key.inputValue(), 'score_star_rating', 'another type, another key');
      await type.selectOption('nps');
      t.equal(await key.inputValue(), 'score', 'back to its saved type, its saved key');
      await type.selectOption('star_rating');
      await tab.getByRole('button', { name: 'Save changes' }).click();
      await tab.locator('.editor-status', { hasText: 'Saved.' }).waitFor();
      const saved = await stored(`/api/widgets/${widgetId}`);
      t.same(saved.questions.map((q: any) => [q.id, q.type]), [['score_star_rating', 'star_rating'], ['which_plan_are_you_on', 'single_choice'], ['reason', 'long_text']], 'saved under its new key');
      // A saved key given back by hand to a question of another type is refused before anything is sent.
      await tab.getByLabel('Type', { exact: true }).nth(2).selectOption('short_text');
      const reasonKey = tab.getByLabel('Answer key').nth(2);
      t.equal(await reasonKey.inputValue(), 'reason_short_text');
      await reasonKey.fill('reason');
      await tab.getByRole('button', { name: 'Save changes' }).click();
      await tab.locator('#ed-questions-2-id-error').filter({ hasText: /^Reason holds the answers given to a Long text question: give this Short text question another key/ }).waitFor();
      t.equal(await reasonKey.getAttribute('aria-invalid'), 'true', 'the key is marked');
      t.equal((await stored(`/api/widgets/${widgetId}`)).questions[2].type, 'long_text', 'nothing saved');
      await tab.getByLabel('Type', { exact: true }).nth(2).selectOption('long_text');
      // A question added after a saved one is removed does not take its key: the removed one's answers are still under it.
      await tab.getByRole('button', { name: 'Remove: question 2' }).click();
      await tab.getByLabel('New question type').selectOption('nps');
      await tab.getByRole('button', { name: 'Add question' }).click();
      await tab.keyboard.type('Which plan are you on?');
      t.equal(await tab.getByLabel('Answer key').nth(2).inputValue(), 'which_plan_are_you_on_2', 'not the removed question\'s key');
      await tab.screenshot({ path: `${SHOTS}editor-in-dashboard-1280.png` });
      await close();
    });

    t.test('no errors or warnings in any console', async (t) => {
      t.same(errors, []);
      t.same(refused, ['POST /dashboard/api/widgets 400'], 'no request refused but the invalid save');
    });
  });
}
