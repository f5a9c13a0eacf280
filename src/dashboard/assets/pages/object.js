/**
 * One widget, form or poll: its state and actions (edit, publish, delete),
 * the snippet to paste, its summary and charts, and its responses (paged,
 * filtered by day, downloadable) or a poll's results.
 */
import { api, ApiError, query } from '../api.js';
import { categoryChart, histogram, perDayChart } from '../charts.js';
import { snippetOf } from '../snippet.js';
import { notificationsCard } from './notifications.js';
import {
  announce, clear, confirmDialog, copyButton, date, dateTime, shortDate, emptyState, errorMessage, h, kindNames, notice, number, pageHeader, pager, statusPill, table, titleOf,
} from '../ui.js';

const TYPE_NAMES = { feedback: 'Feedback widget', nps: 'NPS widget', contact: 'Contact widget', bug_report: 'Bug report widget', custom: 'Custom widget' };
const LIMIT = 20;

export async function render(container, { params, navigate, isCurrent, session }) {
  const [kind, id] = params;
  const names = kindNames(kind);
  const object = await api(`/${kind}/${id}`);
  if (!isCurrent()) return;
  const title = titleOf(object);
  document.title = `${title} · ${names.Many} · Feedback`;

  const pillHolder = h('span', { class: 'pill-holder' });
  const publishButton = h('button', { type: 'button', class: 'btn btn-primary' });
  const status = h('div', { class: 'inline-status' });
  const setPublished = (published) => {
    object.published = published;
    clear(pillHolder, statusPill(published));
    publishButton.textContent = published ? 'Unpublish' : 'Publish';
    publishButton.className = `btn ${published ? 'btn-secondary' : 'btn-primary'}`;
    snippetNote.hidden = published;
  };
  publishButton.addEventListener('click', async () => {
    publishButton.disabled = true;
    clear(status);
    try {
      const reply = await api(`/${kind}/${id}`, { method: 'PUT', body: { published: !object.published } });
      setPublished(reply?.published ?? !object.published);
      announce(object.published ? `${names.One} published` : `${names.One} unpublished`);
    } catch (error) {
      clear(status, notice(errorMessage(error), 'danger'));
    } finally {
      publishButton.disabled = false;
    }
  });

  const deleteButton = h('button', { type: 'button', class: 'btn btn-danger-ghost' }, 'Delete');
  deleteButton.addEventListener('click', async () => {
    const what = kind === 'polls' ? 'votes' : 'responses';
    const confirmed = await confirmDialog({
      title: `Delete “${title}”?`,
      body: `The ${names.one} and all its ${what} are deleted for good. Sites that embed it stop showing it.`,
      confirm: `Delete ${names.one}`,
    });
    if (!confirmed) return deleteButton.focus();
    deleteButton.disabled = true;
    try {
      const reply = await api(`/${kind}/${id}`, { method: 'DELETE' });
      announce(reply?.pending ? `${names.One} deleted; its ${what} are still being erased` : `${names.One} deleted`);
      navigate(`/dashboard/${kind}`);
    } catch (error) {
      deleteButton.disabled = false;
      clear(status, notice(errorMessage(error), 'danger'));
    }
  });

  const metaRow = h('span', { class: 'meta-row' }, pillHolder, h('span', {}, `Created ${date(object.created_at)}`), object.version ? h('span', {}, `Version ${object.version}`) : null);
  const header = pageHeader(title, {
    eyebrow: h('span', {}, h('a', { href: `/dashboard/${kind}` }, names.Many), ' / ', kind === 'widgets' ? TYPE_NAMES[object.widget_type] ?? names.One : names.One),
    meta: metaRow,
    actions: [h('a', { class: 'btn btn-secondary', href: `/dashboard/${kind}/${id}/edit` }, 'Edit'), h('a', { class: 'btn btn-secondary', href: `/dashboard/${kind}/${id}/analytics` }, 'Analytics'), publishButton, deleteButton],
  });

  let snippet = snippetOf(location.origin, names.one, id);
  const snippetCode = h('code', {}, snippet);
  const snippetNote = h('p', { class: 'muted small' }, `This ${names.one} is a draft: publish it to accept ${kind === 'polls' ? 'votes' : 'responses'}.`);
  const shareArea = h('div', { class: 'share' });
  const embedCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'embed-title' },
    h('div', { class: 'card-header' }, h('h2', { id: 'embed-title' }, 'Add it to your site'), copyButton(() => snippet, 'Copy snippet')),
    h('p', { class: 'muted small' }, kind === 'widgets' ? 'Paste this tag into every page that should show it.' : 'Paste this where the page should show it. The box keeps its space, so nothing on the page moves while it loads. With several on one page, the script tag is needed once.'),
    h('pre', { class: 'code snippet', tabindex: '0', 'aria-label': 'Embed snippet' }, snippetCode),
    snippetNote,
    shareArea,
  );
  setPublished(object.published);
  if (kind !== 'widgets') {
    // The service works out the space from the definition as it is now, and the hosted page's link and QR code.
    api(`/${kind}/${id}/share`).then((share) => {
      if (!isCurrent()) return;
      snippet = snippetOf(location.origin, names.one, id, share.min_height.css);
      snippetCode.textContent = snippet;
      clear(shareArea, hostedLink(names, share));
    }, (error) => clear(shareArea, notice(`The hosted page's link is not available: ${errorMessage(error)}`, 'danger')));
  }

  const summaryArea = h('div', { class: 'summary-area' }, h('div', { class: 'card summary-loading' }, h('p', { class: 'muted' }, 'Loading the summary…')));
  const insights = h('div', { class: 'insights', hidden: true });
  const loadSummary = async () => {
    const [summary, results] = await Promise.all([
      api(`/${kind}/${id}/summary`).catch((error) => error),
      kind === 'polls' ? api(`/polls/${id}/results`).catch((error) => error) : null,
    ]);
    if (isCurrent()) renderSummary(summaryArea, insights, kind, summary, results);
  };
  // A deleted response leaves the summary and charts too.
  const responsesArea = kind === 'polls' ? h('div') : responsesCard(kind, id, object, session, loadSummary);
  const dropOffArea = kind === 'forms' && object.settings?.keep_partial ? dropOffCard(id, object, isCurrent) : null;

  clear(container, header, status, h('div', { class: 'grid-2-1 object-top' }, summaryArea, embedCard), insights, ...(dropOffArea ? [dropOffArea] : []), responsesArea, notificationsCard(kind, id, session));

  await loadSummary();
}

/** The hosted page: its link to copy and open, and a QR code of it to print or download. */
function hostedLink(names, share) {
  const qr = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(share.qr_svg)}`;
  return h(
    'div',
    { class: 'hosted' },
    h('h3', { id: 'hosted-title' }, 'Its own page'),
    h('p', { class: 'muted small' }, `A page of this service showing only the ${names.one}, to send by email or chat, or print as a QR code.`),
    h('div', { class: 'hosted-link' }, h('a', { href: share.hosted_url, target: '_blank', rel: 'noopener', class: 'code' }, share.hosted_url), copyButton(share.hosted_url, 'Copy link')),
    h(
      'figure',
      { class: 'hosted-qr' },
      h('img', { src: qr, width: '160', height: '160', alt: `QR code of ${share.hosted_url}` }),
      h('figcaption', {}, h('a', { href: qr, download: `${names.one}-qr.svg` }, 'Download the QR code (SVG)')),
    ),
  );
}

const moment = (iso) => (iso ? h('time', { datetime: iso, title: dateTime(iso) }, shortDate(iso)) : '—');

function statCard(label, value, detail) {
  return h('div', { class: 'stat stat-static' }, h('span', { class: 'stat-label' }, label), h('span', { class: 'stat-value' }, value), detail ? h('span', { class: 'stat-detail' }, detail) : null);
}

function renderSummary(area, insights, kind, summary, results) {
  const what = kind === 'polls' ? 'Votes' : 'Responses';
  if (summary instanceof Error) {
    clear(area, h('div', { class: 'card' }, notice(`The summary is not available: ${errorMessage(summary)}`, 'danger')));
    return;
  }
  clear(
    area,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'summary-title' },
      h('div', { class: 'card-header' }, h('h2', { id: 'summary-title' }, 'Summary'), h('p', { class: 'card-subtitle' }, 'Last 90 days, UTC')),
      h(
        'div',
        { class: 'stats stats-compact' },
        statCard(what, number(summary.total)),
        statCard('First', moment(summary.first_at)),
        statCard('Latest', moment(summary.last_at)),
      ),
      perDayChart(summary.per_day, { caption: `${what} per day`, height: 180 }),
    ),
  );

  const sections = [];
  const questionCards = [];
  if (kind === 'polls' && results && !(results instanceof Error)) sections.push(pollResults(results));
  else if (kind === 'polls' && results instanceof Error) sections.push(h('div', { class: 'card' }, notice(`The results are not available: ${errorMessage(results)}`, 'danger')));
  if (kind !== 'polls') for (const question of summary.questions ?? []) {
    const card = questionCard(question);
    if (card) questionCards.push(card);
  }
  if (questionCards.length) sections.push(h('div', { class: 'question-grid' }, questionCards));
  // A breakdown of nothing but unknown values (a plan that does not record it) says nothing.
  const { language: languages, ...metadata } = summary.breakdowns ?? {};
  // Answers in every language count together above; this says how many came in each.
  if (languages?.length) {
    const names = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'language' }) : null;
    const nameOf = (code) => { try { return (names && names.of(code)) || code; } catch { return code; } };
    sections.push(
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'languages-title' },
        h('div', { class: 'card-header' }, h('h2', { id: 'languages-title' }, 'Languages'), h('p', { class: 'card-subtitle' }, 'The language each visitor saw; the figures above count every language together')),
        categoryChart(languages.map((item) => ({ label: `${nameOf(String(item.value))} (${item.value})`, count: item.count })), { caption: `Languages of the ${kind === 'polls' ? 'votes' : 'responses'}`, height: 160 }),
      ),
    );
  }
  const breakdowns = Object.entries(metadata).filter(([, items]) => items?.some((item) => item.value !== null && item.value !== undefined && item.value !== ''));
  if (breakdowns.length) {
    const labels = { device: 'Devices', browser: 'Browsers', country: 'Countries' };
    sections.push(
      h(
        'section',
        { class: 'card', 'aria-labelledby': 'audience-title' },
        h('div', { class: 'card-header' }, h('h2', { id: 'audience-title' }, 'Audience'), h('p', { class: 'card-subtitle' }, 'From the metadata your plan records')),
        h(
          'div',
          { class: 'grid-3' },
          breakdowns.map(([name, items]) =>
            h('div', { class: 'breakdown' }, h('h3', {}, labels[name] ?? name), categoryChart(items.slice(0, 8).map((item) => ({ label: labelOf(item), count: item.count })), { caption: `${labels[name] ?? name} of the ${kind === 'polls' ? 'votes' : 'responses'}`, height: 160, unit: kind === 'polls' ? ['vote', 'votes'] : undefined })),
          ),
        ),
      ),
    );
  }
  clear(insights, sections);
  insights.hidden = sections.length === 0;
}

function labelOf(item) {
  if (item.label) return item.label;
  if (item.value === null || item.value === undefined || item.value === '') return 'Unknown';
  if (typeof item.value === 'boolean') return item.value ? 'Yes' : 'No';
  return String(item.value);
}

function questionCard(question) {
  const answered = typeof question.answered === 'number' ? ` · ${number(question.answered)} ${question.answered === 1 ? 'answer' : 'answers'}` : '';
  const heading = h('div', { class: 'card-header' }, h('h2', {}, question.title || question.question_id), h('p', { class: 'card-subtitle' }, `${questionType(question.type)}${answered}`));
  if (question.nps) {
    const { score, promoters, passives, detractors } = question.nps;
    const all = promoters + passives + detractors;
    const share = (count) => (all ? `${Math.round((count / all) * 100)}%` : '0%');
    return h(
      'section',
      { class: 'card' },
      heading,
      h('div', { class: 'big-figure' }, h('span', { class: 'big-number' }, score === null || score === undefined ? '—' : score > 0 ? `+${score}` : String(score)), h('span', { class: 'big-label' }, 'NPS')),
      h(
        'dl',
        { class: 'figures' },
        h('div', { class: 'figure figure-good' }, h('dt', {}, 'Promoters (9–10)'), h('dd', {}, `${number(promoters)} · ${share(promoters)}`)),
        h('div', { class: 'figure' }, h('dt', {}, 'Passives (7–8)'), h('dd', {}, `${number(passives)} · ${share(passives)}`)),
        h('div', { class: 'figure figure-bad' }, h('dt', {}, 'Detractors (0–6)'), h('dd', {}, `${number(detractors)} · ${share(detractors)}`)),
      ),
      categoryChart(
        [
          { label: 'Detractors (0–6)', count: detractors },
          { label: 'Passives (7–8)', count: passives },
          { label: 'Promoters (9–10)', count: promoters },
        ],
        { caption: `Answers to “${question.title}” by group; NPS ${score === null || score === undefined ? 'not yet known' : score}`, height: 140, kind: 'nps' },
      ),
    );
  }
  if (question.rating) {
    const { average, distribution } = question.rating;
    return h(
      'section',
      { class: 'card' },
      heading,
      h('div', { class: 'big-figure' }, h('span', { class: 'big-number' }, average === null || average === undefined ? '—' : Number(average).toFixed(2)), h('span', { class: 'big-label' }, 'average')),
      categoryChart(distribution.map((item) => ({ label: labelOf(item), count: item.count })), { caption: `Ratings of “${question.title}”`, height: 150 }),
    );
  }
  if (question.choices) {
    return h('section', { class: 'card' }, heading, categoryChart(question.choices.map((item) => ({ label: labelOf(item), count: item.count })), { caption: `Answers to “${question.title}”`, height: 170 }));
  }
  if (question.number) {
    const { average, distribution } = question.number;
    return h(
      'section',
      { class: 'card' },
      heading,
      h('div', { class: 'big-figure' }, h('span', { class: 'big-number' }, average === null || average === undefined ? '—' : number(average)), h('span', { class: 'big-label' }, 'average')),
      categoryChart(histogram(distribution), { caption: `Answers to “${question.title}”: how many gave each value or range`, height: 150, kind: 'histogram' }),
    );
  }
  if (question.ranking) {
    const places = question.ranking.filter((item) => item.average_rank !== null && item.average_rank !== undefined);
    return h(
      'section',
      { class: 'card' },
      heading,
      categoryChart(
        places.map((item) => ({ label: item.label || item.value, count: item.average_rank, ranked: item.count })),
        {
          caption: `Average place of each choice in “${question.title}”, best first (1 is the top)`,
          height: 170,
          kind: 'ranking',
          labelHeading: 'Choice',
          valueLabel: 'Average place',
          measure: { overall: 'Average place, 1 is the top', format: (value) => value.toFixed(2), extraHeading: 'Ranked by', extra: (item) => String(item.ranked) },
        },
      ),
    );
  }
  if (question.matrix) {
    return h(
      'section',
      { class: 'card' },
      heading,
      h(
        'div',
        { class: 'matrix-charts' },
        question.matrix.map((row) =>
          h(
            'div',
            { class: 'breakdown' },
            h('h3', {}, row.label || row.row),
            categoryChart(row.columns.map((item) => ({ label: labelOf(item), count: item.count })), { caption: `“${question.title}”, row “${row.label || row.row}”`, height: 120, kind: 'matrix-row' }),
          ),
        ),
      ),
    );
  }
  if (question.dates) {
    return h(
      'section',
      { class: 'card' },
      heading,
      perDayChart(question.dates, {
        caption: `Days named in “${question.title}”`,
        height: 150,
        unit: ['answer', 'answers'],
        valueLabel: 'Answers',
        dayLabel: 'Day',
        overall: `${number(question.dates.reduce((sum, d) => sum + d.count, 0))} answers on ${number(question.dates.length)} ${question.dates.length === 1 ? 'day' : 'days'}`,
        kind: 'dates',
      }),
    );
  }
  return null;
}

const QUESTION_TYPES = {
  star_rating: 'Star rating',
  nps: 'NPS, 0–10',
  single_choice: 'Single choice',
  multiple_choice: 'Multiple choice',
  opinion_scale: 'Opinion scale',
  yes_no: 'Yes or no',
  number: 'Number',
  date: 'Date',
  ranking: 'Ranking',
  matrix: 'Matrix',
  severity: 'Severity',
  consent: 'Consent',
  short_text: 'Short text',
  long_text: 'Long text',
  email: 'Email',
  phone: 'Phone',
  url: 'Website',
  statement: 'Statement',
};
const questionType = (type) => QUESTION_TYPES[type] ?? (type ? type.replaceAll('_', ' ') : '');

function pollResults(results) {
  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'results-title' },
    h('div', { class: 'card-header' }, h('h2', { id: 'results-title' }, 'Results')),
    categoryChart(results.options.map((option) => ({ label: option.text, count: option.votes })), { caption: `Votes for each option of “${results.question}”`, height: 180, unit: ['vote', 'votes'] }),
    h(
      'ol',
      { class: 'results' },
      results.options.map((option) => h('li', { class: 'result' }, h('span', { class: 'result-text' }, option.text), h('span', { class: 'result-figures' }, `${number(option.votes)} · ${option.percentage}%`))),
    ),
  );
}

/** A choice's label rather than its id. */
function answerOf(question, value) {
  if (!Array.isArray(question.choices)) return value;
  const label = (id) => question.choices.find((choice) => choice.id === id)?.label ?? id;
  return Array.isArray(value) ? value.map(label) : value === undefined || value === null ? value : label(value);
}

function formatAnswer(value) {
  if (value === undefined || value === null || value === '') return h('span', { class: 'muted' }, '—');
  if (typeof value === 'boolean') return value ? 'Yes' : 'No';
  if (Array.isArray(value)) return value.join(', ');
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** Answers longer than this show their start, and the rest on request: whole, a long one made its row thousands of pixels tall. */
const PREVIEW = 200;

function answerCell(value) {
  const text = formatAnswer(value);
  const characters = typeof text === 'string' ? Array.from(text) : [];
  if (characters.length <= PREVIEW + 40) return h('span', { class: 'answer' }, text);
  const rest = characters.slice(PREVIEW).join('');
  return h(
    'span',
    { class: 'answer answer-long' },
    characters.slice(0, PREVIEW).join(''),
    h('details', { class: 'answer-rest' }, h('summary', {}, `Show the rest (${(characters.length - PREVIEW).toLocaleString('en')} more characters)`), rest),
  );
}

function responsesCard(kind, id, object, session, changed) {
  const search = new URLSearchParams(location.search);
  // A form that keeps unfinished responses lists them on request: complete ones by default, as the API does.
  const partials = kind === 'forms' && Boolean(object.settings?.keep_partial);
  const asked = search.get('status');
  const state = { page: Math.max(1, Number(search.get('page')) || 1), since: search.get('since') ?? '', until: search.get('until') ?? '', status: partials && (asked === 'partial' || asked === 'all') ? asked : 'complete' };
  const statusInput = partials
    ? h('select', { id: 'responses-status', name: 'status' }, ...[['complete', 'Sent'], ['partial', 'Unfinished'], ['all', 'All']].map(([value, label]) => h('option', { value, selected: state.status === value }, label)))
    : null;
  const sinceInput = h('input', { type: 'date', id: 'responses-since', name: 'since', value: state.since });
  const untilInput = h('input', { type: 'date', id: 'responses-until', name: 'until', value: state.until });
  const csv = h('a', { class: 'btn btn-secondary btn-small', download: '' }, 'Download CSV');
  const ndjson = h('a', { class: 'btn btn-secondary btn-small', download: '' }, 'NDJSON');
  const body = h('div', { class: 'responses-body' });
  const form = h(
    'form',
    { class: 'filters', 'aria-label': partials ? 'Filter responses by status and day' : 'Filter responses by day' },
    statusInput ? h('div', { class: 'field' }, h('label', { for: 'responses-status' }, 'Show'), statusInput) : null,
    h('div', { class: 'field' }, h('label', { for: 'responses-since' }, 'From (UTC)'), sinceInput),
    h('div', { class: 'field' }, h('label', { for: 'responses-until' }, 'To (UTC)'), untilInput),
    h('div', { class: 'filter-actions' }, h('button', { type: 'submit', class: 'btn btn-secondary btn-small' }, 'Apply'), h('button', { type: 'button', class: 'btn btn-ghost btn-small', onclick: () => { sinceInput.value = ''; untilInput.value = ''; state.since = ''; state.until = ''; state.page = 1; load(); } }, 'Clear')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    state.since = sinceInput.value;
    state.until = untilInput.value;
    if (statusInput) state.status = statusInput.value;
    state.page = 1;
    load();
  });

  const bounds = () => ({ since: state.since ? `${state.since}T00:00:00.000Z` : undefined, until: state.until ? `${state.until}T23:59:59.999Z` : undefined });
  const questions = Array.isArray(object.questions) ? object.questions.filter((question) => question && question.id) : [];
  const pageTitle = (pageId) => {
    const pages = Array.isArray(object.pages) ? object.pages : [];
    const at = pages.findIndex((p) => p.id === pageId);
    return at === -1 ? 'page 1' : pages[at].title || `page ${at + 1}`;
  };

  async function load() {
    const { since, until } = bounds();
    const status = state.status === 'complete' ? undefined : state.status;
    csv.href = `/dashboard/api/${kind}/${id}/responses.csv${query({ since, until, status })}`;
    ndjson.href = `/dashboard/api/${kind}/${id}/responses.ndjson${query({ since, until, status })}`;
    history.replaceState(null, '', `${location.pathname}${query({ page: state.page > 1 ? state.page : undefined, since: state.since, until: state.until, status })}`);
    body.setAttribute('aria-busy', 'true');
    let list;
    try {
      list = await api(`/${kind}/${id}/responses${query({ page: state.page, limit: LIMIT, since, until, status })}`);
    } catch (error) {
      body.removeAttribute('aria-busy');
      clear(body, notice(error instanceof ApiError && error.code === 'validation_error' ? `Check the dates: ${errorMessage(error)}` : errorMessage(error), 'danger'));
      return;
    }
    body.removeAttribute('aria-busy');
    const responses = list.responses ?? [];
    // Past the last page (its last response deleted, or an old link): the last page there is.
    const pages = list.pagination?.totalPages ?? 0;
    if (responses.length === 0 && pages > 0 && state.page > pages) {
      state.page = pages;
      return load();
    }
    if (responses.length === 0) {
      clear(body, emptyState(state.since || state.until ? 'No responses in these days' : 'No responses yet', state.since || state.until ? 'Try a wider range of days.' : object.published ? 'Answers show up here as soon as visitors send them.' : 'Publish it and paste the snippet on your site to start collecting.'));
      return;
    }
    // Own answers only: a question id may be the name of something every object inherits (toString, constructor).
    const answerTo = (response, id) => (response.answers && Object.hasOwn(response.answers, id) ? response.answers[id] : undefined);
    const known = new Set(questions.map((question) => question.id));
    const extra = [...new Set(responses.flatMap((response) => Object.keys(response.answers ?? {})))].filter((key) => !known.has(key));
    const columns = [
      { label: status ? 'Last change' : 'Submitted', rowHeader: true, cell: (response) => h('time', { datetime: response.submitted_at }, dateTime(response.submitted_at)) },
      ...(status ? [{ label: 'Status', cell: (response) => (response.status === 'partial' ? `Unfinished after ${pageTitle(response.last_page)}` : 'Sent') }] : []),
      ...questions.map((question) => ({ label: question.title || question.id, cell: (response) => answerCell(answerOf(question, answerTo(response, question.id))) })),
      ...extra.map((key) => ({ label: key, cell: (response) => answerCell(answerTo(response, key)) })),
      { label: 'Device', cell: (response) => formatAnswer(response.metadata?.device) },
      { label: 'Browser', cell: (response) => formatAnswer(response.metadata?.browser) },
      { label: 'Country', cell: (response) => formatAnswer(response.metadata?.country) },
      // Editors and above delete a response for good (the server checks the role too).
      ...(session.role === 'viewer' ? [] : [{ label: 'Actions', cell: (response) => deleteResponseButton(response) }]),
    ];
    clear(
      body,
      table({ caption: `Responses, newest first${state.since || state.until ? ', filtered by day' : ''}`, captionHidden: true, columns, rows: responses, className: 'table-responses' }),
      pager(list.pagination, (next) => { state.page = next; load(); }, 'Response pages'),
    );
  }
  function deleteResponseButton(response) {
    const when = dateTime(response.submitted_at);
    const button = h('button', { type: 'button', class: 'btn btn-danger-ghost btn-small', 'aria-label': `Delete the response of ${when}` }, 'Delete');
    button.addEventListener('click', async () => {
      const confirmed = await confirmDialog({
        title: 'Delete this response?',
        body: `The response of ${when}, its answers and what was recorded with it are erased for good, from downloads, summaries and the event history alike.`,
        confirm: 'Delete response',
      });
      if (!confirmed) return button.focus();
      button.disabled = true;
      try {
        const reply = await api(`/${kind}/${id}/responses/${encodeURIComponent(response.id)}`, { method: 'DELETE' });
        announce(reply?.pending ? 'Response deleted; it is still being erased' : 'Response deleted');
        await load();
        // The button went with its row: the list keeps the focus.
        (body.querySelector('.table-wrap') ?? title).focus();
        changed();
      } catch (error) {
        button.disabled = false;
        clear(body, notice(errorMessage(error), 'danger'));
      }
    });
    return button;
  }

  const title = h('h2', { id: 'responses-title', tabindex: '-1' }, 'Responses');
  load();

  return h(
    'section',
    { class: 'card', 'aria-labelledby': 'responses-title' },
    h('div', { class: 'card-header' }, title, h('div', { class: 'downloads', role: 'group', 'aria-label': 'Downloads' }, csv, ndjson)),
    form,
    body,
  );
}

/** Pages of responses read for the drop-off: past this many, the figures say they cover the newest only. */
const DROP_OFF_PAGES = 10;

/**
 * Where visitors stop, for a form that keeps unfinished responses: each
 * page with the visitors whose last page it was, and those who sent the
 * form, read from the responses' status and last page.
 */
function dropOffCard(id, object, isCurrent) {
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  (async () => {
    const responses = [];
    let more = true;
    for (let page = 1; more && page <= DROP_OFF_PAGES; page++) {
      const list = await api(`/forms/${id}/responses${query({ status: 'all', page, limit: 100 })}`);
      responses.push(...(list.responses ?? []));
      more = (list.responses ?? []).length === 100;
    }
    if (!isCurrent()) return;
    const pages = object.pages?.length ? object.pages : [{ id: 'page_1' }];
    const total = responses.length;
    const share = (n) => (total ? `${Math.round((n / total) * 100)}%` : '—');
    const rows = pages.map((p, i) => {
      const stopped = responses.filter((r) => r.status === 'partial' && r.last_page === p.id).length;
      return { label: p.title || `Page ${i + 1}`, stopped, share: share(stopped) };
    });
    const complete = responses.filter((r) => r.status !== 'partial').length;
    rows.push({ label: 'Sent', stopped: complete, share: share(complete) });
    clear(body,
      total === 0 ? emptyState('No visits yet', 'Unfinished responses show here as visitors leave each page.') : table({
        caption: 'Where visitors stopped: each page with the visitors who left after it, and those who sent the form',
        columns: [
          { label: 'Last page', cell: (r) => r.label, rowHeader: true },
          { label: 'Visitors', cell: (r) => number(r.stopped), numeric: true },
          { label: 'Share', cell: (r) => r.share, numeric: true },
        ],
        rows,
      }),
      more ? h('p', { class: 'muted small' }, `From the newest ${number(total)} responses.`) : null);
  })().catch((error) => clear(body, notice(`The drop-off is not available: ${errorMessage(error)}`, 'danger')));
  return h('section', { class: 'card', 'aria-labelledby': 'drop-off-title' },
    h('div', { class: 'card-header' }, h('h2', { id: 'drop-off-title' }, 'Drop-off per page'), h('p', { class: 'card-subtitle' }, 'Unfinished responses by the last page they reached')),
    body);
}
