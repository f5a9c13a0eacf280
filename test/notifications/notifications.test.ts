/**
 * Notifications over HTTP with the clock in the test's hand: a batch a
 * minute, a digest at the member's hour, one-click unsubscribe, Slack, and
 * who may change what. The mail is captured in process
 * (test/notifications/mail.system.test.ts uses a real SMTP server).
 */
import t, { type Test } from 'tap';
import type { App } from '../../src/app.js';
import type { WebhookRequest } from '../../src/webhooks/http.js';
import { addMember, openAccountWithOwner } from '../../src/members/commands.js';
import type { Services } from '../../src/services.js';
import { MAIL_OUTBOX } from '../../src/mail/outbox.js';
import { ALL_SCOPES, manualClock, testApp, tokenFor } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { captureMailer, linkIn } from '../support/mail.js';

const same = { 'sec-fetch-site': 'same-origin' };
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
const QUESTIONS = [{ id: 'name', type: 'short_text', title: 'Your name', required: true }];

async function setUp(t: Test, start = '2026-11-22T10:00:00.000Z', slackStatus = [200]) {
  const mailer = captureMailer();
  const clock = manualClock(start);
  const slack: WebhookRequest[] = [];
  const send = async (request: WebhookRequest) => {
    slack.push(request);
    return { status: slackStatus[slack.length - 1] ?? 200 };
  };
  const { app, services } = await testApp(t, {
    clock,
    mail: { mailer, schedule: [1, 1, 1] },
    notifications: { gatherMs: 10_000, schedule: [1_000, 5_000], resolve: async () => [{ address: '93.184.215.14', family: 4 }], send },
    env: { PUBLIC_BASE_URL: 'http://localhost' },
  });
  const opened = await openAccountWithOwner(services, { name: 'Acme', plan: 'business', ownerEmail: 'owner@example.com', via: 'account_opened', scopes: ALL_SCOPES });
  const headers = { authorization: `Bearer ${opened.api_key}` };
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers, payload: { title: 'Signup', questions: QUESTIONS } });
  if (created.statusCode !== 201) throw new Error(created.body);
  const formId = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${formId}`, headers, payload: { published: true } });
  return { app, services, mailer, clock, slack, formId, accountId: opened.account_id, headers };
}

/** Asks for a link by email and follows it to a session: the headers of a change. */
async function signInByEmail(app: App, mailer: ReturnType<typeof captureMailer>, email: string) {
  const before = mailer.sent.filter((m) => m.to === email).length;
  await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email } });
  if (!(await eventually(() => mailer.sent.filter((m) => m.to === email).length > before))) throw new Error(`no mail to ${email}`);
  const mail = mailer.sent.filter((m) => m.to === email).at(-1)!;
  const token = new URL(linkIn(mail.text, '/dashboard/login')).searchParams.get('t')!;
  const posted = await app.inject({ method: 'POST', url: '/dashboard/login', headers: { ...same, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ t: token }).toString() });
  const cookie = `fs_session=${posted.cookies.find((c) => c.name === 'fs_session')!.value}`;
  const session = (await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } })).json();
  return { read: { cookie }, writes: { cookie, 'x-csrf-token': session.csrf_token as string, origin: 'http://localhost:80' } };
}

let visitor = 0;
async function submit(app: App, formId: string, name: string) {
  visitor += 1;
  const reply = await app.inject({ method: 'POST', url: `/api/forms/${formId}/submit`, headers: { 'user-agent': UA }, remoteAddress: `198.51.100.${visitor % 250}`, payload: { answers: { name }, _token: await tokenFor(app, 'forms', formId) } });
  if (reply.statusCode !== 200) throw new Error(reply.body);
}

/** The notifier and the outbox read the feed, at the clock's time. */
async function settle(services: Services) {
  await services.notifier.catchUp();
  const idle = await eventually(async () => (await services.readModels.find(MAIL_OUTBOX, { status: 'pending' })).length === 0);
  if (!idle) throw new Error('the outbox kept mail');
}

const notifications = (mailer: ReturnType<typeof captureMailer>, to = 'owner@example.com') => mailer.sent.filter((m) => m.to === to && m.headers?.['List-Unsubscribe']);

t.test('each response: one email, then ten in a second are one email; the one-click unsubscribe stops them', async (t) => {
  const { app, services, mailer, clock, formId } = await setUp(t);
  const owner = await signInByEmail(app, mailer, 'owner@example.com');
  const url = `/dashboard/api/forms/${formId}/notifications`;
  t.match((await app.inject({ method: 'GET', url, headers: owner.read })).json(), { mine: { mode: 'none', digest_hour: 9, time_zone: 'UTC', include_answers: false }, slack_url: null }, 'nothing by default');
  const chosen = await app.inject({ method: 'PUT', url, headers: owner.writes, payload: { mode: 'each', include_answers: true } });
  t.equal(chosen.statusCode, 200, chosen.body);
  t.match(chosen.json().mine, { mode: 'each', include_answers: true });

  await submit(app, formId, 'Ada');
  await settle(services);
  t.equal(notifications(mailer).length, 0, 'the first response waits a moment for others');
  clock.advance(10_000);
  await settle(services);
  t.equal(notifications(mailer).length, 1, 'one email');
  const [first] = notifications(mailer);
  t.equal(first!.subject, 'New: 1 response to Signup');
  t.match(first!.text, /Your name: Ada/, 'with the answers asked for');
  t.match(first!.headers, { 'List-Unsubscribe': /^<http:\/\/localhost\/notifications\/unsubscribe\?t=mem_.+>$/, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' });

  for (let i = 0; i < 10; i += 1) await submit(app, formId, `Visitor ${i}`);
  clock.advance(1_000);
  await settle(services);
  clock.advance(40_000);
  await settle(services);
  t.equal(notifications(mailer).length, 1, 'not before a minute since the last email');
  clock.advance(20_000);
  await settle(services);
  t.equal(notifications(mailer).length, 2, 'ten responses in a second: one email');
  t.equal(notifications(mailer)[1]!.subject, 'New: 10 responses to Signup');

  const link = first!.headers!['List-Unsubscribe']!.slice(1, -1).replace('http://localhost', '');
  const page = await app.inject({ method: 'GET', url: link, headers: { accept: 'text/html' } });
  t.equal(page.statusCode, 200);
  t.match(page.body, /<button type="submit">Unsubscribe<\/button>/, 'a GET only asks');
  t.match((await app.inject({ method: 'GET', url, headers: owner.read })).json().mine, { mode: 'each' }, 'and changes nothing');
  const oneClick = await app.inject({ method: 'POST', url: link, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'List-Unsubscribe=One-Click' });
  t.equal(oneClick.statusCode, 200, oneClick.body);
  t.same(oneClick.json(), { unsubscribed: true });
  t.equal((await app.inject({ method: 'POST', url: link, headers: { 'content-type': 'multipart/form-data; boundary=x', accept: 'text/html' }, payload: '--x\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--x--\r\n' })).statusCode, 200, 'twice, and as multipart: the same');
  t.match((await app.inject({ method: 'GET', url, headers: owner.read })).json().mine, { mode: 'none' });
  await submit(app, formId, 'Late');
  clock.advance(120_000);
  await settle(services);
  t.equal(notifications(mailer).length, 2, 'no more mail');

  const forged = await app.inject({ method: 'POST', url: `${link.slice(0, -3)}abc` });
  t.equal(forged.statusCode, 401);
  t.equal(forged.json().code, 'unsubscribe_link_invalid');
  t.equal((await app.inject({ method: 'GET', url: '/notifications/unsubscribe?t=nope', headers: { accept: 'text/html' } })).statusCode, 401);
});

t.test('a daily digest at the member\'s hour holds the day\'s count; a viewer chooses for themself only', async (t) => {
  const { app, services, mailer, clock, formId, accountId } = await setUp(t, '2026-11-22T10:00:00.000Z');
  await addMember(services, { accountId, email: 'viewer@example.com', role: 'viewer' });
  const viewer = await signInByEmail(app, mailer, 'viewer@example.com');
  const url = `/dashboard/api/forms/${formId}/notifications`;
  const bad = await app.inject({ method: 'PUT', url, headers: viewer.writes, payload: { mode: 'digest', time_zone: 'Mars/Olympus' } });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().code, 'validation_error');
  const chosen = await app.inject({ method: 'PUT', url, headers: viewer.writes, payload: { mode: 'digest', digest_hour: 8, time_zone: 'Europe/Berlin' } });
  t.equal(chosen.statusCode, 200, chosen.body);
  t.equal((await app.inject({ method: 'PUT', url: `${url}/slack`, headers: viewer.writes, payload: { url: 'https://hooks.slack.com/services/T/B/X' } })).json().code, 'forbidden', 'Slack is for admins');

  for (const name of ['A', 'B', 'C']) await submit(app, formId, name);
  await settle(services);
  clock.set('2026-11-23T06:59:00.000Z');
  await settle(services);
  t.equal(notifications(mailer, 'viewer@example.com').length, 0, 'not before the hour');
  clock.set('2026-11-23T07:00:00.000Z');
  await settle(services);
  const digests = notifications(mailer, 'viewer@example.com');
  t.equal(digests.length, 1, 'at 08:00 in Berlin');
  t.equal(digests[0]!.subject, 'Daily digest: 3 responses to Signup');
  t.notMatch(digests[0]!.text, /Your name/, 'no answers unless asked for');
  clock.set('2026-11-24T07:00:00.000Z');
  await settle(services);
  t.equal(notifications(mailer, 'viewer@example.com').length, 1, 'a day without responses: no digest');
  await submit(app, formId, 'D');
  clock.set('2026-11-25T07:00:00.000Z');
  await settle(services);
  t.match(notifications(mailer, 'viewer@example.com')[1]!.subject, 'Daily digest: 1 response to Signup');
});

t.test('Slack: an admin sets the address; each batch is a message, retried on the schedule', async (t) => {
  const { app, services, mailer, clock, slack, formId } = await setUp(t, undefined, [500, 200]);
  const owner = await signInByEmail(app, mailer, 'owner@example.com');
  const url = `/dashboard/api/forms/${formId}/notifications/slack`;
  t.equal((await app.inject({ method: 'PUT', url, headers: owner.writes, payload: { url: 'ftp://example.com' } })).statusCode, 400);
  const set = await app.inject({ method: 'PUT', url, headers: owner.writes, payload: { url: 'https://hooks.slack.com/services/T000/B000/XXXX' } });
  t.same(set.json(), { slack_url: 'https://hooks.slack.com/services/T000/B000/XXXX' });
  t.equal((await app.inject({ method: 'GET', url: `/dashboard/api/forms/${formId}/notifications`, headers: owner.read })).json().slack_url, 'https://hooks.slack.com/services/T000/B000/XXXX');
  await submit(app, formId, 'Ada');
  await submit(app, formId, 'Bo');
  clock.advance(10_000);
  await settle(services);
  t.equal(slack.length, 1, 'sent, refused');
  t.equal(slack[0]!.url, 'https://hooks.slack.com/services/T000/B000/XXXX');
  t.match(JSON.parse(slack[0]!.body), { text: '2 new responses to *Signup*: <http://localhost/dashboard/forms/' + formId + '|see them on the dashboard>' });
  clock.advance(1_000);
  await settle(services);
  t.equal(slack.length, 2, 'tried again after the first delay, accepted');
  clock.advance(60_000);
  await settle(services);
  t.equal(slack.length, 2, 'once accepted, not again');
  t.same((await app.inject({ method: 'PUT', url, headers: owner.writes, payload: { url: null } })).json(), { slack_url: null });
  await submit(app, formId, 'Cy');
  clock.advance(120_000);
  await settle(services);
  t.equal(slack.length, 2, 'no address, no message');
  t.equal((await app.inject({ method: 'GET', url: `/dashboard/api/polls/pol_nope/notifications`, headers: owner.read })).statusCode, 404, 'another object: 404');
});

t.test('a member removed, or an object deleted, gets no more; Slack that never accepts is given up', async (t) => {
  const { app, services, mailer, clock, slack, formId, accountId, headers } = await setUp(t, undefined, [500, 500, 500, 500]);
  const added = await addMember(services, { accountId, email: 'editor@example.com', role: 'editor' });
  const editor = await signInByEmail(app, mailer, 'editor@example.com');
  const owner = await signInByEmail(app, mailer, 'owner@example.com');
  const url = `/dashboard/api/forms/${formId}/notifications`;
  t.equal((await app.inject({ method: 'PUT', url, headers: editor.writes, payload: { mode: 'each' } })).statusCode, 200);
  t.equal((await app.inject({ method: 'PUT', url, headers: owner.writes, payload: { mode: 'digest', digest_hour: 11 } })).statusCode, 200);
  t.equal((await app.inject({ method: 'PUT', url: `${url}/slack`, headers: owner.writes, payload: { url: 'https://hooks.slack.com/services/T/B/X' } })).statusCode, 200);
  await submit(app, formId, 'Ada');
  await settle(services);
  t.equal((await app.inject({ method: 'DELETE', url: `/dashboard/api/members/${added.member_id}`, headers: owner.writes })).statusCode, 200);
  clock.advance(10_000);
  await settle(services);
  t.equal(notifications(mailer, 'editor@example.com').length, 0, 'removed before the batch was due: nothing');
  t.equal(slack.length, 1, 'Slack refused once');
  for (const wait of [1_000, 5_000]) {
    clock.advance(wait);
    await settle(services);
  }
  t.equal(slack.length, 3, 'tried on the schedule, then given up');
  clock.advance(60 * 60_000);
  await settle(services);
  t.equal(slack.length, 3, 'and not again');
  t.same(notifications(mailer, 'owner@example.com').map((m) => m.subject), ['Daily digest: 1 response to Signup'], 'the hour came meanwhile: the digest');

  await submit(app, formId, 'Bo');
  await settle(services);
  const deleted = await app.inject({ method: 'DELETE', url: `/api/forms/${formId}`, headers });
  t.ok(deleted.statusCode < 300, `the form deleted: ${deleted.statusCode} ${deleted.body}`);
  clock.set('2026-11-23T11:00:00.000Z');
  await settle(services);
  t.equal(notifications(mailer, 'owner@example.com').length, 1, 'no digest of a deleted form');
});
