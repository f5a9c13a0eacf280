/**
 * The floating panel beside a classic scrollbar (Windows, Firefox), in a
 * real browser: Chromium headless hides scrollbars unless told not to, and
 * then draws a classic one, 15 px wide, as those browsers do. The panel must
 * fit the width the page shows, 16 px from each side, not the window's
 * width that counts the scrollbar. Screenshots go to test-artifacts/.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { chromium } from 'playwright-core';
import t from 'tap';
import { ARTIFACTS, CHROMIUM, embedSite } from '../support/embed-site.js';

/** The open panel and the launcher, and the widths the page reports. */
const MEASURE = `(() => {
  const root = document.querySelector('[data-feedback-embed]').shadowRoot;
  const panel = root.querySelector('.panel:not([hidden])').getBoundingClientRect();
  const launcher = root.querySelector('.launcher').getBoundingClientRect();
  return { left: panel.left, right: panel.right, launcherRight: launcher.right, visible: document.documentElement.clientWidth, window: innerWidth };
})()`;

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM} (.ci/run installs Debian's chromium)`, () => {});
} else {
  t.test('the floating panel fits the visible width beside a classic scrollbar', async (t) => {
    mkdirSync(ARTIFACTS, { recursive: true });
    const ids: Record<string, string> = {};
    const site = await embedSite(t, async (make) => {
      ids.right = await make('/api/widgets', { widget_type: 'feedback', title: 'Rate us', trigger_config: { text: 'Feedback' } });
      ids.left = await make('/api/widgets', { widget_type: 'feedback', title: 'Rate us', trigger_config: { text: 'Feedback', position: 'bottom-left' } });
    });
    const browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
      // Headless Chromium hides scrollbars by default: shown, they take room as classic ones do.
      ignoreDefaultArgs: ['--hide-scrollbars'],
    });
    t.teardown(() => browser.close());

    for (const width of [390, 320, 1280]) {
      for (const corner of ['right', 'left'] as const) {
        const context = await browser.newContext({ viewport: { width, height: 844 } });
        const tab = await context.newPage();
        // A page taller than the window: it scrolls, and shows its scrollbar.
        await tab.goto(site.page({ embeds: [['widget', ids[corner]!]], attributes: 'data-remember="off"', height: 3000 }));
        await tab.locator('[data-feedback-embed]').getByRole('button', { name: 'Feedback' }).click();
        await tab.getByRole('dialog').waitFor();
        const box = (await tab.evaluate(MEASURE)) as { left: number; right: number; launcherRight: number; visible: number; window: number };
        const label = `${width} px, ${corner} corner`;
        t.ok(box.visible < box.window, `${label}: the page shows a scrollbar (${box.window - box.visible} px)`);
        t.ok(box.left >= 16 - 0.5, `${label}: the panel keeps its 16 px margin on the left (${box.left})`);
        t.ok(box.right <= box.visible - 16 + 0.5, `${label}: and on the right, inside the visible width (${box.right} of ${box.visible})`);
        if (width < 412) t.ok(Math.abs(box.right - box.left - (box.visible - 32)) <= 0.5, `${label}: a narrow page: the panel takes the visible width less its margins`);
        else t.equal(box.right - box.left, 380, `${label}: a wide page: the panel is 380 px`);
        if (width === 390) await tab.screenshot({ path: `${ARTIFACTS}embed-classic-scrollbar-${corner}-390.png` });
        await context.close();
      }
    }

    t.test('the panel follows a scrollbar that comes after it opened', async (t) => {
      const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
      t.teardown(() => context.close());
      const tab = await context.newPage();
      // A short page: no scrollbar until its content grows.
      await tab.goto(site.page({ embeds: [['widget', ids.right!]], attributes: 'data-remember="off"', height: 100 }));
      await tab.locator('[data-feedback-embed]').getByRole('button', { name: 'Feedback' }).click();
      await tab.getByRole('dialog').waitFor();
      const before = (await tab.evaluate(MEASURE)) as { left: number; right: number; visible: number; window: number };
      t.equal(before.visible, before.window, 'no scrollbar yet');
      await tab.evaluate(() => { (globalThis as any).document.body.style.minHeight = '4000px'; });
      // Resize observers report on the next frame: waited for.
      await tab.waitForFunction(`(() => { const m = ${MEASURE}; return m.visible < m.window && m.right <= m.visible - 15.5; })()`);
      const after = (await tab.evaluate(MEASURE)) as { left: number; right: number; visible: number };
      t.ok(after.left >= 15.5 && after.right <= after.visible - 15.5, `the panel moved inside the narrower page (${after.left}–${after.right} of ${after.visible})`);
    });
  });
}
