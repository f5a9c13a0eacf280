/**
 * The dashboard's shell: it reads the session once, draws the navigation and
 * routes on location.pathname with the History API. Each page is a module
 * whose `render(main, context)` fills the main region.
 */
import { api, ApiError, leaveSignedOut, setCsrfToken, SIGNED_OUT } from './api.js';
import { clear, errorMessage, h, loading, notice, pageHeader, planName } from './ui.js';

const KIND = '(widgets|forms|polls)';
const ID = '([A-Za-z0-9_-]+)';
const routes = [
  { pattern: /^\/dashboard\/?$/, nav: 'overview', load: () => import('./pages/overview.js') },
  { pattern: new RegExp(`^/dashboard/${KIND}/?$`), nav: (m) => m[1], load: () => import('./pages/list.js') },
  { pattern: new RegExp(`^/dashboard/${KIND}/new/?$`), nav: (m) => m[1], load: () => import('./pages/edit.js') },
  { pattern: new RegExp(`^/dashboard/${KIND}/${ID}/edit/?$`), nav: (m) => m[1], load: () => import('./pages/edit.js') },
  { pattern: new RegExp(`^/dashboard/${KIND}/${ID}/?$`), nav: (m) => m[1], load: () => import('./pages/object.js') },
  { pattern: new RegExp(`^/dashboard/${KIND}/${ID}/analytics/?$`), nav: (m) => m[1], load: () => import('./pages/analytics.js') },
  { pattern: /^\/dashboard\/analytics\/?$/, nav: 'analytics', load: () => import('./pages/analytics.js') },
  { pattern: /^\/dashboard\/settings\/developers\/?$/, nav: 'developers', load: () => import('./pages/developers.js') },
  { pattern: /^\/dashboard\/settings\/members\/?$/, nav: 'members', load: () => import('./pages/members.js') },
];

const NAV = [
  { id: 'overview', href: '/dashboard', label: 'Overview', icon: 'M3 13h4v8H3zm7-6h4v14h-4zm7-4h4v18h-4z' },
  { id: 'widgets', href: '/dashboard/widgets', label: 'Widgets', icon: 'M4 4h16v12H8l-4 4z' },
  { id: 'forms', href: '/dashboard/forms', label: 'Forms', icon: 'M6 3h12v18H6zM9 8h6M9 12h6M9 16h4' },
  { id: 'polls', href: '/dashboard/polls', label: 'Polls', icon: 'M5 20V10m7 10V4m7 16v-7' },
  { id: 'analytics', href: '/dashboard/analytics', label: 'Analytics', icon: 'M3 17l5-5 4 4 8-8M14 8h6v6' },
  { id: 'members', href: '/dashboard/settings/members', label: 'Members', icon: 'M9 11a4 4 0 1 0 0-8 4 4 0 0 0 0 8zm-7 10v-1a6 6 0 0 1 12 0v1m3-10a3 3 0 1 0 0-6m2 16v-1a5 5 0 0 0-3-4.6' },
  { id: 'developers', href: '/dashboard/settings/developers', label: 'Developers', icon: 'm8 8-5 4 5 4m8-8 5 4-5 4m-3-12-2 16', role: 'admin' },
];
const RANK = { viewer: 0, editor: 1, admin: 2, owner: 3 };


function icon(path) {
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('class', 'icon');
  const shape = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  shape.setAttribute('d', path);
  svg.append(shape);
  return svg;
}

function brand() {
  return h('a', { class: 'brand', href: '/dashboard' }, h('span', { class: 'brand-mark', 'aria-hidden': 'true' }, 'F'), h('span', {}, 'Feedback'));
}

function shell(session) {
  const navList = h(
    'ul',
    { class: 'nav-list' },
    NAV.filter((item) => !item.role || RANK[session.role] >= RANK[item.role]).map((item) => h('li', {}, h('a', { href: item.href, class: 'nav-link', dataset: { nav: item.id } }, icon(item.icon), h('span', {}, item.label)))),
  );
  const menuButton = h('button', { type: 'button', class: 'menu-button', 'aria-expanded': 'false', 'aria-controls': 'primary-nav' }, 'Menu');
  const nav = h('nav', { id: 'primary-nav', class: 'nav', 'aria-label': 'Dashboard' }, navList);
  const signOut = h('button', { type: 'button', class: 'btn btn-secondary btn-small sign-out' }, 'Sign out');
  signOut.addEventListener('click', async () => {
    signOut.disabled = true;
    try {
      await api('/sign-out', { method: 'POST' });
    } catch {
      // Signed out either way: the page after this one needs a new link.
    }
    leaveSignedOut();
  });
  menuButton.addEventListener('click', () => {
    const open = menuButton.getAttribute('aria-expanded') !== 'true';
    menuButton.setAttribute('aria-expanded', String(open));
    document.body.classList.toggle('nav-open', open);
  });
  const account = h(
    'div',
    { class: 'account' },
    h('div', { class: 'account-name' }, session.account.name || 'Your account'),
    h('div', { class: 'account-plan' }, h('span', { class: `pill pill-plan pill-${session.account.plan}` }, `${planName(session.account.plan)} plan`)),
    signOut,
  );
  const main = h('main', { id: 'main', class: 'main', tabindex: '-1' });
  const sidebar = h('header', { class: 'sidebar' }, h('div', { class: 'sidebar-inner' }, h('div', { class: 'sidebar-top' }, brand(), menuButton), h('div', { class: 'sidebar-body' }, nav, account)));
  return {
    root: [h('a', { class: 'skip-link', href: '#main' }, 'Skip to content'), h('div', { class: 'layout' }, sidebar, main), h('div', { id: 'announcer', class: 'visually-hidden', 'aria-live': 'polite' })],
    main,
    closeMenu() {
      menuButton.setAttribute('aria-expanded', 'false');
      document.body.classList.remove('nav-open');
    },
  };
}

async function start() {
  // Set before the page loads, so the browser asks for this icon rather than /favicon.ico.
  if (!document.querySelector('link[rel="icon"]')) document.head.append(h('link', { rel: 'icon', href: '/dashboard/assets/icon.svg', type: 'image/svg+xml' }));
  const root = document.getElementById('app');
  clear(root, loading('Loading your dashboard…'));
  let session;
  try {
    session = await api('/session');
  } catch (error) {
    clear(root, h('main', { id: 'main', class: 'main' }, notice(`The dashboard could not load: ${errorMessage(error)}`, 'danger')));
    return;
  }
  setCsrfToken(session.csrf_token);
  // The pages hide what the member's role cannot do (the server refuses it anyway): see app.css, [data-role].
  document.body.dataset.role = session.role;
  const { root: parts, main, closeMenu } = shell(session);
  clear(root, parts);

  let generation = 0;
  let shown = '';
  // What the page shown asks to run when it goes (the editor stops listening to its preview).
  let leave = null;
  const render = async ({ focus = true } = {}) => {
    const current = ++generation;
    shown = location.pathname + location.search;
    closeMenu();
    const path = location.pathname;
    const route = routes.find((candidate) => candidate.pattern.test(path));
    const match = route ? path.match(route.pattern) : null;
    const active = route ? (typeof route.nav === 'function' ? route.nav(match) : route.nav) : null;
    for (const link of document.querySelectorAll('.nav-link')) {
      if (link.dataset.nav === active) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    if (!route) {
      document.title = 'Not found · Feedback';
      clear(main, h('div', { class: 'page' }, pageHeader('Page not found'), h('p', {}, 'There is no dashboard page at this address. ', h('a', { href: '/dashboard' }, 'Go to the overview'))));
      return;
    }
    clear(main, loading());
    try {
      const page = await route.load();
      if (current !== generation) return;
      const container = h('div', { class: 'page' });
      leave?.();
      leave = null;
      const left = await page.render(container, { session, params: match.slice(1), navigate, api, isCurrent: () => current === generation });
      if (typeof left === 'function') leave = left;
      if (current !== generation) return;
      clear(main, container);
    } catch (error) {
      if (current !== generation) return;
      const missing = error instanceof ApiError && error.status === 404;
      document.title = `${missing ? 'Not found' : 'Error'} · Feedback`;
      clear(
        main,
        h(
          'div',
          { class: 'page' },
          pageHeader(missing ? 'Not found' : 'Something went wrong'),
          notice(missing ? 'This item does not exist, or it belongs to another account.' : errorMessage(error), missing ? 'info' : 'danger'),
          h('p', {}, h('a', { href: '/dashboard' }, 'Back to the overview')),
        ),
      );
    }
    if (focus) main.querySelector('h1')?.focus({ preventScroll: true });
    window.scrollTo(0, 0);
  };

  function navigate(href, { replace = false } = {}) {
    if (replace) history.replaceState(null, '', href);
    else history.pushState(null, '', href);
    return render();
  }

  document.addEventListener('click', (event) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    const link = event.target instanceof Element ? event.target.closest('a[href]') : null;
    if (!link || link.target || link.hasAttribute('download')) return;
    const url = new URL(link.href, location.href);
    if (url.origin !== location.origin || !url.pathname.startsWith('/dashboard') || url.pathname.startsWith('/dashboard/api') || url.pathname.startsWith('/dashboard/assets') || url.pathname === SIGNED_OUT) return;
    if (url.pathname === location.pathname && url.search === location.search && url.hash) return;
    event.preventDefault();
    navigate(url.pathname + url.search);
  });
  // A fragment link (the skip link) also fires popstate: the page stays as it is.
  window.addEventListener('popstate', () => {
    if (location.pathname + location.search !== shown) render();
  });
  await render({ focus: false });
}

start();
