/**
 * The dashboard's summary of a form with one question of every type, in a
 * real browser: every question the service counts has a chart, and each
 * chart's visually hidden table holds the figures the summary API gives
 * (choices, a number's histogram, NPS by group, a matrix per row, average
 * places of a ranking, counts per day of a date). axe finds nothing serious
 * at 1280 and 390 px; screenshots go to test-artifacts/dashboard/.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import type { Page } from 'playwright-core';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { owner, tokenFor } from '../support/app.js';
import { ARTIFACTS, CHROMIUM, launch } from '../support/embed-site.js';
import { EVERY_TYPE, SENT } from '../support/every-type.js';
import { startServer } from '../support/processes.js';
import { tempDir, testServices } from '../support/services.js';
import { signedInPage } from '../support/signed-in.js';

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = `${ARTIFACTS}dashboard/`;
const CHROME_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
/** Beside every type: a number of many distinct values, which the histogram puts in bins. */
const QUESTIONS = [...EVERY_TYPE, { id: 'spend', type: 'number', title: 'What did you spend?', min: 0, max: 1000 }];

async function axe(tab: Page): Promise<string[]> {
  if (!(await tab.evaluate('typeof window.axe === "object"'))) await tab.evaluate(AXE);
  const violations = (await tab.evaluate(
    'axe.run(document, { preload: false, resultTypes: ["violations"] }).then((r) => r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(" ")).slice(0, 3) })))',
  )) as Array<{ id: string; impact: string; nodes: string[] }>;
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical').map((v) => `${v.id} (${v.impact}) at ${v.nodes.join(', ')}`);
}

/** Every chart drawn at its box's width, nothing loading. */
async function settled(tab: Page): Promise<void> {
  await tab.waitForFunction(() => {
    const doc = (globalThis as any).document;
    if (doc.querySelector('.loading, .summary-loading, [aria-busy="true"]')) return false;
    const boxes = [...doc.querySelectorAll('.chart-canvas')];
    return boxes.length > 0 && boxes.every((box: any) => {
      const plot = box.querySelector('.uplot');
      return plot && Math.abs(plot.getBoundingClientRect().width - box.clientWidth) <= 2;
    });
  });
}

/** The rows of the hidden tables of the charts of the question card titled `title`, as [label, figure] pairs, table by table. */
function figures(tab: Page, title: string): Promise<string[][][]> {
  return tab
    .locator('.question-grid section.card')
    .filter({ has: tab.getByRole('heading', { name: title, exact: true }) })
    .locator('figure.chart table')
    .evaluateAll((tables) => tables.map((table: any) => [...table.querySelectorAll('tbody tr')].map((row: any) => [row.querySelector('th').textContent, row.querySelector('td').textContent])));
}

if (!existsSync(CHROMIUM)) {
  t.skip(`skipped: no Chromium at ${CHROMIUM}`, () => {});
} else {
  t.test("a form of every type: each question's chart and its figures", async (t) => {
    mkdirSync(SHOTS, { recursive: true });
    const dir = tempDir(t);
    const services = await testServices(t, { dataDir: dir });
    const app = await buildApp(services);
    const biz = await owner(services, 'business');
    const created = await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Your stay', questions: QUESTIONS } });
    const form = created.json().id as string;
    await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: biz.headers, payload: { published: true } });
    // Twenty-four answers that differ in every counted question.
    const orders = [['quiet', 'location', 'price'], ['price', 'quiet', 'location'], ['location', 'price', 'quiet']];
    for (let i = 0; i < 24; i++) {
      const answers = {
        ...SENT,
        guests: 1 + (i % 5),
        arrival: `2026-12-${String(20 + (i % 4)).padStart(2, '0')}`,
        room: ['single', 'double', 'suite'][i % 3],
        floor: i % 2 ? 'high' : 'low',
        extras: [['breakfast'], ['parking', 'late'], []][i % 3],
        stars: 1 + (i % 5),
        nps: i % 11,
        calm: 1 + (i % 7),
        again: i % 4 !== 0,
        order: orders[i % 3],
        grid: { staff: ['poor', 'fine', 'great'][i % 3], food: ['great', 'fine'][i % 2] },
        spend: i * 37.5,
      };
      const reply = await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, headers: { 'user-agent': CHROME_UA }, payload: { _token: await tokenFor(app, 'forms', form), answers } });
      if (reply.statusCode !== 201 && reply.statusCode !== 200) throw new Error(`not submitted: ${reply.body}`);
    }
    await app.close();
    await services.close();

    const server = await startServer({ DATA_DIR: dir });
    t.teardown(() => server.stop());
    const browser = await launch(t);
    const { tab, errors } = await signedInPage(browser, { url: server.url, dataDir: dir }, biz.accountId, { viewport: { width: 1280, height: 800 }, reducedMotion: 'reduce' });
    await tab.goto(`${server.url}/dashboard/forms/${form}`);
    await tab.getByRole('heading', { name: 'Rank what matters most' }).waitFor();
    await settled(tab);
    const summary = (await tab.evaluate(`fetch('/dashboard/api/forms/${form}/summary').then((r) => r.json())`)) as { questions: Array<Record<string, any>> };
    const of = (id: string) => summary.questions.find((q) => q.question_id === id)!;
    const counts = (rows: Array<{ label?: string; value: unknown; count: number }>) => rows.map((r) => [r.label ?? (r.value === true ? 'Yes' : r.value === false ? 'No' : String(r.value)), String(r.count)]);

    t.strictSame(await figures(tab, 'Room'), [counts(of('room').choices)], 'a single choice: each choice and its count');
    t.strictSame(await figures(tab, 'Extras'), [counts(of('extras').choices)], 'a multiple choice: each choice and its count');
    t.strictSame(await figures(tab, 'Would you stay again?'), [[['Yes', '18'], ['No', '6']]], 'yes or no');
    t.strictSame(await figures(tab, 'Stars'), [counts(of('stars').rating.distribution)], 'a star rating: its distribution');
    t.strictSame(await figures(tab, 'How calm was it?'), [counts(of('calm').rating.distribution)], 'an opinion scale: its distribution');
    const nps = of('nps').nps;
    t.strictSame(await figures(tab, 'How likely are you to recommend us?'), [[['Detractors (0–6)', String(nps.detractors)], ['Passives (7–8)', String(nps.passives)], ['Promoters (9–10)', String(nps.promoters)]]], 'NPS by group');
    t.match(await tab.locator('figure[class~="chart"] caption', { hasText: 'by group; NPS' }).textContent(), `NPS ${nps.score}`, 'the NPS score in the chart caption');
    t.strictSame(await figures(tab, 'Guests'), [counts(of('guests').number.distribution)], 'a number of few values: one bar per value');
    const spend = (await figures(tab, 'What did you spend?'))[0]!;
    t.equal(spend.length, 10, 'a number of many values: ten bins');
    t.equal(spend.reduce((sum, [, count]) => sum + Number(count), 0), 24, 'the bins hold every answer');
    t.strictSame(spend[0], ['0–86.25', '3'], 'the first bin: from the least value, a tenth of the range');
    const extreme = (await tab.evaluate(
      "import('/dashboard/assets/charts.js').then((m) => m.histogram(Array.from({ length: 20 }, (_, i) => ({ value: (i - 10) * 1.7e307, count: 1 }))).concat(m.histogram([{ value: -1.7e308, count: 1 }, ...Array.from({ length: 18 }, (_, i) => ({ value: i, count: 1 })), { value: 1.7e308, count: 1 }])))",
    )) as Array<{ label: string; count: number }>;
    t.ok(extreme.every((bin) => !/∞|NaN/.test(bin.label)), 'the largest numbers a question takes make bins of finite bounds');
    t.equal(extreme.slice(10).reduce((sum, bin) => sum + bin.count, 0), 20, 'each answer in one bin, from -1.7e308 to 1.7e308');
    t.strictSame(
      await figures(tab, 'Rank what matters most'),
      [of('order').ranking.map((r: any) => [r.label, r.average_rank.toFixed(2)])],
      'a ranking: each choice with its average place, best first',
    );
    t.strictSame(await figures(tab, 'Rate each'), of('grid').matrix.map((row: any) => counts(row.columns)), 'a matrix: one chart per row, each column counted');
    t.strictSame(await figures(tab, 'Arrival'), [of('arrival').dates.map((d: any) => [d.day, String(d.count)])], 'a date: counts per day named');
    t.strictSame(await figures(tab, 'Your name'), [], 'a text question has no chart');

    for (const [width, height] of [[1280, 800], [390, 844]] as const) {
      await tab.setViewportSize({ width, height });
      await settled(tab);
      await tab.screenshot({ path: `${SHOTS}summaries-every-type-${width}.png`, fullPage: true });
      t.same(await axe(tab), [], `axe: nothing serious or critical at ${width} px`);
      t.equal(await tab.evaluate('document.documentElement.scrollWidth'), width, `fits ${width} px without scrolling sideways`);
    }
    t.same(errors, [], 'no uncaught error');
  });
}
