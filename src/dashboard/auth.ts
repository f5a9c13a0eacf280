import { createHmac, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest, preHandlerAsyncHookHandler } from 'fastify';
import { ACCOUNTS } from '../../projections/accounts.js';
import { DASHBOARD_SESSIONS } from '../../projections/dashboard-sessions.js';
import { MEMBER_LINKS, MEMBERS } from '../../projections/members.js';
import { Role, requireRole } from '../members/roles.js';
import { execute } from '../kernel/aggregate.js';
import { Plan } from '../accounts/plans.js';
import { AppError } from '../kernel/errors.js';
import { keyedHash } from '../infra/keys.js';
import type { Context } from '../kernel/context.js';
import { SessionActivity } from './activity.js';
import { session, sessionEndsAt } from './session.js';

export const SESSION_COOKIE = 'fs_session';
/** Where a browser without a session is sent from a dashboard page. */
export const SIGNED_OUT_PAGE = '/dashboard/signed-out';

/** A signed-in member, as the dashboard's routes see them. */
export interface DashboardSession {
  sessionId: string;
  accountId: string;
  linkId: string;
  account: { id: string; name: string; plan: Plan };
  /**
   * The member signed in, or null for a session of the admin command line's
   * login link, which acts as the service's operator with the owner's rights.
   */
  member: { id: string; email: string } | null;
  role: Role;
  /** Who the session's changes are recorded as made by: the member's id, or `operator`. */
  by: string;
  signedInAt: Date;
  /** When the session ends unless used again before (idle expiry or its lifetime). */
  endsAt: Date;
  csrfToken: string;
}

declare module 'fastify' {
  interface FastifyRequest {
    dashboardSession?: DashboardSession;
  }
}

export type SessionServices = Pick<Context, 'readModels' | 'keys' | 'clock' | 'config' | 'commands' | 'readOnly'>;

const SECRET = /^[A-Za-z0-9_-]{43}$/;
const STATE_CHANGING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** A session's id: the keyed hash of its cookie's secret, so neither events nor read models hold the secret. */
export const sessionIdOf = (services: Pick<Context, 'keys'>, secret: string): string => `ses_${keyedHash(services.keys.sessions, secret)}`;

export const csrfTokenOf = (services: Pick<Context, 'keys'>, sessionId: string): string => createHmac('sha256', services.keys.csrf).update(sessionId).digest('base64url');

export const idleMs = (services: Pick<Context, 'config'>): number => services.config.DASHBOARD_IDLE_MINUTES * 60_000;

/** The cookie's secret as sent (dashboardRoutes registers the cookie plugin for every route that asks). */
function presentedSecret(request: FastifyRequest): string | undefined {
  const value = request.cookies?.[SESSION_COOKIE];
  return value && SECRET.test(value) ? value : undefined;
}

const sessionRequired = () => new AppError('session_required', 'Sign in to the dashboard: ask for a new login link');

/** Ends a session that ran out, on the first request that finds it so; another instance doing the same changes nothing. */
async function expire(services: SessionServices, sessionId: string, linkId: string, request: FastifyRequest): Promise<void> {
  const at = services.clock();
  await execute(services.commands, session, linkId, { type: 'SignOut', session_id: sessionId, reason: 'expired', at: at.toISOString() }, { actor: sessionId, at, requestId: request.id }).catch(
    (error: unknown) => request.log.warn({ err: error }, 'could not record the end of an expired dashboard session'),
  );
}

/** The live session a request's cookie names, or null; records the request as the session's activity. */
export async function findSession(services: SessionServices, request: FastifyRequest): Promise<DashboardSession | null> {
  // A point-in-time copy has no dashboard sessions: signing in is a command, and a cookie of the live service would be judged at a moment that never passes.
  if (services.readOnly) return null;
  const secret = presentedSecret(request);
  if (!secret) return null;
  const sessionId = sessionIdOf(services, secret);
  const doc = await services.readModels.get(DASHBOARD_SESSIONS, sessionId);
  if (!doc || doc.signed_out_at) return null;
  const activity = new SessionActivity(services.readModels, services.clock);
  const signedInAt = new Date(String(doc.signed_in_at));
  const lastActive = (await activity.lastActive(sessionId)) ?? signedInAt;
  const now = services.clock();
  if (now.getTime() >= sessionEndsAt(signedInAt, lastActive, idleMs(services)).getTime()) {
    await expire(services, sessionId, String(doc.link_id), request);
    return null;
  }
  const account = await services.readModels.get(ACCOUNTS, String(doc.account_id));
  if (!account) return null;
  // A member's session lasts while they are a member, with the role they have now: a removed member is signed out at their next request.
  const link = await services.readModels.get(MEMBER_LINKS, String(doc.link_id));
  const member = link ? await services.readModels.get(MEMBERS, String(link.member_id)) : null;
  if (link && (!member || member.account_id !== doc.account_id)) return null;
  const recorded = await activity.touch(sessionId, lastActive);
  return {
    sessionId,
    accountId: String(doc.account_id),
    linkId: String(doc.link_id),
    account: { id: String(account.id), name: String(account.name), plan: Plan.catch('free').parse(account.plan) },
    member: member ? { id: String(member.id), email: String(member.email) } : null,
    role: member ? Role.catch('viewer').parse(member.role) : 'owner',
    by: member ? String(member.id) : 'operator',
    signedInAt,
    // As every instance will judge it: from the activity on record, which may be up to a minute old.
    endsAt: sessionEndsAt(signedInAt, recorded, idleMs(services)),
    csrfToken: csrfTokenOf(services, sessionId),
  };
}

/** The origins a state-changing request may come from: the public base URL's, and the one the request was addressed to. */
function ownOrigins(services: Pick<Context, 'config'>, request: FastifyRequest): string[] {
  const base = services.config.PUBLIC_BASE_URL;
  return [...(base ? [new URL(base).origin] : []), `${request.protocol}://${request.host}`];
}

/**
 * 403 `csrf_rejected` for a request that a browser says came from another
 * site: a foreign `Origin`, or `Sec-Fetch-Site` other than same-origin (or
 * none: typed, bookmarked). Requests without either (tools, old browsers)
 * pass here; the CSRF token stops them where a session is needed.
 */
export function checkOrigin(services: Pick<Context, 'config'>, request: FastifyRequest): void {
  const site = request.headers['sec-fetch-site'];
  if (site !== undefined && site !== 'same-origin' && site !== 'none') {
    throw new AppError('csrf_rejected', 'This request came from another site and is refused');
  }
  const origin = request.headers.origin;
  if (origin !== undefined && !ownOrigins(services, request).includes(origin)) {
    throw new AppError('csrf_rejected', 'This request came from another site and is refused');
  }
}

function checkCsrfToken(request: FastifyRequest, expected: string): void {
  const sent = request.headers['x-csrf-token'];
  // Lengths compared in bytes: a header's latin-1 characters take two in UTF-8, and unequal buffers make timingSafeEqual throw.
  const given = typeof sent === 'string' ? Buffer.from(sent) : null;
  const wanted = Buffer.from(expected);
  const ok = given !== null && given.length === wanted.length && timingSafeEqual(given, wanted);
  if (!ok) throw new AppError('csrf_rejected', 'The request lacks the dashboard\'s CSRF token (header x-csrf-token)');
}

/** Whether the cookie may only travel over HTTPS: when this request came over it, or the service is published on it. */
const secureCookie = (services: Pick<Context, 'config'>, protocol: string) => protocol === 'https' || services.config.PUBLIC_BASE_URL?.startsWith('https:') === true;

export const cookieOptions = (services: Pick<Context, 'config'>, protocol: string) => ({
  httpOnly: true,
  sameSite: 'strict' as const,
  path: '/dashboard',
  secure: secureCookie(services, protocol),
});

/**
 * The preHandler of every dashboard route but sign-in: a state-changing
 * request from another site is refused (403 `csrf_rejected`) first; then a
 * request without a live session gets 401 `session_required` (JSON routes)
 * or a 303 to the signed-out page (`page: true`); then a JSON request is
 * counted against its session's and its account's rates (429
 * `rate_limited`), one without a session against its address's; then a
 * state-changing request without the session's CSRF token is refused;
 * last, a member whose role is below the route's gets 403 `forbidden`
 * (reading needs a viewer, changing an editor, unless `role` says).
 */
export function requireSession(services: SessionServices, options: { page?: boolean; role?: Role } = {}): preHandlerAsyncHookHandler {
  return async (request: FastifyRequest, reply: FastifyReply) => {
    const changes = STATE_CHANGING.has(request.method);
    const { limits } = request.server;
    if (changes) checkOrigin(services, request);
    const found = await findSession(services, request);
    if (!found) {
      if (options.page) {
        // A cookie that names no live session is of no more use: the browser may forget it.
        if (request.cookies[SESSION_COOKIE] !== undefined) reply.clearCookie(SESSION_COOKIE, cookieOptions(services, request.protocol));
        return reply.code(303).redirect(SIGNED_OUT_PAGE);
      }
      // Cookies that name no session count against the address, so guessing them is throttled too.
      await limits.take(request, reply, limits.address(request));
      throw sessionRequired();
    }
    if (!options.page) {
      // One session, or many sessions of one account, cannot take more than their share of the service.
      await limits.take(request, reply, limits.dashboardSession(found.sessionId));
      await limits.take(request, reply, limits.dashboardAccount(found.accountId), false);
    }
    if (changes) checkCsrfToken(request, found.csrfToken);
    // Every route checks the member's role here: reading needs a viewer, changing an editor, unless the route asks for more (or less).
    requireRole(found.role, options.role ?? (changes ? 'editor' : 'viewer'));
    request.dashboardSession = found;
  };
}

/** The session of a dashboard request (requireSession ran before the handler). */
export function sessionOf(request: FastifyRequest): DashboardSession {
  if (!request.dashboardSession) throw new Error('route is missing requireSession');
  return request.dashboardSession;
}
