/**
 * For random forms (pages, `show_if`, jumps, endings) and random answers,
 * the embed in Chromium shows exactly the questions of the evaluator's path,
 * page after page, and closes on its ending: the visitor is led where the
 * server will walk. The embed draws in its preview mode, so nothing is sent;
 * each shown question is answered as the draw says, then Next.
 */
import { existsSync } from 'node:fs';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { walk } from '../../src/embeddables/evaluate.js';
import { CHROMIUM, launch } from '../support/embed-site.js';
import { formAndAnswers } from '../support/logic-forms.js';
import fc from '../support/properties.js';
import { testServices } from '../support/services.js';

/**
 * Runs in the page: draws the form, then on each page answers every shown
 * question the answers name (answering may show more) and goes on, until an
 * ending. Answers the ids shown on each page and the ending's heading.
 */
const DRIVE = `(({ form, answers }) => {
  FeedbackEmbed.preview(document.querySelector('[data-preview-target]'), 'form', form);
  const root = document.querySelector('[data-feedback-embed]').shadowRoot;
  const shown = () => form.questions.map((q, i) => [q, i]).filter(([q, i]) => !root.querySelector('#q' + i + '-error').parentNode.hidden);
  const give = (q, i, v) => {
    const controls = [...root.querySelectorAll('[name="q' + i + '"], #q' + i)];
    for (const c of controls) {
      if (c.type === 'radio') { if (c.value === (typeof v === 'boolean' ? (v ? 'y' : 'n') : String(v)) && !c.checked) c.click(); }
      else if (c.type === 'checkbox') { if (v.includes(c.value) !== c.checked) c.click(); }
      else { c.value = String(v); c.dispatchEvent(new Event('input', { bubbles: true })); }
    }
  };
  const pages = [];
  for (let n = 0; n < 10 && root.querySelector('form'); n++) {
    let seen = '';
    // Answering may show questions after it: again until nothing new shows.
    while (seen !== shown().map(([q]) => q.id).join()) {
      seen = shown().map(([q]) => q.id).join();
      for (const [q, i] of shown()) if (q.id in answers) give(q, i, answers[q.id]);
    }
    pages.push(shown().map(([q]) => q.id));
    root.querySelector('button.primary').click();
  }
  return { pages, ending: root.querySelector('h2').textContent };
})`;

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test('the embed shows exactly the questions of the evaluator\'s path, and its ending', async (t) => {
    const services = await testServices(t);
    const app = await buildApp(services);
    t.teardown(() => app.close());
    const address = await app.listen({ port: 0, host: '127.0.0.1' });
    const browser = await launch(t);
    const tab = await browser.newPage();
    const errors: string[] = [];
    tab.on('pageerror', (error) => errors.push(error.message));
    await tab.goto(`${address}/embed/preview`);
    await tab.waitForFunction('window.FeedbackEmbed');
    let runs = 0;
    await fc.assert(
      fc.asyncProperty(formAndAnswers, async ({ form, answers }) => {
        runs++;
        // Nothing required, so any answers let the visitor on: which questions show does not depend on it.
        const drawn = { ...form, title: 'Random', questions: form.questions.map((q) => ({ ...q, required: false })) };
        const seen = (await tab.evaluate(`${DRIVE}(${JSON.stringify({ form: drawn, answers })})`)) as { pages: string[][]; ending: string };
        const path = walk(form, answers);
        const ending = (form.endings ?? []).find((e) => e.id === path.ending);
        return seen.pages.flat().join() === path.questions.join() && seen.pages.length === path.pages.length && seen.ending === (ending ? ending.title : 'Thank you!');
      }),
      { numRuns: 40 },
    );
    t.equal(runs, 40, 'every draw was driven through the embed');
    t.same(errors, [], 'no uncaught error');
  });
}
