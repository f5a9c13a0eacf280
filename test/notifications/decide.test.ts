/** Given/when/then on the pure decisions: when a batch or a digest is due, and what a choice records. */
import t from 'tap';
import { addResponse, batchDue, NEVER, nextDigestAt, sent, type Pending } from '../../src/notifications/schedule.js';
import { decide, evolve, notificationSettings, type NotificationCommand } from '../../src/notifications/settings.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();

t.test('a batch is due after the gathering wait, and a minute after the last email', async (t) => {
  t.equal(batchDue(at('2026-01-01T10:00:00Z'), null, 10_000), at('2026-01-01T10:00:10Z'));
  t.equal(batchDue(at('2026-01-01T10:00:00Z'), at('2026-01-01T09:59:30Z'), 10_000), at('2026-01-01T10:00:30Z'));
  const empty: Pending = { count: 0, response_ids: [], since: null, until: null, due_at: NEVER, last_sent_at: null };
  const one = addResponse(empty, 'rsp_1', '2026-01-01T10:00:00.000Z', 'each', 10_000);
  t.match(one, { count: 1, response_ids: ['rsp_1'], since: '2026-01-01T10:00:00.000Z', due_at: '2026-01-01T10:00:10.000Z' });
  const two = addResponse(one, 'rsp_2', '2026-01-01T10:00:05.000Z', 'each', 10_000);
  t.match(two, { count: 2, due_at: '2026-01-01T10:00:10.000Z', until: '2026-01-01T10:00:05.000Z' }, 'a batch keeps its due time');
  let many = two;
  for (let i = 3; i <= 12; i += 1) many = addResponse(many, `rsp_${i}`, '2026-01-01T10:00:06.000Z', 'each', 10_000);
  t.equal(many.count, 12);
  t.equal(many.response_ids.length, 10, 'answers of the first ten only');
  const done = sent(many, '2026-01-01T10:00:10.000Z', NEVER);
  t.same(done, { count: 0, response_ids: [], since: null, until: null, due_at: NEVER, last_sent_at: '2026-01-01T10:00:10.000Z' });
  t.equal(sent(done, '2026-01-01T11:00:00.000Z', NEVER).last_sent_at, '2026-01-01T10:00:10.000Z', 'an empty digest sends nothing, so moves no last sending');
  const digest = addResponse({ ...empty, due_at: '2026-01-02T09:00:00.000Z' }, 'rsp_1', '2026-01-01T10:00:00.000Z', 'digest', 10_000);
  t.equal(digest.due_at, '2026-01-02T09:00:00.000Z', 'a digest keeps its hour');
});

t.test('the next digest: the member\'s hour in their time zone, across daylight-saving changes', async (t) => {
  t.equal(iso(nextDigestAt(9, 'UTC', at('2026-01-01T08:59:00Z'))), '2026-01-01T09:00:00.000Z');
  t.equal(iso(nextDigestAt(9, 'UTC', at('2026-01-01T09:00:00Z'))), '2026-01-02T09:00:00.000Z', 'strictly after');
  t.equal(iso(nextDigestAt(8, 'Europe/Berlin', at('2026-01-01T12:00:00Z'))), '2026-01-02T07:00:00.000Z', 'winter: UTC+1');
  t.equal(iso(nextDigestAt(8, 'Europe/Berlin', at('2026-07-01T12:00:00Z'))), '2026-07-02T06:00:00.000Z', 'summer: UTC+2');
  t.equal(iso(nextDigestAt(9, 'Asia/Kolkata', at('2026-01-01T00:00:00Z'))), '2026-01-01T03:30:00.000Z', 'a half-hour offset');
  t.equal(iso(nextDigestAt(2, 'Europe/Berlin', at('2026-03-28T12:00:00Z'))), '2026-03-29T01:00:00.000Z', 'a skipped hour: the next that exists');
});

const choose = (mode: 'each' | 'digest' | 'none', via: 'dashboard' | 'unsubscribe' = 'dashboard'): NotificationCommand => ({
  type: 'Choose',
  account_id: 'acc_1',
  object_id: 'frm_1',
  object_kind: 'form',
  member_id: 'mem_1',
  email: 'ada@example.com',
  choice: { mode, digest_hour: 9, time_zone: 'UTC', include_answers: false },
  via,
  by: 'mem_1',
  at: '2026-01-01T10:00:00.000Z',
});

t.test('a choice is recorded when it changes something', async (t) => {
  const initial = notificationSettings.initial();
  t.same(decide(choose('none', 'unsubscribe'), initial), [], 'unsubscribing from nothing records nothing');
  const [chosen] = decide(choose('each'), initial);
  t.match(chosen, { type: 'NotificationsChosen', data: { mode: 'each', member_id: 'mem_1', email: 'ada@example.com', via: 'dashboard' } });
  const state = evolve(initial, chosen!);
  t.same(decide(choose('each'), state), [], 'the same again: nothing');
  t.match(decide(choose('none', 'unsubscribe'), state), [{ type: 'NotificationsChosen', data: { mode: 'none', via: 'unsubscribe' } }]);
  const slack = { type: 'SetSlack', account_id: 'acc_1', object_id: 'frm_1', object_kind: 'form', url: 'https://hooks.slack.com/services/x', by: 'mem_1', at: '2026-01-01T10:00:00.000Z' } as const;
  const [set] = decide(slack, state);
  t.match(set, { type: 'SlackNotificationsSet', data: { url: 'https://hooks.slack.com/services/x' } });
  t.same(decide(slack, evolve(state, set!)), [], 'the same address again: nothing');
  t.equal(notificationSettings.streamId('frm_1'), 'notifications-frm_1');
});
