/** /new and /:id/edit: the editor with its live preview, mounted here; it saves through the same api(). */
import { api } from '../api.js';
import { clear, h, kindNames, notice, pageHeader, titleOf } from '../ui.js';

export async function render(container, { session, params, navigate, isCurrent }) {
  const [kind, id] = params;
  const names = kindNames(kind);
  const object = id ? await api(`/${kind}/${id}`) : undefined;
  if (!isCurrent()) return;
  const title = object ? `Edit “${titleOf(object)}”` : `New ${names.one}`;
  document.title = `${title} · Feedback`;
  const back = object ? `/dashboard/${kind}/${id}` : `/dashboard/${kind}`;
  const header = pageHeader(title, { eyebrow: h('span', {}, h('a', { href: `/dashboard/${kind}` }, names.Many), object ? [' / ', h('a', { href: back }, titleOf(object))] : null), actions: object ? [viewLink(kind, id, names)] : [] });

  if (!object && kind === 'widgets' && !session.plan_limits.create_widgets) {
    clear(container, header, h('div', { class: 'notice notice-plan' }, h('p', {}, h('strong', {}, 'Widgets need the Pro plan. '), 'Your account is on the Free plan, which includes forms and polls.')), h('p', {}, h('a', { href: '/dashboard/forms/new' }, 'Create a form instead')));
    return;
  }

  if (!document.querySelector('link[href="/dashboard/assets/editor.css"]')) document.head.append(h('link', { rel: 'stylesheet', href: '/dashboard/assets/editor.css' }));
  const mountPoint = h('div', { class: 'editor-mount' });
  clear(container, header, mountPoint);
  let editor;
  try {
    editor = await import('../editor.js');
  } catch {
    editor = null;
  }
  if (!isCurrent()) return;
  if (!editor?.mountEditor) {
    clear(mountPoint, notice('The editor is not available in this build.', 'danger'), h('p', {}, h('a', { href: back }, 'Back')));
    return;
  }
  let current = object;
  const mounted = editor.mountEditor(mountPoint, {
    kind: names.one,
    object,
    // api() already prefixes the dashboard's /dashboard/api.
    api: (path, init) => api(path, init),
    base: '',
    planLimits: session.plan_limits,
    origin: location.origin,
    onSaved: (saved) => {
      const created = !current;
      current = saved;
      if (!created || !saved?.id) return;
      // A new object stays in the editor, now at its own address, with a way to its page.
      history.replaceState(null, '', `/dashboard/${kind}/${saved.id}/edit`);
      document.title = `Edit “${titleOf(saved)}” · Feedback`;
      header.querySelector('h1').textContent = `Edit “${titleOf(saved)}”`;
      let actions = header.querySelector('.page-actions');
      if (!actions) header.append((actions = h('div', { class: 'page-actions' })));
      actions.replaceChildren(viewLink(kind, saved.id, names));
    },
  });
  return () => mounted?.destroy?.();
}

const viewLink = (kind, id, names) => h('a', { class: 'btn btn-secondary', href: `/dashboard/${kind}/${id}` }, `View ${names.one} and responses`);
