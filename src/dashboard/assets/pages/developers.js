/** Settings → Developers: API keys (made here, shown once, revoked here) and the webhook endpoints. */
import { api } from '../api.js';
import { announce, clear, planName, confirmDialog, copyButton, date, emptyState, errorMessage, h, notice, pageHeader, table, timeAgo } from '../ui.js';

const SCOPES = [
  ['forms:read', 'Read widgets, forms and polls'],
  ['forms:write', 'Create, change and delete them'],
  ['responses:read', 'Read responses and results'],
  ['responses:write', 'Delete responses'],
  ['webhooks:read', 'Read webhook endpoints'],
  ['webhooks:write', 'Manage webhook endpoints'],
];
const DEFAULT_SCOPES = new Set(['forms:read', 'responses:read']);
/** Keys a page of the list holds; the list is paged newest first, and more pages are shown on request. */
const KEYS_PAGE = 50;

/** The first `pages` pages of the account's keys, and how many there are in all. */
async function loadKeys(pages) {
  const first = await api(`/keys?page=1&limit=${KEYS_PAGE}`);
  let list = first.keys;
  for (let page = 2; page <= Math.min(pages, first.pagination.totalPages); page++) list = list.concat((await api(`/keys?page=${page}&limit=${KEYS_PAGE}`)).keys);
  return { list, total: first.pagination.total };
}

export async function render(container, { session, isCurrent }) {
  document.title = 'Developers · Settings · Feedback';
  let pages = 1;
  const [keys, webhooks] = await Promise.all([loadKeys(pages), api('/webhooks').catch(() => ({ endpoints: [] }))]);
  if (!isCurrent()) return;

  const header = pageHeader('Developers', { eyebrow: 'Settings', meta: 'API keys for the REST API, and where webhooks go' });
  const planNote = session.plan_limits.api_access
    ? null
    : h('div', { class: 'notice notice-plan' }, h('p', {}, h('strong', {}, 'API access needs the Business plan. '), `Your account is on the ${planName(session.account.plan)} plan: everything else works here in the dashboard. Keys you make now start working when the account moves to Business.`));

  const keysArea = h('div');
  const created = h('div', { class: 'created-key', 'aria-live': 'polite' });
  const drawKeys = ({ list, total }) => {
    if (list.length === 0) {
      clear(keysArea, emptyState('No API keys yet', 'Create one above to call the REST API from your own code.'));
      return;
    }
    clear(
      keysArea,
      table({
        caption: 'Your API keys',
        captionHidden: true,
        className: 'table-keys',
        rows: list,
        columns: [
          { label: 'Name', rowHeader: true, cell: (key) => key.name || 'Unnamed key' },
          { label: 'Key', cell: (key) => h('code', { class: 'key-prefix' }, `${key.prefix}…`) },
          { label: 'Scopes', cell: (key) => h('span', { class: 'scopes' }, key.scopes.map((scope) => h('span', { class: 'tag' }, scope))) },
          { label: 'Created', cell: (key) => date(key.created_at) },
          { label: 'Last used', cell: (key) => (key.last_used_at ? timeAgo(key.last_used_at) : h('span', { class: 'muted' }, 'Never')) },
          {
            label: 'Status',
            cell: (key) =>
              key.revoked_at
                ? h('span', { class: 'pill pill-muted', title: `Revoked ${date(key.revoked_at)}` }, `Revoked ${date(key.revoked_at)}`)
                : h('span', { class: 'status-actions' }, h('span', { class: 'pill pill-success' }, 'Active'), revokeButton(key)),
          },
        ],
      }),
      list.length < total ? moreButton(total - list.length) : null,
    );
  };
  const reload = async () => drawKeys(await loadKeys(pages));
  const moreButton = (left) => {
    const button = h('button', { type: 'button', class: 'btn btn-secondary btn-small' }, `Show more keys (${left} older)`);
    button.addEventListener('click', async () => {
      button.disabled = true;
      pages += 1;
      try {
        await reload();
      } catch (error) {
        button.disabled = false;
        clear(created, notice(errorMessage(error), 'danger'));
      }
    });
    return button;
  };
  const revokeButton = (key) => {
    const button = h('button', { type: 'button', class: 'btn btn-danger-ghost btn-small', 'aria-label': `Revoke ${key.name || key.prefix}` }, 'Revoke');
    button.addEventListener('click', async () => {
      const confirmed = await confirmDialog({
        title: `Revoke “${key.name || key.prefix}”?`,
        body: 'Programs using this key stop working within seconds. This cannot be undone: make a new key if you need one again.',
        confirm: 'Revoke key',
      });
      if (!confirmed) return button.focus();
      button.disabled = true;
      try {
        await api(`/keys/${encodeURIComponent(key.key_id)}`, { method: 'DELETE' });
        announce('Key revoked');
        await reload();
        keysArea.querySelector('table')?.focus?.();
      } catch (error) {
        button.disabled = false;
        clear(created, notice(errorMessage(error), 'danger'));
      }
    });
    return button;
  };
  drawKeys(keys);

  const nameInput = h('input', { type: 'text', id: 'key-name', name: 'name', required: true, maxlength: '100', placeholder: 'e.g. CRM sync', autocomplete: 'off' });
  const scopeBoxes = SCOPES.map(([scope, text]) =>
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'scopes', value: scope, checked: DEFAULT_SCOPES.has(scope) }), h('span', {}, h('code', {}, scope), h('span', { class: 'check-hint' }, text))),
  );
  const submit = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Create key');
  const form = h(
    'form',
    { class: 'key-form', 'aria-labelledby': 'new-key-title' },
    h('div', { class: 'field' }, h('label', { for: 'key-name' }, 'Name'), nameInput, h('p', { class: 'hint' }, 'Where the key is used, so you know which to revoke.')),
    h('fieldset', { class: 'field' }, h('legend', {}, 'Scopes'), h('div', { class: 'checks' }, scopeBoxes)),
    h('div', { class: 'form-actions' }, submit),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    const scopes = scopeBoxes.map((label) => label.querySelector('input')).filter((box) => box.checked).map((box) => box.value);
    if (scopes.length === 0) {
      clear(created, notice('Choose at least one scope.', 'danger'));
      return;
    }
    submit.disabled = true;
    try {
      const key = await api('/keys', { method: 'POST', body: { name: nameInput.value.trim(), scopes } });
      const keyField = h('input', { type: 'text', id: 'new-key', readonly: true, value: key.api_key, class: 'key-value', spellcheck: 'false', 'aria-describedby': 'new-key-hint' });
      clear(
        created,
        h(
          'div',
          { class: 'notice notice-success key-once' },
          h('p', {}, h('strong', {}, 'Your new key. '), h('span', { id: 'new-key-hint' }, 'Copy it now: it is shown only this once, and the service keeps no copy it could show again.')),
          h('div', { class: 'key-row' }, h('label', { for: 'new-key', class: 'visually-hidden' }, 'New API key'), keyField, copyButton(() => keyField.value, 'Copy key')),
        ),
      );
      keyField.focus();
      keyField.select();
      form.reset();
      await reload();
    } catch (error) {
      clear(created, notice(errorMessage(error), 'danger'));
    } finally {
      submit.disabled = false;
    }
  });

  const keysCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'keys-title' },
    h('div', { class: 'card-header' }, h('h2', { id: 'keys-title' }, 'API keys')),
    h('p', { class: 'muted small' }, 'Keys authenticate calls to the REST API as your account. A key is shown in full once, when it is made; afterwards only its first characters.'),
    h('h3', { id: 'new-key-title', class: 'subheading' }, 'Create a key'),
    form,
    created,
    h('h3', { class: 'subheading' }, 'All keys'),
    keysArea,
  );

  const endpoints = webhooks.endpoints ?? [];
  const webhooksCard = h(
    'section',
    { class: 'card', 'aria-labelledby': 'webhooks-title' },
    h('div', { class: 'card-header' }, h('h2', { id: 'webhooks-title' }, 'Webhooks')),
    endpoints.length === 0
      ? h('p', { class: 'muted small' }, 'No webhook endpoints. Business accounts add them through the API (POST /api/webhooks) to have new responses pushed to their servers.')
      : table({
          caption: 'Webhook endpoints',
          captionHidden: true,
          rows: endpoints,
          columns: [
            { label: 'URL', rowHeader: true, cell: (endpoint) => h('code', { class: 'wrap' }, endpoint.url) },
            { label: 'Events', cell: (endpoint) => h('span', { class: 'scopes' }, (endpoint.events ?? []).map((name) => h('span', { class: 'tag' }, name))) },
            { label: 'Description', cell: (endpoint) => endpoint.description || '—' },
            { label: 'Status', cell: (endpoint) => (endpoint.enabled ? h('span', { class: 'pill pill-success' }, 'Enabled') : h('span', { class: 'pill pill-warning', title: endpoint.disabled_reason ?? '' }, 'Disabled')) },
            { label: 'Created', cell: (endpoint) => date(endpoint.created_at) },
          ],
        }),
  );

  clear(container, header, planNote, keysCard, webhooksCard);
}
