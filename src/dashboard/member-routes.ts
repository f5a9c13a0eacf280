import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { ACCOUNTS } from '../../projections/accounts.js';
import type { App } from '../http/instance.js';
import { execute, load } from '../kernel/aggregate.js';
import type { Context } from '../kernel/context.js';
import { AppError } from '../kernel/errors.js';
import { keyedHash } from '../infra/keys.js';
import {
  acceptInvitation,
  activity,
  changeRole,
  invite,
  leave,
  listInvitations,
  listMembers,
  openAccountWithOwner,
  readInvitation,
  readSignUp,
  removeMember,
  requestSignIn,
} from '../members/commands.js';
import { MEMBER_INVITATIONS } from '../../projections/members.js';
import { Email, Role } from '../members/roles.js';
import { checkOrigin, cookieOptions, findSession, requireSession, SESSION_COOKIE, sessionIdOf, sessionOf } from './auth.js';
import { escapeHtml, page, sendPage } from './pages.js';
import { linkUsed, session, SESSION_LIFETIME_MS } from './session.js';
import { takeForms } from './sign-in.js';

const wantsHtml = (request: FastifyRequest) => (request.headers.accept ?? '').includes('text/html');

/** Sign-in requests one address may make, and one client address, per rate window (a minute). */
export const SIGN_IN_RATES = { email: 3, address: 10 } as const;

function sentPage(email: string): string {
  return page(
    'Check your email',
    `<h1>Check your email</h1>
<p role="status">If <strong>${escapeHtml(email)}</strong> can sign in here, a sign-in link is on its way to it. The link works once, within 15 minutes.</p>
<p><a href="/dashboard">Use another address</a></p>`,
  );
}

/** A link that cannot be used, told to a browser as a page with the same status; a JSON client gets the error. */
async function orPage(request: FastifyRequest, reply: FastifyReply, run: () => Promise<FastifyReply | undefined>): Promise<FastifyReply | undefined> {
  try {
    return await run();
  } catch (error) {
    if (!(error instanceof AppError) || !wantsHtml(request) || !/^(login_link_|invitation_|member_exists|conflict)/.test(error.code)) throw error;
    sendPage(reply, error.statusCode, page('Cannot use this link', `<h1>This link cannot be used</h1>\n<p>${escapeHtml(error.message)}.</p>\n<p><a href="/dashboard">Sign in</a></p>`));
    return reply;
  }
}

/** Starts a session for the link's member, ending the browser's current one, and goes to the dashboard. */
async function signIn(services: Context, request: FastifyRequest, reply: FastifyReply, linkId: string, accountId: string): Promise<FastifyReply> {
  const at = services.clock();
  const secret = services.random(32).toString('base64url');
  const sessionId = sessionIdOf(services, secret);
  const current = await findSession(services, request);
  await execute(services.commands, session, linkId, { type: 'SignIn', session_id: sessionId, account_id: accountId, link_id: linkId, at: at.toISOString() }, { actor: sessionId, at, requestId: request.id });
  if (current) {
    await execute(services.commands, session, current.linkId, { type: 'SignOut', session_id: current.sessionId, reason: 'signed_out', at: at.toISOString() }, { actor: current.sessionId, at, requestId: request.id });
  }
  return reply.setCookie(SESSION_COOKIE, secret, { ...cookieOptions(services, request.protocol), maxAge: SESSION_LIFETIME_MS / 1000 }).code(303).redirect('/dashboard');
}

const TokenQuery = z.object({ t: z.string().max(500).optional() });
const TokenBody = z.object({ t: z.string().max(500) });
const SignInBody = z.object({ email: Email });
const InviteBody = z.strictObject({ email: Email, role: Role });
const RoleBody = z.strictObject({ role: Role });
const MemberParams = z.object({ member_id: z.string().max(100) });
const MemberView = z.object({ member_id: z.string(), email: z.string(), role: Role, joined_at: z.string() });
const InvitationView = z.object({ invitation_id: z.string(), email: z.string(), role: Role, expires_at: z.string(), invited_at: z.string() });
const ActivityItem = z.object({
  type: z.string(),
  email: z.string(),
  by: z.string(),
  by_email: z.string().nullable(),
  at: z.string(),
  role: z.string().optional(),
  from: z.string().optional(),
  to: z.string().optional(),
});

const actorOf = (request: FastifyRequest) => {
  const current = sessionOf(request);
  return { by: current.by, role: current.role };
};

/**
 * Sign-in by email, sign-up, invitations and the account's members. The
 * pages take url-encoded forms (no script); the JSON endpoints are the
 * dashboard's, each checking the member's role (see auth.ts).
 */
export async function memberRoutes(app: App, services: Context): Promise<void> {
  await app.register(async (plain) => {
    const scope = plain.withTypeProvider<ZodTypeProvider>();
    takeForms(scope);

    scope.post('/dashboard/sign-in', { schema: { hide: true, body: SignInBody } }, async (request, reply) => {
      checkOrigin(services, request);
      const { limits } = app;
      const window = services.rateWindowMs;
      await limits.take(request, reply, { key: `sign-in-address:${limits.client(request)}`, max: SIGN_IN_RATES.address, windowMs: window });
      await limits.take(request, reply, { key: `sign-in-email:${keyedHash(services.keys.sessions, request.body.email)}`, max: SIGN_IN_RATES.email, windowMs: window }, false);
      await requestSignIn(services, request.body.email, request.id);
      if (wantsHtml(request)) return sendPage(reply, 202, sentPage(request.body.email));
      return reply.code(202).send({ accepted: true });
    });

    scope.get('/dashboard/invitations/accept', { schema: { hide: true, querystring: TokenQuery } }, async (request, reply) => {
      await app.limits.take(request, reply, app.limits.address(request));
      return orPage(request, reply, async () => {
        const { invitationId, accountId } = readInvitation(services, request.query.t);
        const invitation = await services.readModels.get(MEMBER_INVITATIONS, invitationId);
        if (!invitation || invitation.account_id !== accountId) throw new AppError('invitation_invalid', 'This invitation is not valid: ask for a new one');
        if (invitation.accepted_at) throw new AppError('invitation_used', 'This invitation has been accepted already: sign in instead');
        const account = await services.readModels.get(ACCOUNTS, accountId);
        const name = escapeHtml(String(account?.name ?? accountId));
        return sendPage(
          reply,
          200,
          page(
            'Accept the invitation',
            `<h1>Join ${name}</h1>
<p><strong>${escapeHtml(String(invitation.email))}</strong> is invited to the account <strong>${name}</strong> as <strong>${escapeHtml(String(invitation.role))}</strong>.</p>
<form method="post" action="/dashboard/invitations/accept">
<input type="hidden" name="t" value="${escapeHtml(String(request.query.t))}">
<button type="submit">Accept and sign in</button>
</form>
<p>If you did not expect this invitation, close this page.</p>`,
            '<meta name="referrer" content="same-origin">\n',
          ),
        );
      });
    });

    scope.post('/dashboard/invitations/accept', { schema: { hide: true, body: TokenBody } }, async (request, reply) => {
      await app.limits.take(request, reply, app.limits.address(request));
      checkOrigin(services, request);
      return orPage(request, reply, async () => {
        const accepted = await acceptInvitation(services, request.body.t, request.id);
        return signIn(services, request, reply, accepted.linkId, accepted.accountId);
      });
    });

    scope.get('/dashboard/sign-up', { schema: { hide: true, querystring: TokenQuery } }, async (request, reply) => {
      await app.limits.take(request, reply, app.limits.address(request));
      return orPage(request, reply, async () => {
        const { email, requestId } = await readSignUp(services, request.query.t);
        if ((await load(services.commands, session, requestId)).status !== 'none') throw linkUsed();
        return sendPage(
          reply,
          200,
          page(
            'Create your account',
            `<h1>Create your account</h1>
<p>A Free account for <strong>${escapeHtml(email)}</strong>, its owner.</p>
<form method="post" action="/dashboard/sign-up">
<input type="hidden" name="t" value="${escapeHtml(String(request.query.t))}">
<label for="name">Account name</label>
<input id="name" name="name" required maxlength="200" value="${escapeHtml(email.split('@')[0]!)}">
<button type="submit">Create the account and sign in</button>
</form>`,
            '<meta name="referrer" content="same-origin">\n',
          ),
        );
      });
    });

    scope.post('/dashboard/sign-up', { schema: { hide: true, body: TokenBody.extend({ name: z.string().trim().min(1).max(200) }) } }, async (request, reply) => {
      await app.limits.take(request, reply, app.limits.address(request));
      checkOrigin(services, request);
      return orPage(request, reply, async () => {
        const { email, requestId } = await readSignUp(services, request.body.t);
        // Used once: the link's session stream is empty until the sign-up it makes signs in.
        if ((await load(services.commands, session, requestId)).status !== 'none') throw linkUsed();
        const opened = await openAccountWithOwner(services, { name: request.body.name, plan: 'free', ownerEmail: email, via: 'sign_up', linkId: requestId }, 'public');
        return signIn(services, request, reply, requestId, opened.account_id);
      });
    });
  });

  const viewer = requireSession(services, { role: 'viewer' });
  const admin = requireSession(services, { role: 'admin' });
  const hide = { hide: true };

  app.get('/dashboard/api/members', { onRequest: viewer, schema: { ...hide, response: { 200: z.object({ members: z.array(MemberView), invitations: z.array(InvitationView) }) } } }, async (request) => {
    const { accountId } = sessionOf(request);
    return { members: await listMembers(services, accountId), invitations: await listInvitations(services, accountId) };
  });

  app.post('/dashboard/api/members/invitations', { onRequest: admin, schema: { ...hide, body: InviteBody, response: { 201: InvitationView.omit({ invited_at: true }) } } }, async (request, reply) => {
    const invited = await invite(services, { accountId: sessionOf(request).accountId, email: request.body.email, role: request.body.role }, actorOf(request), request.id);
    return reply.code(201).send(invited);
  });

  app.put('/dashboard/api/members/:member_id', { onRequest: admin, schema: { ...hide, params: MemberParams, body: RoleBody, response: { 200: z.object({ member_id: z.string(), role: Role }) } } }, async (request) =>
    changeRole(services, { accountId: sessionOf(request).accountId, memberId: request.params.member_id, role: request.body.role }, actorOf(request), request.id),
  );

  app.delete('/dashboard/api/members/:member_id', { onRequest: admin, schema: { ...hide, params: MemberParams, response: { 200: z.object({ member_id: z.string(), removed: z.literal(true) }) } } }, async (request) =>
    removeMember(services, { accountId: sessionOf(request).accountId, memberId: request.params.member_id }, actorOf(request), request.id),
  );

  app.post('/dashboard/api/members/leave', { onRequest: viewer, schema: { ...hide, response: { 200: z.object({ member_id: z.string(), left: z.literal(true) }) } } }, async (request) => {
    const current = sessionOf(request);
    if (!current.member) throw new AppError('forbidden', 'This session is the operator\'s (a login link of the admin command line), not a member\'s: there is nothing to leave');
    return leave(services, { accountId: current.accountId, memberId: current.member.id }, request.id);
  });

  app.get('/dashboard/api/activity', { onRequest: viewer, schema: { ...hide, response: { 200: z.object({ activity: z.array(ActivityItem) }) } } }, async (request) => ({
    activity: await activity(services, sessionOf(request).accountId),
  }));
}
