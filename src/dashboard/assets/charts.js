/**
 * Charts are uPlot's: this module only feeds it data, picks colours from the
 * design tokens and keeps a visually hidden table beside each chart so screen
 * readers get the figures (the canvas itself is hidden from them).
 */
import uPlot from '/dashboard/assets/vendor/uplot.esm.js';
import { day, h, number } from './ui.js';

const live = new Set();

function token(name) {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

export function palette() {
  return {
    accent: token('--color-accent'),
    accentSoft: token('--color-accent-soft'),
    grid: token('--color-border'),
    axis: token('--color-text-muted'),
    font: `${token('--text-xs-px') || '12px'} ${token('--font-sans')}`,
  };
}

// Charts drawn on a canvas do not follow CSS: redraw them when the system switches between light and dark.
const dark = matchMedia('(prefers-color-scheme: dark)');
dark.addEventListener('change', () => {
  for (const chart of live) chart.redraw();
});

/**
 * Mounts uPlot once the wrapper has a width, resizes it with the wrapper and
 * forgets it when the page replaces the wrapper.
 */
export function mount(wrapper, build) {
  const target = h('div', { class: 'chart-canvas', 'aria-hidden': 'true' });
  wrapper.prepend(target);
  let plot = null;
  const draw = (width) => {
    // Which palette the canvas has: the CSS around it changes at once, the canvas only when redrawn.
    wrapper.dataset.scheme = dark.matches ? 'dark' : 'light';
    return build(target, width);
  };
  const entry = {
    redraw() {
      if (!plot) return;
      plot.destroy();
      plot = draw(target.clientWidth);
    },
  };
  const observer = new ResizeObserver(() => {
    if (!wrapper.isConnected) {
      observer.disconnect();
      plot?.destroy();
      live.delete(entry);
      return;
    }
    const width = Math.floor(target.clientWidth);
    if (width <= 0) return;
    if (!plot) {
      plot = draw(width);
      live.add(entry);
    } else if (Math.abs(plot.width - width) > 1) plot.setSize({ width, height: plot.height });
  });
  observer.observe(target);
  return wrapper;
}

// Counts are whole numbers: ticks only on 1, 2, 5, 10, 20, 50…
const WHOLE_STEPS = [1, 2, 5].flatMap((step) => [1, 10, 100, 1000, 10000, 100000, 1000000].map((scale) => step * scale)).sort((a, b) => a - b);

export function axes(colours, xValues) {
  const base = { stroke: colours.axis, font: colours.font, grid: { stroke: colours.grid, width: 1 }, ticks: { show: false } };
  return [
    { ...base, grid: { show: false }, space: 56, size: 28, values: xValues },
    { ...base, size: 44, incrs: WHOLE_STEPS, values: (u, ticks) => ticks.map((value) => number(value)) },
  ];
}

const utcDay = (seconds) => day(new Date(seconds * 1000).toISOString().slice(0, 10));

const measure = document.createElement('canvas').getContext('2d');

/** The label, cut with an ellipsis to fit `room` px in `font`: drawn whole, long ones ran over their neighbours. */
function fitted(label, room, font) {
  measure.font = font;
  if (measure.measureText(label).width <= room) return label;
  const characters = Array.from(label);
  let kept = characters.length;
  while (kept > 1 && measure.measureText(`${characters.slice(0, kept).join('')}…`).width > room) kept--;
  return `${characters.slice(0, kept).join('')}…`;
}

function readout(element, text) {
  element.textContent = text;
}

/**
 * Responses per UTC day, as bars. `per_day` is the API's
 * [{day: 'YYYY-MM-DD', count}], oldest first.
 */
export function perDayChart(perDay, { caption = 'Responses per day', height = 220, unit = ['response', 'responses'], valueLabel = 'Responses', dayLabel = 'Day (UTC)', overall, kind = 'per-day' } = {}) {
  const xs = perDay.map((point) => Date.parse(`${point.day}T00:00:00Z`) / 1000);
  const ys = perDay.map((point) => point.count);
  const total = ys.reduce((sum, count) => sum + count, 0);
  // A window of days (the last 90) says so; days that answers name (a date question) say how many in all.
  const whole = overall ?? `${number(total)} in the last ${perDay.length} days`;
  const status = h('p', { class: 'chart-readout', 'aria-hidden': 'true' }, whole);
  // The readout sits above the chart; the canvas is hidden from screen readers, which read the table.
  const withResponses = perDay.filter((point) => point.count > 0);
  const figures = h(
    'table',
    { dataset: { chartData: kind } },
    h('caption', {}, overall ? `${caption}: ${whole}` : `${caption}: ${whole}; days without ${unit[1]} are left out`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, dayLabel), h('th', { scope: 'col' }, valueLabel))),
    h('tbody', {}, withResponses.map((point) => h('tr', { dataset: { day: point.day } }, h('th', { scope: 'row' }, point.day), h('td', {}, String(point.count))))),
  );
  const wrapper = h('figure', { class: 'chart', dataset: { total: String(total) } }, status, h('div', { class: 'visually-hidden' }, figures));
  return mount(wrapper, (target, width) => {
    const colours = palette();
    return new uPlot(
      {
        width,
        height,
        padding: [8, 8, 0, 0],
        legend: { show: false },
        cursor: { y: false, points: { show: false }, drag: { x: false, y: false } },
        select: { show: false },
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        // Half a day either side, so the first and last bars are drawn whole.
        scales: { x: { time: true, range: (u, min, max) => [min - 43200, max + 43200] }, y: { range: (u, min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] } },
        axes: axes(colours, (u, ticks) => ticks.map(utcDay)),
        series: [
          {},
          {
            label: valueLabel,
            stroke: colours.accent,
            fill: colours.accent,
            width: 0,
            paths: uPlot.paths.bars({ size: [0.72, 24], gap: 1, radius: 0.25 }),
            points: { show: false },
          },
        ],
        hooks: {
          setCursor: [
            (u) => {
              const index = u.cursor.idx;
              readout(status, index === null || index === undefined ? whole : `${day(perDay[index].day)}: ${number(perDay[index].count)} ${perDay[index].count === 1 ? unit[0] : unit[1]}`);
            },
          ],
        },
      },
      [xs, ys],
      target,
    );
  });
}

/**
 * Counts per category (a rating's distribution, a choice, a device), as
 * bars. `items` is [{label, count}].
 */
export function categoryChart(items, { caption, height = 180, unit = ['response', 'responses'], kind = 'categories', valueLabel = 'Count', labelHeading = 'Value', measure: measured } = {}) {
  const units = (count) => `${number(count)} ${count === 1 ? unit[0] : unit[1]}`;
  const xs = items.map((_, index) => index);
  const ys = items.map((item) => item.count);
  const total = ys.reduce((sum, count) => sum + count, 0);
  const share = (count) => (total ? `${Math.round((count / total) * 100)}%` : '0%');
  // A measure (a mean place) is not a count: no share, no total, its own figure in the readout.
  const whole = measured ? measured.overall : units(total);
  const status = h('p', { class: 'chart-readout', 'aria-hidden': 'true' }, whole);
  const figures = h(
    'table',
    { dataset: { chartData: kind } },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, labelHeading), h('th', { scope: 'col' }, valueLabel), h('th', { scope: 'col' }, measured ? measured.extraHeading : 'Share'))),
    h(
      'tbody',
      {},
      items.map((item) =>
        h('tr', {}, h('th', { scope: 'row' }, item.label), h('td', {}, measured ? measured.format(item.count) : String(item.count)), h('td', {}, measured ? measured.extra(item) : share(item.count))),
      ),
    ),
  );
  const wrapper = h('figure', { class: 'chart chart-small' }, status, h('div', { class: 'visually-hidden' }, figures));
  return mount(wrapper, (target, width) => {
    const colours = palette();
    return new uPlot(
      {
        width,
        height,
        padding: [8, 8, 0, 0],
        legend: { show: false },
        cursor: { y: false, points: { show: false }, drag: { x: false, y: false } },
        select: { show: false },
        scales: { x: { time: false, range: [-0.5, Math.max(items.length - 0.5, 0.5)] }, y: { range: (u, min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] } },
        axes: (() => {
          // A label longer than its bar's room is cut with an ellipsis: drawn whole, long ones overlapped their neighbours.
          const [x, y] = axes(colours, (u, ticks) => {
            const room = u.width / Math.max(items.length, 1) - 8;
            return ticks.map((tick) => (Number.isInteger(tick) && items[tick] ? fitted(items[tick].label, room, colours.font) : ''));
          });
          return [{ ...x, splits: () => xs, gap: 4 }, y];
        })(),
        series: [
          {},
          {
            label: unit[1],
            stroke: colours.accent,
            fill: colours.accent,
            width: 0,
            paths: uPlot.paths.bars({ size: [0.6, 56], gap: 2, radius: 0.15 }),
            points: { show: false },
          },
        ],
        hooks: {
          setCursor: [
            (u) => {
              const index = u.cursor.idx;
              readout(
                status,
                index === null || index === undefined
                  ? whole
                  : measured
                    ? `${items[index].label}: ${measured.format(items[index].count)}`
                    : `${items[index].label}: ${units(items[index].count)} (${share(items[index].count)})`,
              );
            },
          ],
        },
      },
      [xs, ys],
      target,
    );
  });
}

/** At most this many bars in a histogram: more distinct values are put in equal bins. */
const BINS = 10;

/**
 * A number question's distribution ([{value, count}], ascending) as the bars
 * of a histogram: one bar per value while there are few, else BINS bins of
 * equal width from the least to the greatest value, each labelled "from–to"
 * (a value on a boundary is counted in the bin it starts; the last bin keeps
 * the greatest value).
 */
export function histogram(distribution) {
  if (distribution.length <= BINS * 1.2) return distribution.map((item) => ({ label: number(item.value), count: item.count }));
  const least = distribution[0].value;
  const greatest = distribution.at(-1).value;
  // In tenths of each end: the largest numbers a question takes would overflow their difference.
  const width = greatest / BINS - least / BINS;
  const at = (i) => (i === BINS ? greatest : least * (1 - i / BINS) + greatest * (i / BINS));
  const bins = Array.from({ length: BINS }, (_, i) => ({ from: at(i), to: at(i + 1), count: 0 }));
  for (const item of distribution) bins[Math.min(BINS - 1, Math.floor(((item.value / BINS - least / BINS) / width) * BINS))].count += item.count;
  const round = (value) => number(Math.abs(value) < 1e15 ? Math.round(value * 100) / 100 : value);
  return bins.map((bin) => ({ label: `${round(bin.from)}–${round(bin.to)}`, count: bin.count }));
}
