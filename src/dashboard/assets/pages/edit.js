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
  const header = pageHeader(title, { eyebrow: h('span', {}, h('a', { href: `/dashboard/${kind}` }, names.Many), object ? [' / ', h('a', { href: back }, titleOf(object))] : null) });

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
  const singular = names.one;
  await editor.mountEditor(mountPoint, {
    kind: singular,
    object,
    api,
    onSaved: (saved) => navigate(`/dashboard/${kind}/${saved?.id ?? id}`),
  });
}
