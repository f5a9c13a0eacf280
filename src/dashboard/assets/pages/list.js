/** The widgets, forms or polls of the account: paged, newest first, with the create button or the plan it needs. */
import { api, query } from '../api.js';
import { clear, date, emptyState, h, kindNames, number, pageHeader, pager, statusPill, table, timeAgo, titleOf } from '../ui.js';

const TYPE_NAMES = { feedback: 'Feedback', nps: 'NPS', contact: 'Contact', bug_report: 'Bug report', custom: 'Custom' };
const LIMIT = 20;

export async function render(container, { session, params, navigate, isCurrent }) {
  const [kind] = params;
  const names = kindNames(kind);
  document.title = `${names.Many} · Feedback`;
  const canCreate = kind !== 'widgets' || session.plan_limits.create_widgets;
  const page = Math.max(1, Number(new URLSearchParams(location.search).get('page')) || 1);
  const list = await api(`/${kind}${query({ page, limit: LIMIT })}`);
  if (!isCurrent()) return;

  const create = canCreate
    ? h('a', { class: 'btn btn-primary', href: `/dashboard/${kind}/new` }, `New ${names.one}`)
    : h('button', { type: 'button', class: 'btn btn-primary', disabled: true, 'aria-describedby': 'plan-note' }, `New ${names.one}`);
  const total = list.pagination?.total ?? list.items.length;
  const header = pageHeader(names.Many, { actions: [create], meta: total ? `${number(total)} ${total === 1 ? names.one : names.many}` : null });
  const planNote = canCreate ? null : h('div', { id: 'plan-note', class: 'notice notice-plan' }, h('p', {}, h('strong', {}, 'Widgets need the Pro plan. '), 'Your account is on the Free plan, which includes forms and polls.'));

  let body;
  if (list.items.length === 0) {
    body = h(
      'div',
      { class: 'card' },
      emptyState(
        page > 1 ? 'Nothing on this page' : `No ${names.many} yet`,
        page > 1 ? null : kind === 'polls' ? 'Ask one question and see the results as they come in.' : kind === 'forms' ? 'Build a form, publish it, and paste its snippet on your site.' : 'A small button on your site that asks visitors what they think.',
        page > 1 ? h('a', { class: 'btn btn-secondary', href: `/dashboard/${kind}` }, 'First page') : canCreate ? h('a', { class: 'btn btn-primary', href: `/dashboard/${kind}/new` }, `Create your first ${names.one}`) : null,
      ),
    );
  } else {
    const columns = [
      { label: kind === 'polls' ? 'Question' : 'Title', rowHeader: true, cell: (item) => h('a', { href: `/dashboard/${kind}/${item.id}`, class: 'row-link' }, titleOf(item)) },
      kind === 'widgets' ? { label: 'Type', cell: (item) => TYPE_NAMES[item.widget_type] ?? item.widget_type } : null,
      kind === 'forms' ? { label: 'Version', cell: (item) => `v${item.version}` } : null,
      { label: 'Status', cell: (item) => statusPill(item.published) },
      { label: 'Created', cell: (item) => date(item.created_at) },
      { label: 'Updated', cell: (item) => timeAgo(item.updated_at ?? item.created_at) },
    ].filter(Boolean);
    body = h('div', { class: 'card card-flush' }, table({ caption: `Your ${names.many}`, captionHidden: true, columns, rows: list.items, className: 'table-list' }));
  }

  clear(container, header, planNote, body, pager(list.pagination, (next) => navigate(`/dashboard/${kind}${query({ page: next === 1 ? undefined : next })}`), `${names.Many} pages`));
}
