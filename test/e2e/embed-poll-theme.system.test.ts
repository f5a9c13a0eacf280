/**
 * A poll's theme on a site, in a real browser: the embed paints a poll in
 * the colours and mode its owner chose, as it does forms and widgets.
 * Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import t from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite, launch } from '../support/embed-site.js';

/** The poll's panel and its Vote button, as painted. */
const COLOURS = `(() => {
  const root = document.querySelector('[data-feedback-embed]').shadowRoot;
  const style = (el) => getComputedStyle(el);
  return { background: style(root.querySelector('.panel')).backgroundColor, text: style(root.querySelector('.panel')).color, vote: style(root.querySelector('button.primary')).backgroundColor };
})()`;

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`, () => {});
} else {
  t.test('a poll shows in its theme on a site', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const ids: Record<string, string> = {};
    const site = await embedSite(t, async (make) => {
      const poll = { question: 'Which plan do you use?', options: [{ text: 'Free' }, { text: 'Pro' }, { text: 'Business' }] };
      ids.dark = await make('/api/polls', { ...poll, theme: { mode: 'dark', primaryColor: '#f59e0b' } });
      ids.owner = await make('/api/polls', { ...poll, theme: { backgroundColor: '#fffbeb', text_color: '#78350f', primaryColor: '#0f766e' } });
      ids.auto = await make('/api/polls', { ...poll, theme: { mode: 'auto' } });
      ids.plain = await make('/api/polls', poll);
    });
    const browser = await launch(t);
    const cases = [
      { name: 'dark', scheme: 'light', background: 'rgb(17, 24, 39)', text: 'rgb(249, 250, 251)', vote: 'rgb(245, 158, 11)', why: 'dark whatever the visitor\'s scheme' },
      { name: 'owner', scheme: 'light', background: 'rgb(255, 251, 235)', text: 'rgb(120, 53, 15)', vote: 'rgb(15, 118, 110)', why: 'the owner\'s own colours' },
      { name: 'auto', scheme: 'dark', background: 'rgb(17, 24, 39)', text: 'rgb(249, 250, 251)', vote: 'rgb(79, 70, 229)', why: 'auto, for a visitor who asks for dark' },
      { name: 'auto', scheme: 'light', background: 'rgb(255, 255, 255)', text: 'rgb(17, 24, 39)', vote: 'rgb(79, 70, 229)', why: 'auto, for a visitor who asks for light' },
      { name: 'plain', scheme: 'dark', background: 'rgb(255, 255, 255)', text: 'rgb(17, 24, 39)', vote: 'rgb(79, 70, 229)', why: 'no theme given: light, as polls always were' },
    ] as const;
    for (const c of cases) {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: c.scheme });
      const tab = await context.newPage();
      await tab.goto(site.page({ embeds: [['poll', ids[c.name]!]], attributes: 'data-remember="off"' }));
      await tab.getByRole('button', { name: 'Vote' }).waitFor();
      const painted = (await tab.evaluate(COLOURS)) as { background: string; text: string; vote: string };
      t.same(painted, { background: c.background, text: c.text, vote: c.vote }, `${c.name} poll, ${c.scheme} visitor: ${c.why}`);
      if (c.name === 'dark') await tab.screenshot({ path: `${ARTIFACTS}embed-poll-dark-390.png` });
      await context.close();
    }
  });
}
