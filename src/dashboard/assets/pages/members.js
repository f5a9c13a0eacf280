/** Settings → Members: who is in the account with which role, invitations, and the account's activity. */
import { api } from '../api.js';
import { announce, card, clear, date, errorMessage, h, notice, pageHeader, table, timeAgo } from '../ui.js';

const ROLES = ['owner', 'admin', 'editor', 'viewer'];
const RANK = { viewer: 0, editor: 1, admin: 2, owner: 3 };
const WHAT = {
  'member.joined': 'joined',
  'member.invited': 'was invited',
  'member.role_changed': 'changed role',
  'member.left': 'left',
  'member.removed': 'was removed',
};

/** Columns of the dashboard's tables from labels, each showing its place in a row. */
const columns = (labels) => labels.map((label, index) => ({ label, cell: (row) => row[index] }));

export async function render(container, { session, isCurrent, navigate }) {
  document.title = 'Members · Settings · Feedback';
  const [{ members, invitations }, { activity }] = await Promise.all([api('/members'), api('/activity')]);
  if (!isCurrent()) return;
  const mine = session.role;
  const manages = RANK[mine] >= RANK.admin;
  // Only an owner gives or takes the owner role; an admin manages the others.
  const grantable = ROLES.filter((role) => mine === 'owner' || role !== 'owner');
  const status = h('div', { 'aria-live': 'polite' });
  const reload = () => navigate(location.pathname, { replace: true });
  const act = async (run, done) => {
    try {
      await run();
      announce(done);
      reload();
    } catch (error) {
      clear(status, notice(errorMessage(error), 'danger'));
    }
  };

  const roleCell = (member) => {
    if (!manages || (member.role === 'owner' && mine !== 'owner')) return member.role;
    const select = h('select', { 'aria-label': `Role of ${member.email}` }, grantable.map((role) => h('option', { value: role, selected: role === member.role ? '' : null }, role)));
    select.addEventListener('change', () => act(() => api(`/members/${member.member_id}`, { method: 'PUT', body: { role: select.value } }), `${member.email} is now ${select.value}`));
    return select;
  };
  const actions = (member) => {
    if (session.member && member.member_id === session.member.id) {
      const leave = h('button', { type: 'button', class: 'btn btn-danger-ghost btn-small keep-for-viewer' }, 'Leave');
      leave.addEventListener('click', () => act(() => api('/members/leave', { method: 'POST' }), 'You left the account'));
      return leave;
    }
    if (!manages || (member.role === 'owner' && mine !== 'owner')) return '';
    const remove = h('button', { type: 'button', class: 'btn btn-danger-ghost btn-small', 'aria-label': `Remove ${member.email}` }, 'Remove');
    remove.addEventListener('click', () => act(() => api(`/members/${member.member_id}`, { method: 'DELETE' }), `${member.email} was removed`));
    return remove;
  };

  const list = table({
    caption: 'Members', captionHidden: true,
    columns: columns(['Email', 'Role', 'Joined', 'Actions']),
    rows: members.map((member) => [member.email, roleCell(member), date(member.joined_at), actions(member)]),
  });

  let inviteCard = null;
  if (manages) {
    const email = h('input', { id: 'invite-email', type: 'email', required: '', maxlength: '254', autocomplete: 'off' });
    const role = h('select', { id: 'invite-role' }, grantable.map((r) => h('option', { value: r, selected: r === 'editor' ? '' : null }, r)));
    const form = h(
      'form',
      { class: 'invite-form' },
      h('label', { for: 'invite-email' }, 'Email address'),
      email,
      h('label', { for: 'invite-role' }, 'Role'),
      role,
      h('button', { type: 'submit', class: 'btn btn-primary' }, 'Send invitation'),
    );
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      act(() => api('/members/invitations', { method: 'POST', body: { email: email.value, role: role.value } }), `Invitation sent to ${email.value}`);
    });
    const pending = invitations.length
      ? table({ caption: 'Pending invitations', columns: columns(['Email', 'Role', 'Expires']), rows: invitations.map((i) => [i.email, i.role, date(i.expires_at)]) })
      : null;
    inviteCard = card({ 'aria-labelledby': 'invite-title' }, h('h2', { id: 'invite-title' }, 'Invite a member'), form, pending);
  }

  const log = table({
    caption: 'Activity', captionHidden: true,
    columns: columns(['When', 'Member', 'What', 'By']),
    rows: activity.map((a) => [timeAgo(a.at), a.email, a.type === 'member.role_changed' ? `role ${a.from} → ${a.to}` : `${WHAT[a.type] ?? a.type}${a.role ? ` as ${a.role}` : ''}`, a.by_email ?? (a.by === 'cli' ? 'the admin command line' : a.by)]),
  });

  clear(
    container,
    pageHeader('Members', { eyebrow: 'Settings', meta: `You are ${mine === 'owner' && !session.member ? 'signed in with an administrator\'s link (owner rights)' : mine}` }),
    status,
    card({ 'aria-labelledby': 'members-title' }, h('h2', { id: 'members-title' }, 'Members'), list),
    inviteCard,
    card({ 'aria-labelledby': 'activity-title' }, h('h2', { id: 'activity-title' }, 'Activity'), log),
  );
}
