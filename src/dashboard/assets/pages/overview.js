/** The account at a glance: totals, responses per day across its objects, the latest responses. */
import { api } from '../api.js';
import { perDayChart } from '../charts.js';
import { clear, emptyState, h, number, pageHeader, timeAgo } from '../ui.js';

const KIND_PATHS = { widget: 'widgets', form: 'forms', poll: 'polls', vote: 'polls' };
const KIND_LABELS = { widget: 'Widget', form: 'Form', poll: 'Poll vote', vote: 'Poll vote' };

export async function render(container, { session, isCurrent }) {
  document.title = 'Overview · Feedback';
  const overview = await api('/overview');
  if (!isCurrent()) return;
  const { totals, per_day: perDay, latest } = overview;

  const stat = (label, value, href) =>
    h('a', { class: 'stat', href }, h('span', { class: 'stat-label' }, label), h('span', { class: 'stat-value' }, number(value)));
  const stats = h(
    'section',
    { class: 'stats', 'aria-label': 'Totals' },
    stat('Responses', totals.responses, '/dashboard#latest'),
    stat('Widgets', totals.widgets, '/dashboard/widgets'),
    stat('Forms', totals.forms, '/dashboard/forms'),
    stat('Polls', totals.polls, '/dashboard/polls'),
  );

  const chartCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'per-day-title' },
    h('div', { class: 'card-header' }, h('h2', { id: 'per-day-title' }, 'Responses per day'), h('p', { class: 'card-subtitle' }, 'All widgets, forms and polls · last 90 days, UTC')),
    perDayChart(perDay, { caption: 'Responses per day across all objects' }),
  );

  const latestCard = h(
    'section',
    { class: 'card', id: 'latest', 'aria-labelledby': 'latest-title' },
    h('div', { class: 'card-header' }, h('h2', { id: 'latest-title' }, 'Latest responses')),
    latest.length === 0
      ? emptyState('No responses yet', 'Publish a widget, form or poll and paste its snippet on your site: answers show up here.')
      : h(
          'ul',
          { class: 'feed' },
          latest.map((entry) =>
            h(
              'li',
              { class: 'feed-item' },
              h('span', { class: `kind-dot kind-${entry.kind}`, 'aria-hidden': 'true' }),
              h(
                'div',
                { class: 'feed-body' },
                h('a', { href: `/dashboard/${KIND_PATHS[entry.kind] ?? 'widgets'}/${entry.parent_id}` }, entry.parent_title || 'Untitled'),
                h('span', { class: 'feed-kind' }, KIND_LABELS[entry.kind] ?? entry.kind, ' · ', timeAgo(entry.submitted_at)),
              ),
            ),
          ),
        ),
  );

  const greeting = session.account.name ? `Welcome back, ${session.account.name}` : 'Overview';
  clear(container, pageHeader('Overview', { meta: greeting }), stats, h('div', { class: 'grid-2-1' }, chartCard, latestCard));
}
