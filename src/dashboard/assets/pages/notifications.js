/**
 * An object's notifications, on its page: the signed-in member's own choice
 * (each response, a daily digest at an hour, or none; answers or not), and,
 * for admins and owners, the object's Slack incoming-webhook address.
 */
import { api } from '../api.js';
import { announce, clear, errorMessage, h, notice } from '../ui.js';

const RANK = { viewer: 0, editor: 1, admin: 2, owner: 3 };
const zones = () => (typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : ['UTC']);

export function notificationsCard(kind, id, session) {
  const status = h('div', { class: 'inline-status', 'aria-live': 'polite' });
  const body = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const card = h('section', { class: 'card', 'aria-labelledby': 'notify-title' }, h('h2', { id: 'notify-title' }, 'Notifications'), body, status);
  if (!session?.member) {
    clear(body, h('p', { class: 'muted small' }, 'Notifications go to members: sign in with your email address to choose yours.'));
    return card;
  }
  api(`/${kind}/${id}/notifications`).then((current) => clear(body, ...form(kind, id, session, current, status)), (error) => clear(body, notice(errorMessage(error), 'danger')));
  return card;
}

function form(kind, id, session, current, status) {
  const what = kind === 'polls' ? 'vote' : 'response';
  const mode = h('select', { id: 'notify-mode' },
    h('option', { value: 'none', selected: current.mine.mode === 'none' ? '' : null }, 'No emails'),
    h('option', { value: 'each', selected: current.mine.mode === 'each' ? '' : null }, `An email for each ${what} (at most one a minute)`),
    h('option', { value: 'digest', selected: current.mine.mode === 'digest' ? '' : null }, 'A daily digest'),
  );
  const hour = h('select', { id: 'notify-hour' }, Array.from({ length: 24 }, (_, i) => h('option', { value: String(i), selected: i === current.mine.digest_hour ? '' : null }, `${String(i).padStart(2, '0')}:00`)));
  const own = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const chosenZone = current.mine.time_zone === 'UTC' && current.mine.mode === 'none' && own ? own : current.mine.time_zone;
  const zone = h('select', { id: 'notify-zone' }, [...new Set(['UTC', ...zones()])].map((z) => h('option', { value: z, selected: z === chosenZone ? '' : null }, z)));
  const answers = h('input', { id: 'notify-answers', type: 'checkbox', checked: current.mine.include_answers ? '' : null });
  const digestFields = h('div', { class: 'notify-digest' },
    h('div', { class: 'field' }, h('label', { for: 'notify-hour' }, 'Digest hour'), hour),
    h('div', { class: 'field' }, h('label', { for: 'notify-zone' }, 'Time zone'), zone),
  );
  const sync = () => {
    digestFields.hidden = mode.value !== 'digest';
    answers.disabled = mode.value === 'none';
  };
  mode.addEventListener('change', sync);
  sync();
  const save = h('button', { type: 'submit', class: 'btn btn-primary' }, 'Save my notifications');
  const mine = h('form', { class: 'notify-form' },
    h('div', { class: 'field' }, h('label', { for: 'notify-mode' }, `Email me (${session.member.email})`), mode),
    digestFields,
    h('div', { class: 'checkbox-field' }, answers, h('label', { for: 'notify-answers' }, 'Include the answers')),
    save,
  );
  mine.addEventListener('submit', async (event) => {
    event.preventDefault();
    save.disabled = true;
    clear(status);
    try {
      await api(`/${kind}/${id}/notifications`, { method: 'PUT', body: { mode: mode.value, digest_hour: Number(hour.value), time_zone: zone.value, include_answers: answers.checked } });
      announce('Notifications saved');
      clear(status, notice('Saved.', 'success'));
    } catch (error) {
      clear(status, notice(errorMessage(error), 'danger'));
    } finally {
      save.disabled = false;
    }
  });
  if (RANK[session.role] < RANK.admin) return [mine];

  const url = h('input', { id: 'notify-slack', type: 'url', maxlength: '2000', placeholder: 'https://hooks.slack.com/services/…', value: current.slack_url ?? '' });
  const saveSlack = h('button', { type: 'submit', class: 'btn btn-secondary' }, 'Save Slack address');
  const slack = h('form', { class: 'notify-form' },
    h('div', { class: 'field' }, h('label', { for: 'notify-slack' }, 'Slack incoming webhook'), url, h('p', { class: 'hint' }, `Every ${what} is posted to this channel too, at most one message a minute. Leave empty to stop.`)),
    saveSlack,
  );
  slack.addEventListener('submit', async (event) => {
    event.preventDefault();
    saveSlack.disabled = true;
    clear(status);
    try {
      await api(`/${kind}/${id}/notifications/slack`, { method: 'PUT', body: { url: url.value.trim() === '' ? null : url.value.trim() } });
      announce('Slack address saved');
      clear(status, notice('Saved.', 'success'));
    } catch (error) {
      clear(status, notice(errorMessage(error), 'danger'));
    } finally {
      saveSlack.disabled = false;
    }
  });
  return [mine, slack];
}
