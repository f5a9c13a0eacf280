/**
 * The analytics page's charts: lines over time (rates, medians, weekly
 * scores) and the funnel, each with a visually hidden table of its figures
 * (the canvas is hidden from screen readers).
 */
import uPlot from '/dashboard/assets/vendor/uplot.esm.js';
import { axes, mount, palette } from './charts.js';
import { day, h, number } from './ui.js';

export const percent = (rate) => (rate === null || rate === undefined ? '—' : `${(rate * 100).toFixed(1)}%`);
export function duration(ms) {
  if (ms === null || ms === undefined) return '—';
  const seconds = Math.round(ms / 1000);
  return seconds < 60 ? `${seconds} s` : seconds % 60 === 0 ? `${seconds / 60} min` : `${Math.floor(seconds / 60)} min ${seconds % 60} s`;
}

/**
 * A line over UTC days: `points` is [{day, value}], a null value a gap.
 * `format` writes a value for the readout and the table.
 */
export function lineChart(points, { caption, label, format = (v) => number(v), height = 200, slug, yRange = null, minSpan = 1 }) {
  const xs = points.map((point) => Date.parse(`${point.day}T00:00:00Z`) / 1000);
  const ys = points.map((point) => point.value);
  const known = points.filter((point) => point.value !== null && point.value !== undefined);
  const idle = known.length ? `${known.length} of ${points.length} ${points.length === 1 ? 'point' : 'points'} with figures` : 'No figures in this range yet';
  const status = h('p', { class: 'chart-readout', 'aria-hidden': 'true' }, idle);
  const figures = h(
    'table',
    { dataset: { chartData: slug } },
    h('caption', {}, `${caption}; days without figures are left out`),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Day (UTC)'), h('th', { scope: 'col' }, label))),
    h('tbody', {}, known.map((point) => h('tr', { dataset: { day: point.day } }, h('th', { scope: 'row' }, point.day), h('td', {}, format(point.value))))),
  );
  const wrapper = h('figure', { class: 'chart' }, status, h('div', { class: 'visually-hidden' }, figures));
  return mount(wrapper, (target, width) => {
    const colours = palette();
    const [x, y] = axes(colours, (u, ticks) => ticks.map((tick) => day(new Date(tick * 1000).toISOString().slice(0, 10))));
    return new uPlot(
      {
        width,
        height,
        padding: [8, 8, 0, 0],
        legend: { show: false },
        cursor: { y: false, drag: { x: false, y: false } },
        select: { show: false },
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        scales: { x: { time: true, range: (u, min, max) => [min - 43200, max + 43200] }, y: { range: yRange ? () => yRange : (u, min, max) => [0, Math.max(minSpan, (max ?? 0) * 1.15)] } },
        axes: [x, { ...y, incrs: undefined, values: (u, ticks) => ticks.map((tick) => format(tick)), size: 64 }],
        series: [{}, { label, stroke: colours.accent, width: 2, spanGaps: false, points: { show: known.length < 40, size: 5, fill: colours.accent } }],
        hooks: {
          setCursor: [
            (u) => {
              const index = u.cursor.idx;
              const point = index === null || index === undefined ? null : points[index];
              status.textContent = point ? `${day(point.day)}: ${point.value === null ? 'no figures' : format(point.value)}` : idle;
            },
          ],
        },
      },
      [xs, ys],
      target,
    );
  });
}

/** The funnel as bars: displayed, started, completed, each with its share of displays. */
export function funnelChart(funnel, { caption = 'Funnel', height = 200 } = {}) {
  const steps = [
    { label: 'Displayed', count: funnel.displays, rate: funnel.displays ? 1 : null },
    { label: 'Started', count: funnel.starts, rate: funnel.start_rate },
    { label: 'Completed', count: funnel.responses, rate: funnel.completion_rate },
  ];
  const status = h('p', { class: 'chart-readout', 'aria-hidden': 'true' }, steps.map((step, i) => `${step.label} ${number(step.count)}${i > 0 ? ` (${percent(step.rate)})` : ''}`).join(' → '));
  const figures = h(
    'table',
    { dataset: { chartData: 'funnel' } },
    h('caption', {}, caption),
    h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Step'), h('th', { scope: 'col' }, 'Visits'), h('th', { scope: 'col' }, 'Of displays'))),
    h('tbody', {}, steps.map((step) => h('tr', { dataset: { step: step.label.toLowerCase() } }, h('th', { scope: 'row' }, step.label), h('td', {}, String(step.count)), h('td', {}, percent(step.rate))))),
  );
  const wrapper = h('figure', { class: 'chart chart-small' }, status, h('div', { class: 'visually-hidden' }, figures));
  return mount(wrapper, (target, width) => {
    const colours = palette();
    const [x, y] = axes(colours, (u, ticks) => ticks.map((tick) => (Number.isInteger(tick) && steps[tick] ? steps[tick].label : '')));
    return new uPlot(
      {
        width,
        height,
        padding: [8, 8, 0, 0],
        legend: { show: false },
        cursor: { y: false, points: { show: false }, drag: { x: false, y: false } },
        select: { show: false },
        scales: { x: { time: false, range: [-0.5, 2.5] }, y: { range: (u, min, max) => [0, Math.max(4, Math.ceil(max * 1.15))] } },
        axes: [{ ...x, splits: () => [0, 1, 2], gap: 4 }, y],
        series: [{}, { label: 'Visits', stroke: colours.accent, fill: colours.accent, width: 0, paths: uPlot.paths.bars({ size: [0.6, 80], gap: 2, radius: 0.15 }), points: { show: false } }],
      },
      [[0, 1, 2], steps.map((step) => step.count)],
      target,
    );
  });
}
