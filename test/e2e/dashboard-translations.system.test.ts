/**
 * The editor's languages in a real browser: a language added, some of its
 * texts translated beside the default ones, the rest marked missing, the
 * preview shown in that language, and the translation saved through the API.
 * Screenshots go to test-artifacts/dashboard/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { owner, tokenFor } from '../support/app.js';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { testServices } from '../support/services.js';
import { seriousViolations, serveEditorPage } from '../support/editor-page.js';
import { signedInPage } from '../support/signed-in.js';

const SHOTS = `${ARTIFACTS}dashboard/`;
const PAGE_SCRIPT = `
import { api, setCsrfToken } from '/dashboard/assets/api.js';
import { mountEditor } from '/dashboard/assets/editor.js';
const params = new URLSearchParams(location.search);
const session = await api('/session');
setCsrfToken(session.csrf_token);
const kind = params.get('kind') || 'form';
const object = await api('/' + kind + 's/' + params.get('id'));
mountEditor(document.getElementById('app'), { kind, object, api });
document.body.dataset.mounted = 'yes';
`;


if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('a German translation added, partly filled, previewed and saved from the editor', async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const services = await testServices(t);
    const app = await buildApp(services);
    const biz = await owner(services);
    serveEditorPage(app, PAGE_SCRIPT);
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    t.teardown(async () => { await app.close(); await services.close(); });
    const auth = { authorization: `Bearer ${biz.key}`, 'content-type': 'application/json' };
    const created = (await (await fetch(`${address}/api/forms`, {
      method: 'POST', headers: auth,
      body: JSON.stringify({
        title: 'How was your stay?',
        questions: [
          { id: 'room', type: 'single_choice', title: 'Which room?', required: true, choices: [{ id: 'small', label: 'Small' }, { id: 'large', label: 'Large' }] },
          { id: 'note', type: 'long_text', title: 'Anything else?', required: false },
        ],
      }),
    })).json()) as { id: string };
    t.ok(created.id, 'the form exists');

    const browser = await launch(t);
    const { context, tab, errors } = await signedInPage(browser, { app, services }, biz.accountId);
    await tab.goto(`${address}/test-editor?id=${created.id}`);
    await tab.locator('body[data-mounted="yes"]').waitFor();
    const preview = tab.frameLocator('iframe.editor-frame');
    await preview.getByRole('heading', { name: 'How was your stay?' }).waitFor();

    await tab.getByLabel('Language to add').selectOption('de');
    await tab.getByRole('button', { name: 'Add language' }).click();
    const legend = tab.getByRole('group', { name: 'German' });
    await legend.waitFor();
    await tab.getByLabel('Title (German)', { exact: true }).fill('Wie war Ihr Aufenthalt?');
    await tab.getByLabel('Question 1: title (German)').fill('Welches Zimmer?');
    await tab.getByLabel('Question 1: choice 1 (German)').fill('Klein');
    const missing = tab.locator('.editor-untranslated');
    // Texts: title, 2 question titles, 2 choices, thank-you heading and message = 7; 3 filled.
    t.equal(await missing.count(), 4, 'the four untranslated texts are marked');
    t.equal(await tab.getByLabel('Question 2: title (German)').getAttribute('aria-describedby'), 'ed-translations-de-questions-note-title-original ed-translations-de-questions-note-title-missing');
    t.equal(await tab.locator('#ed-translations-de-questions-note-title-missing').textContent(), 'Missing', 'the mark is read out with the input');
    t.match(await tab.locator('#ed-tr-de-count').textContent(), /^4 of 7 texts not translated yet/);

    await tab.getByLabel('Preview in').selectOption('de');
    await preview.getByRole('heading', { name: 'Wie war Ihr Aufenthalt?' }).waitFor();
    t.ok(await preview.getByRole('radio', { name: 'Klein' }).isVisible(), 'the translated choice');
    t.ok(await preview.getByRole('radio', { name: 'Large' }).isVisible(), 'an untranslated choice in the default language');
    t.ok(await preview.getByRole('button', { name: 'Senden' }).isVisible(), 'the interface in German');
    await tab.screenshot({ path: `${SHOTS}translations-german.png`, fullPage: true });
    await legend.screenshot({ path: `${SHOTS}translations-german-texts.png` });
    t.same(await seriousViolations(tab), [], 'axe: no serious or critical violation');

    await tab.getByRole('button', { name: 'Save changes' }).click();
    await tab.getByText('Saved.', { exact: true }).waitFor();
    const saved = (await (await fetch(`${address}/api/forms/${created.id}`, { headers: auth })).json()) as Record<string, unknown>;
    t.same(saved.translations, { de: { title: 'Wie war Ihr Aufenthalt?', questions: { room: { title: 'Welches Zimmer?', choices: { small: 'Klein' } } } } }, 'the translation as filled, nothing empty');
    t.equal(saved.language, 'en');
    t.equal(await tab.locator('.editor-untranslated').count(), 4, 'still marked after the save');

    // Responses in German and English: the object's page counts them per language.
    await fetch(`${address}/api/forms/${created.id}`, { method: 'PUT', headers: auth, body: JSON.stringify({ published: true }) });
    for (const language of ['de', 'de', 'en']) {
      const reply = await app.inject({ method: 'POST', url: `/api/forms/${created.id}/submit`, payload: { _token: await tokenFor(app, 'forms', created.id), answers: { room: 'small' }, language } });
      t.equal(reply.statusCode, 200, reply.body);
    }
    const page = await context.newPage();
    await page.goto(`${address}/dashboard/forms/${created.id}`);
    const languages = page.locator('section.card').filter({ has: page.getByRole('heading', { name: 'Languages', exact: true }) });
    await languages.locator('figure.chart table').waitFor({ state: 'attached' });
    const rows = await languages.locator('figure.chart table tbody tr').evaluateAll((trs) => trs.map((tr: any) => [tr.querySelector('th').textContent, tr.querySelector('td').textContent]));
    t.same(rows, [['German (de)', '2'], ['English (en)', '1']], 'responses per language on the object\'s page');
    const room = page.locator('.question-grid section.card').filter({ has: page.getByRole('heading', { name: 'Which room?', exact: true }) });
    await room.waitFor();
    await languages.screenshot({ path: `${SHOTS}translations-languages-card.png` });
    t.same(await seriousViolations(page), [], 'axe on the object page: no serious or critical violation');
    await page.close();

    await tab.getByRole('button', { name: 'Remove German' }).click();
    await tab.getByRole('button', { name: 'Save changes' }).click();
    await tab.getByText('Saved.', { exact: true }).waitFor();
    const removed = (await (await fetch(`${address}/api/forms/${created.id}`, { headers: auth })).json()) as Record<string, unknown>;
    t.same(removed.translations ?? {}, {}, 'the language removed');
    // A poll: its question and options, by option id.
    const poll = (await (await fetch(`${address}/api/polls`, { method: 'POST', headers: auth, body: JSON.stringify({ question: 'Tea or coffee?', options: [{ text: 'Tea' }, { text: 'Coffee' }] }) })).json()) as { id: string; options: Array<{ id: string }> };
    // The editor draws itself again when the session's plan limits arrive: held
    // back here until the language is picked, the pick must survive that.
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let sessions = 0;
    await tab.route('**/api/session', async (route) => { if (++sessions === 2) await held; await route.continue(); });
    await tab.goto(`${address}/test-editor?kind=poll&id=${poll.id}`);
    await tab.locator('body[data-mounted="yes"]').waitFor();
    await tab.getByLabel('Language to add').selectOption('fr');
    await tab.evaluate(() => { const page = globalThis as any; page.picker = page.document.getElementById('ed-new-language'); });
    release();
    await tab.waitForFunction(() => { const page = globalThis as any; return page.document.getElementById('ed-new-language') !== page.picker; });
    t.equal(await tab.getByLabel('Language to add').inputValue(), 'fr', 'the picked language kept when the editor draws itself again');
    await tab.unroute('**/api/session');
    await tab.getByRole('button', { name: 'Add language' }).click();
    await tab.getByLabel('Question (French)').fill('Thé ou café ?');
    await tab.getByLabel('Option 1 (French)').fill('Thé');
    t.equal(await tab.locator('.editor-untranslated').count(), 1, 'the second option marked');
    await tab.getByLabel('Preview in').selectOption('fr');
    await tab.frameLocator('iframe.editor-frame').getByText('Thé ou café ?').waitFor();
    await tab.getByRole('button', { name: 'Save changes' }).click();
    await tab.getByText('Saved.', { exact: true }).waitFor();
    const savedPoll = (await (await fetch(`${address}/api/polls/${poll.id}`, { headers: auth })).json()) as Record<string, unknown>;
    t.same(savedPoll.translations, { fr: { question: 'Thé ou café ?', options: { [poll.options[0]!.id]: 'Thé' } } }, 'the poll\'s translation by option id');
    t.same(errors, [], 'no page error');
    await context.close();
  });
}
