/**
 * Analytics: the account's funnel and its objects ranked by completion
 * (/dashboard/analytics), and one object's funnel, rates over time, weekly
 * scores and splits (/dashboard/{kind}/{id}/analytics), over a date range
 * beside the period just before it.
 */
import { api, query } from '../api.js';
import { duration, funnelChart, lineChart, percent } from '../analytics-charts.js';
import { clear, emptyState, h, kindNames, notice, number, pageHeader, table, titleOf } from '../ui.js';

const KIND_PATHS = { widget: 'widgets', form: 'forms', poll: 'polls' };
const SPLITS = [
  ['utm_source', 'Source (utm_source)'],
  ['referer_domain', 'Referring domain'],
  ['device', 'Device'],
  ['utm_medium', 'Medium (utm_medium)'],
  ['utm_campaign', 'Campaign (utm_campaign)'],
];

function change(now, before, format) {
  if (now === null || before === null || now === undefined || before === undefined) return 'no figures to compare';
  const delta = now - before;
  if (delta === 0) return 'same as the previous period';
  return `${delta > 0 ? '+' : '−'}${format(Math.abs(delta))} on the previous period`;
}

function stat(label, value, detail, slug) {
  return h('div', { class: 'stat stat-static', dataset: { stat: slug } }, h('span', { class: 'stat-label' }, label), h('span', { class: 'stat-value' }, value), h('span', { class: 'stat-detail' }, detail));
}

function funnelStats(data, median) {
  const { funnel, previous } = data;
  const points = (rate) => `${(rate * 100).toFixed(1)} points`;
  return h(
    'section',
    { class: 'stats', 'aria-label': 'Totals in the range' },
    stat('Displays', number(funnel.displays), change(funnel.displays, previous.displays, number), 'displays'),
    stat('Starts', number(funnel.starts), change(funnel.starts, previous.starts, number), 'starts'),
    stat('Responses', number(funnel.responses), change(funnel.responses, previous.responses, number), 'responses'),
    stat('Start rate', percent(funnel.start_rate), change(funnel.start_rate, previous.start_rate, points), 'start-rate'),
    stat('Completion rate', percent(funnel.completion_rate), change(funnel.completion_rate, previous.completion_rate, points), 'completion-rate'),
    median ? stat('Median completion time', duration(median.now), change(median.now, median.before, duration), 'median') : null,
  );
}

/** The range form: from and to (UTC days); applying it navigates, so the range is in the address. */
function rangeForm(range, previous, navigate) {
  const from = h('input', { type: 'date', id: 'range-from', name: 'from', value: range.from, required: true });
  const to = h('input', { type: 'date', id: 'range-to', name: 'to', value: range.to, required: true });
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Date range' },
    h('div', { class: 'field' }, h('label', { for: 'range-from' }, 'From (UTC)'), from),
    h('div', { class: 'field' }, h('label', { for: 'range-to' }, 'To (UTC)'), to),
    h('div', { class: 'filter-actions' }, h('button', { type: 'submit', class: 'btn btn-secondary btn-small' }, 'Apply')),
    h('p', { class: 'card-subtitle range-previous' }, `Compared with ${previous.from} to ${previous.to}`),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    navigate(`${location.pathname}${query({ from: from.value, to: to.value })}`);
  });
  return form;
}

const section = (id, title, subtitle, ...body) =>
  h('section', { class: 'card', 'aria-labelledby': id }, h('div', { class: 'card-header' }, h('h2', { id }, title), subtitle ? h('p', { class: 'card-subtitle' }, subtitle) : null), body);

function splitTable(rows, caption) {
  return table({
    caption,
    captionHidden: true,
    columns: [
      { label: 'Value', rowHeader: true, cell: (row) => (row.value === '' ? 'Not known' : row.value) },
      { label: 'Displays', numeric: true, cell: (row) => number(row.displays) },
      { label: 'Starts', numeric: true, cell: (row) => number(row.starts) },
      { label: 'Responses', numeric: true, cell: (row) => number(row.responses) },
      { label: 'Completion rate', numeric: true, cell: (row) => percent(row.completion_rate) },
    ],
    rows,
  });
}

export async function render(container, { params, navigate, isCurrent }) {
  const search = new URLSearchParams(location.search);
  const range = query({ from: search.get('from') ?? '', to: search.get('to') ?? '' });
  if (params.length === 0) return renderAccount(container, range, navigate, isCurrent);
  const [kind, id] = params;
  const [object, data] = await Promise.all([api(`/${kind}/${id}`), api(`/${kind}/${id}/analytics${range}`)]);
  if (!isCurrent()) return;
  const title = titleOf(object);
  document.title = `Analytics · ${title} · Feedback`;
  const names = kindNames(kind);
  const perDay = data.per_day;
  const splits = SPLITS.filter(([facet]) => data.by[facet].length > 0);
  clear(
    container,
    pageHeader(`Analytics: ${title}`, { eyebrow: names.One, actions: [h('a', { class: 'btn btn-secondary', href: `/dashboard/${kind}/${id}` }, `Back to the ${names.one}`)] }),
    rangeForm(data.range, data.previous_range, navigate),
    funnelStats(data, { now: data.median_completion_ms, before: data.previous_median_completion_ms }),
    h(
      'div',
      { class: 'grid-2' },
      section('funnel-title', 'Funnel', 'Each visit counted once: displayed, started (first answer), completed', funnelChart(data.funnel, { caption: `Funnel from ${data.range.from} to ${data.range.to}` })),
      section('completion-title', 'Completion rate per day', 'Responses ÷ displays, UTC days', lineChart(perDay.map((d) => ({ day: d.day, value: d.completion_rate })), { caption: 'Completion rate per day', label: 'Completion rate', format: percent, slug: 'completion-rate', yRange: [0, 1] })),
      section('median-title', 'Median completion time per day', 'From the moment the visitor loaded it to the submission', lineChart(perDay.map((d) => ({ day: d.day, value: d.median_completion_ms })), { caption: 'Median completion time per day', label: 'Median completion time', format: duration, slug: 'median-time', minSpan: 60_000 })),
      section('dropoff-title', 'Drop-off per page', null, notice('Drop-off per page needs the progress of unfinished answers, which is not recorded yet: the funnel shows how many started and did not complete.')),
    ),
    data.trends.length
      ? h(
          'div',
          { class: 'grid-2' },
          data.trends.map((trend, i) =>
            section(
              `trend-${i}`,
              `${trend.type === 'nps' ? 'NPS' : 'Average rating'}: ${trend.title}`,
              'By week (weeks start on Monday, UTC)',
              lineChart(
                trend.weeks.map((w) => ({ day: w.week, value: w.value })),
                { caption: `${trend.type === 'nps' ? 'NPS' : 'Average rating'} of “${trend.title}” by week`, label: trend.type === 'nps' ? 'NPS' : 'Average', format: (v) => (trend.type === 'nps' ? String(Math.round(v)) : v.toFixed(2)), slug: `trend-${trend.question_id}`, yRange: trend.type === 'nps' ? [-100, 100] : [0, 10] },
              ),
            ),
          ),
        )
      : null,
    section(
      'split-title',
      'Funnel by source and device',
      'As far as the plan records them; “Not known” where the visit did not tell',
      splits.length ? splits.map(([facet, label]) => h('div', { class: 'split', dataset: { split: facet } }, h('h3', {}, label), splitTable(data.by[facet], `Funnel by ${label}`))) : emptyState('No visits in this range', 'Displays show here once the embed has been seen.'),
    ),
    section('country-title', 'Countries', 'Ranked by responses, then displays (Business plan)', data.by.country.length ? h('div', { dataset: { split: 'country' } }, splitTable(data.by.country, 'Funnel by country')) : emptyState('No countries recorded', 'Countries are recorded on the Business plan.')),
  );
}

async function renderAccount(container, range, navigate, isCurrent) {
  const data = await api(`/analytics${range}`);
  if (!isCurrent()) return;
  document.title = 'Analytics · Feedback';
  const objectTable = (rows, caption, compact = false) =>
    table({
      caption,
      captionHidden: true,
      columns: [
        { label: 'Object', rowHeader: true, cell: (row) => h('a', { href: `/dashboard/${KIND_PATHS[row.kind]}/${row.id}/analytics${range}` }, row.title || 'Untitled') },
        compact ? null : { label: 'Kind', cell: (row) => kindNames(KIND_PATHS[row.kind]).One },
        { label: 'Displays', numeric: true, cell: (row) => number(row.displays) },
        compact ? null : { label: 'Responses', numeric: true, cell: (row) => number(row.responses) },
        { label: 'Completion rate', numeric: true, cell: (row) => percent(row.completion_rate) },
      ].filter(Boolean),
      rows,
    });
  clear(
    container,
    pageHeader('Analytics', { meta: 'Displays, starts and responses of every widget, form and poll' }),
    rangeForm(data.range, data.previous_range, navigate),
    funnelStats(data, null),
    h(
      'div',
      { class: 'grid-2' },
      section('best-title', 'Best converting', 'Highest completion rate among those displayed', data.best.length ? objectTable(data.best, 'Best converting', true) : emptyState('No displays in this range', null)),
      section('worst-title', 'Worst converting', 'Lowest completion rate among those displayed', data.worst.length ? objectTable(data.worst, 'Worst converting', true) : emptyState('No displays in this range', null)),
    ),
    section('objects-title', 'Every object', 'Most responses first', data.objects.length ? objectTable(data.objects, 'Every object') : emptyState('Nothing yet', 'Create a widget, form or poll to see its figures.')),
  );
}
