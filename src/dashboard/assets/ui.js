/**
 * Small DOM helpers shared by the pages. Everything is built with
 * createElement and textContent, never innerHTML, so answers typed by
 * visitors can never become markup.
 */

/** h('a', {href, class: 'x', onclick}, 'text', child) */
export function h(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2), value);
    else if (name === 'class') element.className = value;
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name === 'value') element.value = value;
    else if (name === 'checked') element.checked = element.defaultChecked = Boolean(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

function append(element, children) {
  for (const child of children.flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    element.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

export function clear(element, ...children) {
  element.replaceChildren();
  append(element, children);
  return element;
}

const KINDS = {
  widgets: { one: 'widget', One: 'Widget', many: 'widgets', Many: 'Widgets' },
  forms: { one: 'form', One: 'Form', many: 'forms', Many: 'Forms' },
  polls: { one: 'poll', One: 'Poll', many: 'polls', Many: 'Polls' },
};
export const kindNames = (kind) => KINDS[kind];
const PLAN_NAMES = { free: 'Free', pro: 'Pro', business: 'Business' };
export const planName = (plan) => PLAN_NAMES[plan] ?? plan;
export const titleOf = (object) => object?.title ?? object?.question ?? 'Untitled';

const numberFormat = new Intl.NumberFormat('en');
export const number = (value) => numberFormat.format(value ?? 0);

const dateTimeFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' });
const dateFormat = new Intl.DateTimeFormat('en', { dateStyle: 'medium' });
const dayFormat = new Intl.DateTimeFormat('en', { month: 'short', day: 'numeric', timeZone: 'UTC' });

export const dateTime = (iso) => (iso ? dateTimeFormat.format(new Date(iso)) : '—');
export const date = (iso) => (iso ? dateFormat.format(new Date(iso)) : '—');
const shortDateFormat = new Intl.DateTimeFormat('en', { month: 'short', day: 'numeric' });
/** "Nov 22" this year, "Nov 22, 2025" before. */
export const shortDate = (iso, now = new Date()) => (!iso ? '—' : new Date(iso).getFullYear() === now.getFullYear() ? shortDateFormat.format(new Date(iso)) : date(iso));
/** A UTC day such as 2026-11-22 as "Nov 22". */
export const day = (utcDay) => dayFormat.format(new Date(`${utcDay}T00:00:00Z`));

const relativeFormat = new Intl.RelativeTimeFormat('en', { numeric: 'auto' });
export function ago(iso, now = Date.now()) {
  if (!iso) return '—';
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  const steps = [
    [60, 'second'],
    [60, 'minute'],
    [24, 'hour'],
    [30, 'day'],
    [12, 'month'],
  ];
  let value = seconds;
  for (const [size, unit] of steps) {
    if (Math.abs(value) < size) return relativeFormat.format(value, unit);
    value = Math.round(value / size);
  }
  return relativeFormat.format(value, 'year');
}

/** A <time> that reads relative and shows the exact moment on hover. */
export const timeAgo = (iso) => (iso ? h('time', { datetime: iso, title: dateTime(iso) }, ago(iso)) : '—');

export const statusPill = (published) =>
  h('span', { class: `pill ${published ? 'pill-success' : 'pill-muted'}` }, published ? 'Published' : 'Draft');

export function pageHeader(title, { eyebrow, actions = [], meta } = {}) {
  return h(
    'header',
    { class: 'page-header' },
    h('div', { class: 'page-heading' }, eyebrow ? h('p', { class: 'eyebrow' }, eyebrow) : null, h('h1', { tabindex: '-1' }, title), meta ? h('div', { class: 'page-meta' }, meta) : null),
    actions.length ? h('div', { class: 'page-actions' }, actions) : null,
  );
}

export const card = (attributes, ...children) => h('section', { ...attributes, class: `card ${attributes?.class ?? ''}`.trim() }, children);

export const notice = (text, tone = 'info', ...extra) => h('div', { class: `notice notice-${tone}`, role: tone === 'danger' ? 'alert' : null }, h('p', {}, text), extra);

export function errorMessage(error) {
  if (error?.details?.length) return `${error.message} ${error.details.map((detail) => `${detail.path}: ${detail.message}`).join('; ')}`;
  return error?.message ?? String(error);
}

/** A polite live region for short confirmations ("Copied", "Published"). */
export function announce(text) {
  const region = document.getElementById('announcer');
  if (!region) return;
  region.textContent = '';
  // A change the screen reader notices even when the same text repeats.
  requestAnimationFrame(() => (region.textContent = text));
}

export function loading(label = 'Loading…') {
  return h('div', { class: 'loading', role: 'status' }, h('span', { class: 'spinner', 'aria-hidden': 'true' }), label);
}

/**
 * A modal confirmation with the native <dialog> (focus kept inside, Escape
 * cancels). Answers true when confirmed.
 */
export function confirmDialog({ title, body, confirm, tone = 'danger' }) {
  return new Promise((resolve) => {
    const titleId = `dialog-title-${Math.random().toString(36).slice(2)}`;
    const cancelButton = h('button', { type: 'button', class: 'btn btn-secondary', value: 'cancel' }, 'Cancel');
    const confirmButton = h('button', { type: 'button', class: `btn btn-${tone}` }, confirm);
    const dialog = h(
      'dialog',
      { class: 'dialog', 'aria-labelledby': titleId },
      h('h2', { id: titleId }, title),
      h('p', {}, body),
      h('div', { class: 'dialog-actions' }, cancelButton, confirmButton),
    );
    let answer = false;
    cancelButton.addEventListener('click', () => dialog.close());
    confirmButton.addEventListener('click', () => {
      answer = true;
      dialog.close();
    });
    dialog.addEventListener('close', () => {
      dialog.remove();
      resolve(answer);
    });
    document.body.append(dialog);
    dialog.showModal();
    cancelButton.focus();
  });
}

/** Copies text; answers whether it worked. The fallback serves browsers that refuse the async clipboard. */
export async function copyText(text) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    const scratch = h('textarea', { class: 'visually-hidden', readonly: true, 'aria-hidden': 'true', tabindex: '-1' });
    scratch.value = text;
    document.body.append(scratch);
    scratch.select();
    let copied = false;
    try {
      copied = document.execCommand('copy');
    } catch {
      copied = false;
    }
    scratch.remove();
    return copied;
  }
}

export function copyButton(text, label = 'Copy') {
  const button = h('button', { type: 'button', class: 'btn btn-secondary btn-small' }, label);
  button.addEventListener('click', async () => {
    const copied = await copyText(typeof text === 'function' ? text() : text);
    button.textContent = copied ? 'Copied' : 'Select and copy';
    announce(copied ? 'Copied to the clipboard' : 'Copying failed: select the text and copy it');
  });
  // "Copied" stays while the button has focus or the pointer, then it offers to copy again.
  const reset = () => {
    if (document.activeElement !== button) button.textContent = label;
  };
  button.addEventListener('blur', reset);
  button.addEventListener('mouseleave', reset);
  return button;
}

/** Previous / next page buttons with "Page 2 of 7", for the API's pagination object. */
export function pager(pagination, go, label = 'Pages') {
  if (!pagination || pagination.totalPages <= 1) return null;
  const { page, totalPages, total } = pagination;
  return h(
    'nav',
    { class: 'pager', 'aria-label': label },
    h('button', { type: 'button', class: 'btn btn-secondary btn-small', disabled: page <= 1, onclick: () => go(page - 1) }, '← Previous'),
    h('span', { class: 'pager-status' }, `Page ${page} of ${totalPages} · ${number(total)} in all`),
    h('button', { type: 'button', class: 'btn btn-secondary btn-small', disabled: page >= totalPages, onclick: () => go(page + 1) }, 'Next →'),
  );
}

/** A table with a caption (visible or for screen readers only). */
export function table({ caption, captionHidden = false, columns, rows, className = '' }) {
  // Focusable so that keyboard users can scroll a table wider than the screen.
  return h(
    'div',
    { class: `table-wrap ${className}`.trim(), tabindex: '0', role: 'region', 'aria-label': caption },
    h(
      'table',
      { class: 'table' },
      caption ? h('caption', { class: captionHidden ? 'visually-hidden' : null }, caption) : null,
      h('thead', {}, h('tr', {}, columns.map((column) => h('th', { scope: 'col', class: column.numeric ? 'numeric' : null }, column.label)))),
      h(
        'tbody',
        {},
        rows.map((row) =>
          h(
            'tr',
            {},
            columns.map((column, index) => {
              const cell = column.cell(row);
              return index === 0 && column.rowHeader ? h('th', { scope: 'row' }, cell) : h('td', { class: column.numeric ? 'numeric' : null }, cell);
            }),
          ),
        ),
      ),
    ),
  );
}

export const emptyState = (title, text, ...actions) => h('div', { class: 'empty' }, h('p', { class: 'empty-title' }, title), text ? h('p', { class: 'empty-text' }, text) : null, actions.length ? h('div', { class: 'empty-actions' }, actions) : null);
