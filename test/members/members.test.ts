/**
 * Sign-in by email, invitations, roles and the account's activity, over
 * HTTP, with the mail outbox following the feed as in a server (the mail
 * captured in process; test/members/mail.system.test.ts uses a real SMTP
 * server).
 */
import t, { type Test } from 'tap';
import { addMember, openAccountWithOwner } from '../../src/members/commands.js';
import { testApp, manualClock } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { captureMailer, linkIn } from '../support/mail.js';
import type { App } from '../../src/app.js';

const same = { 'sec-fetch-site': 'same-origin' };

async function setUp(t: Test, env: Record<string, string> = {}, refuse = 0, realClock = false) {
  const mailer = captureMailer(refuse);
  const clock = realClock ? Object.assign(() => new Date(), { advance: () => undefined }) : manualClock(new Date().toISOString());
  const { app, services } = await testApp(t, { clock, mail: { mailer, schedule: [1, 1, 1] }, env: { PUBLIC_BASE_URL: 'http://localhost', ...env } });
  const opened = await openAccountWithOwner(services, { name: 'Acme', plan: 'business', ownerEmail: 'owner@example.com', via: 'account_opened' });
  return { app, services, mailer, clock, accountId: opened.account_id, ownerId: opened.owner.member_id };
}

async function mailTo(mailer: ReturnType<typeof captureMailer>, to: string, count = 1) {
  if (!(await eventually(() => mailer.sent.filter((m) => m.to === to).length >= count))) throw new Error(`no mail to ${to}`);
  return mailer.sent.filter((m) => m.to === to).at(count - 1)!;
}

/** Asks for a link by email and follows it to a session: the cookie and the headers of a change. */
async function signInByEmail(app: App, mailer: ReturnType<typeof captureMailer>, email: string) {
  const before = mailer.sent.filter((m) => m.to === email).length;
  const asked = await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email } });
  if (asked.statusCode !== 202) throw new Error(asked.body);
  const mail = await mailTo(mailer, email, before + 1);
  const token = new URL(linkIn(mail.text, '/dashboard/login')).searchParams.get('t')!;
  const posted = await app.inject({ method: 'POST', url: '/dashboard/login', headers: { ...same, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ t: token }).toString() });
  if (posted.statusCode !== 303) throw new Error(posted.body);
  const cookie = `fs_session=${posted.cookies.find((c) => c.name === 'fs_session')!.value}`;
  const session = (await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } })).json();
  return { cookie, session, token, writes: { cookie, 'x-csrf-token': session.csrf_token as string, origin: 'http://localhost:80' } };
}

t.test('sign-in by email: the same 202 for any address, a link by mail to a member only, used once', async (t) => {
  const { app, mailer, accountId } = await setUp(t);
  const known = await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email: ' Owner@Example.com ' } });
  const unknown = await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email: 'nobody@example.com' } });
  t.equal(known.statusCode, 202);
  t.equal(unknown.statusCode, 202);
  t.same(known.json(), unknown.json(), 'the same answer');
  const mail = await mailTo(mailer, 'owner@example.com');
  t.match(mail.subject, /sign-in link/);
  t.match(mail.html, /<a href="http:\/\/localhost\/dashboard\/login\?t=/);
  t.equal(mailer.sent.filter((m) => m.to === 'nobody@example.com').length, 0, 'nothing to an unknown address');

  const signedIn = await signInByEmail(app, mailer, 'owner@example.com');
  t.same(signedIn.session.member.email, 'owner@example.com', 'the session knows the member');
  t.equal(signedIn.session.role, 'owner');
  t.equal(signedIn.session.account.id, accountId);
  const again = await app.inject({ method: 'POST', url: '/dashboard/login', headers: { ...same, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }, payload: new URLSearchParams({ t: signedIn.token }).toString() });
  t.equal(again.statusCode, 401, 'a used link is refused');
  t.match(again.body, /has been used already/);

  const bad = await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email: 'not an address' } });
  t.equal(bad.statusCode, 400);
  t.equal(bad.json().code, 'validation_error');
});

t.test('an expired link is refused', async (t) => {
  const { app, mailer, clock } = await setUp(t);
  await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email: 'owner@example.com' } });
  const mail = await mailTo(mailer, 'owner@example.com');
  clock.advance(15 * 60_000 + 1);
  const token = new URL(linkIn(mail.text, '/dashboard/login')).searchParams.get('t')!;
  const posted = await app.inject({ method: 'POST', url: '/dashboard/login', headers: { ...same, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ t: token }).toString() });
  t.equal(posted.statusCode, 401);
  t.equal(posted.json().code, 'login_link_expired');
});

t.test('sign-in requests are limited per email and per address', async (t) => {
  const { app } = await setUp(t);
  const codes: number[] = [];
  for (let i = 0; i < 4; i++) codes.push((await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email: 'owner@example.com' } })).statusCode);
  t.same(codes, [202, 202, 202, 429], 'three a minute per address');
  const others: number[] = [];
  for (let i = 0; i < 8; i++) others.push((await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email: `someone${i}@example.com` } })).statusCode);
  t.same(others, [202, 202, 202, 202, 202, 202, 429, 429], 'ten a minute per client address');
});

t.test('the signed-out /dashboard is the sign-in form; a browser posting it gets a page', async (t) => {
  const { app } = await setUp(t);
  const page = await app.inject({ method: 'GET', url: '/dashboard' });
  t.equal(page.statusCode, 200);
  t.match(page.body, /<form method="post" action="\/dashboard\/sign-in"/);
  t.notMatch(page.body, /npm run/);
  const sent = await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: { ...same, accept: 'text/html', 'content-type': 'application/x-www-form-urlencoded' }, payload: 'email=owner%40example.com' });
  t.equal(sent.statusCode, 202);
  t.match(sent.body, /Check your email/);
  const foreign = await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: { 'sec-fetch-site': 'cross-site' }, payload: { email: 'owner@example.com' } });
  t.equal(foreign.statusCode, 403);
});

t.test('invitation, acceptance, roles: a viewer cannot change anything; the last owner cannot leave', async (t) => {
  const { app, services, mailer, accountId } = await setUp(t);
  const owner = await signInByEmail(app, mailer, 'owner@example.com');
  const invited = await app.inject({ method: 'POST', url: '/dashboard/api/members/invitations', headers: owner.writes, payload: { email: 'Viewer@Example.com', role: 'viewer' } });
  t.equal(invited.statusCode, 201, invited.body);
  const invitation = await mailTo(mailer, 'viewer@example.com');
  t.match(invitation.text, /owner@example\.com invites you to the account Acme as viewer/);
  const link = linkIn(invitation.text, '/dashboard/invitations/accept');
  const token = new URL(link).searchParams.get('t')!;
  const shown = await app.inject({ method: 'GET', url: `/dashboard/invitations/accept?t=${token}` });
  t.equal(shown.statusCode, 200);
  t.match(shown.body, /Join Acme/);
  const accepted = await app.inject({ method: 'POST', url: '/dashboard/invitations/accept', headers: { ...same, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ t: token }).toString() });
  t.equal(accepted.statusCode, 303, accepted.body);
  const cookie = `fs_session=${accepted.cookies.find((c) => c.name === 'fs_session')!.value}`;
  const viewerSession = (await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } })).json();
  t.equal(viewerSession.account.id, accountId, 'the member sees the account');
  t.equal(viewerSession.role, 'viewer');
  const viewer = { cookie, 'x-csrf-token': viewerSession.csrf_token, origin: 'http://localhost:80' };
  const twice = await app.inject({ method: 'POST', url: '/dashboard/invitations/accept', headers: { ...same, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ t: token }).toString() });
  t.equal(twice.statusCode, 401, 'an invitation is accepted once');

  // A response of the owner's form: a viewer may read it but not delete it.
  const form = (await app.inject({ method: 'POST', url: '/dashboard/api/forms', headers: owner.writes, payload: { title: 'F', questions: [{ id: 'q', type: 'short_text', title: 'Q' }] } })).json().id as string;
  await app.inject({ method: 'PUT', url: `/dashboard/api/forms/${form}`, headers: owner.writes, payload: { published: true } });
  const embedToken = (await app.inject({ method: 'GET', url: `/api/forms/${form}/token` })).json().token as string;
  const response = (await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, payload: { answers: { q: 'hello' }, _token: embedToken } })).json().id as string;
  // A viewer reads, and every change is 403 forbidden, changing nothing.
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/widgets', headers: { cookie } })).statusCode, 200);
  const before = await services.events.headPosition();
  for (const [method, url, payload] of [
    ['POST', '/dashboard/api/widgets', { title: 'x' }],
    ['POST', '/dashboard/api/forms', { title: 'x' }],
    ['POST', '/dashboard/api/keys', { name: 'k' }],
    ['POST', '/dashboard/api/members/invitations', { email: 'x@example.com', role: 'viewer' }],
    ['PUT', `/dashboard/api/members/${viewerSession.member.id}`, { role: 'owner' }],
    ['DELETE', `/dashboard/api/forms/${form}/responses/${response}`, undefined],
  ] as const) {
    const refused = await app.inject({ method, url, headers: viewer, payload });
    t.equal(refused.statusCode, 403, `${method} ${url}`);
    t.equal(refused.json().code, 'forbidden');
    t.match(refused.json(), { statusCode: 403, error: 'Forbidden', message: /role/ });
  }
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/keys', headers: { cookie } })).statusCode, 403, 'keys are for admins');
  t.equal(await services.events.headPosition(), before, 'nothing was recorded');

  // The owner makes the viewer an editor, then owner; the first owner may then leave, and the last one may not.
  const members = (await app.inject({ method: 'GET', url: '/dashboard/api/members', headers: { cookie: owner.cookie } })).json().members as Array<{ member_id: string; email: string }>;
  t.same(members.map((m) => m.email), ['owner@example.com', 'viewer@example.com']);
  const vid = viewerSession.member.id as string;
  t.equal((await app.inject({ method: 'PUT', url: `/dashboard/api/members/${vid}`, headers: owner.writes, payload: { role: 'editor' } })).statusCode, 200);
  t.equal((await app.inject({ method: 'POST', url: '/dashboard/api/forms', headers: viewer, payload: { title: 'Made by an editor' } })).statusCode, 201, 'an editor creates');
  t.equal((await app.inject({ method: 'POST', url: '/dashboard/api/keys', headers: viewer, payload: { name: 'k' } })).statusCode, 403, 'an editor makes no keys');
  t.match((await app.inject({ method: 'DELETE', url: `/dashboard/api/forms/${form}/responses/${response}`, headers: viewer })).json(), { success: true, deleted: 1 }, 'an editor deletes a response');

  const lonely = await app.inject({ method: 'POST', url: '/dashboard/api/members/leave', headers: owner.writes });
  t.equal(lonely.statusCode, 409, 'the last owner cannot leave');
  t.equal(lonely.json().code, 'last_owner');
  t.equal((await app.inject({ method: 'PUT', url: `/dashboard/api/members/${owner.session.member.id}`, headers: owner.writes, payload: { role: 'admin' } })).json().code, 'last_owner', 'nor stop being owner');
  t.equal((await app.inject({ method: 'PUT', url: `/dashboard/api/members/${vid}`, headers: owner.writes, payload: { role: 'owner' } })).statusCode, 200);
  t.equal((await app.inject({ method: 'POST', url: '/dashboard/api/members/leave', headers: owner.writes })).statusCode, 200, 'with another owner, the first one may leave');
  t.equal((await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: owner.cookie } })).statusCode, 401, 'whose session ends with the membership');

  const log = (await app.inject({ method: 'GET', url: '/dashboard/api/activity', headers: { cookie } })).json().activity as Array<Record<string, string>>;
  t.same(
    log.map((a) => [a.type, a.email, a.by_email]),
    [
      ['member.left', 'owner@example.com', 'owner@example.com'],
      ['member.role_changed', 'viewer@example.com', 'owner@example.com'],
      ['member.role_changed', 'viewer@example.com', 'owner@example.com'],
      ['member.joined', 'viewer@example.com', 'viewer@example.com'],
      ['member.invited', 'viewer@example.com', 'owner@example.com'],
      ['member.joined', 'owner@example.com', null],
    ],
    'every change, naming who made it',
  );
});

t.test('an admin manages members but not owners; an operator session is no member', async (t) => {
  const { app, services, mailer, accountId, ownerId } = await setUp(t);
  await addMember(services, { accountId, email: 'admin@example.com', role: 'admin' });
  const admin = await signInByEmail(app, mailer, 'admin@example.com');
  t.equal((await app.inject({ method: 'POST', url: '/dashboard/api/members/invitations', headers: admin.writes, payload: { email: 'o2@example.com', role: 'owner' } })).statusCode, 403, 'no owners by an admin');
  t.equal((await app.inject({ method: 'DELETE', url: `/dashboard/api/members/${ownerId}`, headers: admin.writes })).statusCode, 403, 'nor removing one');
  t.equal((await app.inject({ method: 'POST', url: '/dashboard/api/members/invitations', headers: admin.writes, payload: { email: 'owner@example.com', role: 'editor' } })).json().code, 'member_exists');
  const invited = await app.inject({ method: 'POST', url: '/dashboard/api/members/invitations', headers: admin.writes, payload: { email: 'e@example.com', role: 'editor' } });
  t.equal(invited.statusCode, 201);
  t.same((await app.inject({ method: 'GET', url: '/dashboard/api/members', headers: { cookie: admin.cookie } })).json().invitations.map((i: { email: string }) => i.email), ['e@example.com']);
  t.equal((await app.inject({ method: 'DELETE', url: '/dashboard/api/members/mem_nobody', headers: admin.writes })).json().code, 'member_not_found');
  t.equal((await app.inject({ method: 'POST', url: '/dashboard/api/keys', headers: admin.writes, payload: { name: 'by an admin' } })).statusCode, 201, 'admins make keys');

  const { signIn } = await import('../dashboard/support.js');
  const operator = await signIn(app, services, accountId);
  const session = (await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie: operator.cookie } })).json();
  t.same([session.member, session.role], [null, 'owner'], 'the admin CLI link signs in as the operator, with an owner\'s rights');
  t.equal((await app.inject({ method: 'POST', url: '/dashboard/api/members/leave', headers: operator.writes })).statusCode, 403);
});

t.test('sign-up: closed by default, open makes a Free account by email', async (t) => {
  const closed = await setUp(t);
  await closed.app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email: 'new@example.com' } });
  await closed.services.mail.catchUp();
  t.equal(closed.mailer.sent.length, 0, 'closed: no mail to a stranger');

  const { app, mailer, services } = await setUp(t, { SIGNUP: 'open' });
  t.equal((await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email: 'new@example.com' } })).statusCode, 202);
  const mail = await mailTo(mailer, 'new@example.com');
  const token = new URL(linkIn(mail.text, '/dashboard/sign-up')).searchParams.get('t')!;
  const page = await app.inject({ method: 'GET', url: `/dashboard/sign-up?t=${token}` });
  t.match(page.body, /A Free account for <strong>new@example.com<\/strong>/);
  const made = await app.inject({ method: 'POST', url: '/dashboard/sign-up', headers: { ...same, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams({ t: token, name: 'New Co' }).toString() });
  t.equal(made.statusCode, 303, made.body);
  const cookie = `fs_session=${made.cookies.find((c) => c.name === 'fs_session')!.value}`;
  const session = (await app.inject({ method: 'GET', url: '/dashboard/api/session', headers: { cookie } })).json();
  t.match(session, { account: { name: 'New Co', plan: 'free' }, member: { email: 'new@example.com' }, role: 'owner' });
  const again = await app.inject({ method: 'POST', url: '/dashboard/sign-up', headers: { ...same, 'content-type': 'application/x-www-form-urlencoded', accept: 'text/html' }, payload: new URLSearchParams({ t: token, name: 'Twice' }).toString() });
  t.equal(again.statusCode, 401, 'a sign-up link is used once');
  t.match(again.body, /cannot be used/);
  t.ok(services);
});

t.test('mail the SMTP server refuses is tried again, and sent once', async (t) => {
  const { app, mailer } = await setUp(t, {}, 3, true);
  await app.inject({ method: 'POST', url: '/dashboard/sign-in', headers: same, payload: { email: 'owner@example.com' } });
  await mailTo(mailer, 'owner@example.com');
  t.equal(mailer.attempts, 4, 'three refusals, then accepted');
  t.equal(mailer.sent.length, 1, 'sent once');
});
