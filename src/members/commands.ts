import { ACCOUNTS } from '../../projections/accounts.js';
import { MEMBER_ACTIVITY, MEMBER_INVITATIONS, MEMBERS } from '../../projections/members.js';
import { openAccount } from '../accounts/commands.js';
import { DEFAULT_SCOPES, type Scope } from '../accounts/plans.js';
import { LINK_TTL_MS } from '../dashboard/login-link.js';
import { execute, load, type Aggregate } from '../kernel/aggregate.js';
import type { Context } from '../kernel/context.js';
import { AppError } from '../kernel/errors.js';
import type { MemberEvent } from './events.js';
import { members, type Actor } from './members.js';
import type { Role } from './roles.js';
import { readToken } from './tokens.js';

type Deps = Pick<Context, 'commands' | 'readModels' | 'clock' | 'ids' | 'random' | 'keyUsage' | 'config' | 'keys'>;

/** How long an invitation can be accepted. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** The operator of the service (the admin command line, its login link's sessions): every right. */
export const operator = (by: 'cli' | 'operator'): Actor => ({ by, role: 'owner' });

async function openAccountOf(deps: Deps, accountId: string): Promise<void> {
  if (!(await deps.readModels.get(ACCOUNTS, accountId))) throw new AppError('account_not_found', 'no such account');
}

const meta = (deps: Deps, actor: string, requestId?: string) => ({ actor, at: deps.clock(), ...(requestId ? { requestId } : {}) });

/** Adds an address as a member with a role at once (the admin command line; an account's first owner). */
export async function addMember(deps: Deps, input: { accountId: string; email: string; role: Role; via?: 'account_opened' | 'sign_up' | 'cli'; linkId?: string | null }, actor: Actor = operator('cli')) {
  await openAccountOf(deps, input.accountId);
  const memberId = deps.ids('mem');
  const m = meta(deps, actor.by);
  await execute(deps.commands, members, input.accountId, {
    type: 'AddMember',
    account_id: input.accountId,
    member_id: memberId,
    email: input.email,
    role: input.role,
    via: input.via ?? 'cli',
    link_id: input.linkId ?? null,
    actor,
    at: m.at.toISOString(),
  }, m);
  return { member_id: memberId, account_id: input.accountId, email: input.email, role: input.role };
}

/** An account with its first key and its owner: the admin command line's `create-account --owner-email`, and an open sign-up. */
export async function openAccountWithOwner(
  deps: Deps,
  input: { name: string; plan: 'free' | 'pro' | 'business'; ownerEmail: string; via: 'account_opened' | 'sign_up'; linkId?: string; scopes?: Scope[] },
  actor = 'cli',
) {
  const owner = { member_id: deps.ids('mem'), email: input.ownerEmail, via: input.via, link_id: input.linkId ?? null };
  // One event, one append: an account is never left without the owner it was opened for.
  const opened = await openAccount(deps, { name: input.name, plan: input.plan, scopes: input.scopes ?? DEFAULT_SCOPES, owner }, actor);
  return { ...opened, owner: { member_id: owner.member_id, account_id: opened.account_id, email: owner.email, role: 'owner' as const } };
}

export async function invite(deps: Deps, input: { accountId: string; email: string; role: Role }, actor: Actor, requestId?: string) {
  await openAccountOf(deps, input.accountId);
  const invitationId = deps.ids('inv');
  const m = meta(deps, actor.by, requestId);
  const expiresAt = new Date(m.at.getTime() + INVITATION_TTL_MS).toISOString();
  await execute(deps.commands, members, input.accountId, { type: 'Invite', account_id: input.accountId, invitation_id: invitationId, email: input.email, role: input.role, expires_at: expiresAt, actor, at: m.at.toISOString() }, m);
  return { invitation_id: invitationId, email: input.email, role: input.role, expires_at: expiresAt };
}

/** An invitation's link, checked: the invitation and its account. */
export function readInvitation(deps: Pick<Deps, 'keys' | 'clock'>, token: unknown): { invitationId: string; accountId: string } {
  const [invitationId, accountId] = readToken(deps.keys.loginLinks, 'invitation', 2, token, deps.clock()) as [string, string];
  return { invitationId, accountId };
}

export async function acceptInvitation(deps: Deps, token: unknown, requestId?: string) {
  const { invitationId, accountId } = readInvitation(deps, token);
  const memberId = deps.ids('mem');
  const m = meta(deps, memberId, requestId);
  await execute(deps.commands, members, accountId, { type: 'AcceptInvitation', invitation_id: invitationId, member_id: memberId, at: m.at.toISOString() }, m);
  return { accountId, memberId, linkId: invitationId };
}

export async function changeRole(deps: Deps, input: { accountId: string; memberId: string; role: Role }, actor: Actor, requestId?: string) {
  const m = meta(deps, actor.by, requestId);
  await execute(deps.commands, members, input.accountId, { type: 'ChangeRole', member_id: input.memberId, role: input.role, actor, at: m.at.toISOString() }, m);
  return { member_id: input.memberId, role: input.role };
}

export async function removeMember(deps: Deps, input: { accountId: string; memberId: string }, actor: Actor, requestId?: string) {
  const m = meta(deps, actor.by, requestId);
  await execute(deps.commands, members, input.accountId, { type: 'RemoveMember', member_id: input.memberId, actor, at: m.at.toISOString() }, m);
  return { member_id: input.memberId, removed: true as const };
}

export async function leave(deps: Deps, input: { accountId: string; memberId: string }, requestId?: string) {
  const m = meta(deps, input.memberId, requestId);
  await execute(deps.commands, members, input.accountId, { type: 'Leave', member_id: input.memberId, at: m.at.toISOString() }, m);
  return { member_id: input.memberId, left: true as const };
}

export interface MemberView {
  member_id: string;
  email: string;
  role: Role;
  joined_at: string;
}

export async function listMembers(deps: Pick<Deps, 'readModels'>, accountId: string): Promise<MemberView[]> {
  const docs = await deps.readModels.find(MEMBERS, { account_id: accountId }, { sort: [['joined_at', 1], ['id', 1]] });
  return docs.map((doc) => ({ member_id: String(doc.id), email: String(doc.email), role: doc.role as Role, joined_at: String(doc.joined_at) }));
}

export async function listInvitations(deps: Pick<Deps, 'readModels' | 'clock'>, accountId: string) {
  const now = deps.clock().toISOString();
  const docs = await deps.readModels.find(MEMBER_INVITATIONS, { account_id: accountId }, { sort: [['invited_at', -1], ['id', -1]], limit: 100 });
  return docs
    .filter((doc) => doc.accepted_at === null && String(doc.expires_at) > now)
    .map((doc) => ({ invitation_id: String(doc.id), email: String(doc.email), role: doc.role as Role, expires_at: String(doc.expires_at), invited_at: String(doc.invited_at) }));
}

/** The account's membership changes, newest first, each naming who made it (by address when a member did). */
export async function activity(deps: Pick<Deps, 'readModels'>, accountId: string, limit = 100) {
  const docs = await deps.readModels.find(MEMBER_ACTIVITY, { account_id: accountId }, { sort: [['seq', -1]], limit });
  const names = new Map<string, string>();
  for (const doc of docs) {
    const by = String(doc.by);
    if (!by.startsWith('mem_') || names.has(by)) continue;
    const member = await deps.readModels.get(MEMBERS, by);
    // A member who has left since is named by the address the history recorded for them.
    const [left] = member ? [] : await deps.readModels.find(MEMBER_ACTIVITY, { member_id: by }, { limit: 1 });
    names.set(by, String(member?.email ?? left?.email ?? by));
  }
  return docs.map((doc) => ({
    type: String(doc.type),
    email: String(doc.email),
    by: String(doc.by),
    by_email: names.get(String(doc.by)) ?? null,
    at: String(doc.at),
    ...(doc.role !== undefined ? { role: String(doc.role) } : {}),
    ...(doc.from !== undefined ? { from: String(doc.from), to: String(doc.to) } : {}),
  }));
}

type SignInState = { status: 'none' } | { status: 'requested'; email: string | null; sign_up: boolean };
type SignInCommand = { type: 'RequestSignIn'; event: Extract<MemberEvent, { type: 'SignInRequested' }>['data'] };

/** A request for sign-in links: its own stream, which a sign-up link reads its address back from. */
export const signInRequest: Aggregate<SignInState, MemberEvent, SignInCommand> = {
  streamId: (id) => `sign-in-${id}`,
  initial: () => ({ status: 'none' }),
  evolve: (state, event) => (event.type === 'SignInRequested' ? { status: 'requested', email: event.data.email, sign_up: event.data.sign_up !== null } : state),
  decide(command, state) {
    if (state.status !== 'none') throw new AppError('conflict', 'this sign-in request exists already');
    return [{ type: 'SignInRequested', data: command.event }];
  },
};

/**
 * Records a request for sign-in links, which the mail outbox sends: a link
 * per account the address is a member of, or, when it is a member of none
 * and sign-up is open, a link that creates a Free account. The same work is
 * done, and one event appended, whatever the address, so the reply says
 * nothing of it, in its content or its time.
 */
export async function requestSignIn(deps: Deps, email: string, requestId?: string): Promise<void> {
  const at = deps.clock();
  const expiresAt = new Date(at.getTime() + LINK_TTL_MS).toISOString();
  const memberships = await deps.readModels.find(MEMBERS, { email }, { sort: [['joined_at', 1], ['id', 1]], limit: 20 });
  const links = memberships.map((doc) => ({ link_id: deps.ids('lnk'), account_id: String(doc.account_id), member_id: String(doc.id), expires_at: expiresAt }));
  const signUp = links.length === 0 && deps.config.SIGNUP === 'open' ? { expires_at: expiresAt } : null;
  const id = deps.ids('sgn');
  const known = links.length > 0 || signUp !== null;
  await execute(
    deps.commands,
    signInRequest,
    id,
    { type: 'RequestSignIn', event: { request_id: id, email: known ? email : null, links, sign_up: signUp, requested_at: at.toISOString() } },
    { actor: 'public', at, ...(requestId ? { requestId } : {}) },
  );
}

/** A sign-up link's request, checked: its address (a member of no account when it was asked for). */
export async function readSignUp(deps: Pick<Deps, 'keys' | 'clock' | 'commands'>, token: unknown): Promise<{ requestId: string; email: string }> {
  const [requestId] = readToken(deps.keys.loginLinks, 'sign-up', 1, token, deps.clock()) as [string];
  const state = await load(deps.commands, signInRequest, requestId);
  if (state.status !== 'requested' || !state.sign_up || state.email === null) throw new AppError('login_link_invalid', 'This sign-up link is not valid: ask for a new one');
  return { requestId, email: state.email };
}
