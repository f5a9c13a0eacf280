import type { Aggregate } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import { account } from '../accounts/account.js';
import type { AccountEvent } from '../accounts/events.js';
import type { MemberEvent } from './events.js';
import { atLeast, requireRole, type Role } from './roles.js';

/** Who asks for a change: a member of the account, or the service's operator (admin CLI, its login link), who may do anything. */
export interface Actor {
  by: string;
  role: Role;
}

export type MembersCommand =
  | { type: 'AddMember'; account_id: string; member_id: string; email: string; role: Role; via: 'account_opened' | 'sign_up' | 'cli'; link_id: string | null; actor: Actor; at: string }
  | { type: 'Invite'; account_id: string; invitation_id: string; email: string; role: Role; expires_at: string; actor: Actor; at: string }
  | { type: 'AcceptInvitation'; invitation_id: string; member_id: string; at: string }
  | { type: 'ChangeRole'; member_id: string; role: Role; actor: Actor; at: string }
  | { type: 'RemoveMember'; member_id: string; actor: Actor; at: string }
  | { type: 'Leave'; member_id: string; at: string };

interface Member {
  email: string;
  role: Role;
}
interface Invitation {
  email: string;
  role: Role;
  expires_at: string;
  accepted: boolean;
}

export interface MembersState {
  account_id: string | undefined;
  members: Map<string, Member>;
  invitations: Map<string, Invitation>;
}

export function evolve(state: MembersState, event: MemberEvent | AccountEvent): MembersState {
  switch (event.type) {
    case 'AccountOpened': {
      // The first owner, recorded with the account's opening (version 2 on).
      const { owner, account_id } = event.data;
      if (!owner) return state;
      return { ...state, account_id, members: new Map(state.members).set(owner.member_id, { email: owner.email, role: 'owner' }) };
    }
    case 'MemberJoined': {
      const members = new Map(state.members).set(event.data.member_id, { email: event.data.email, role: event.data.role });
      const invitations = new Map(state.invitations);
      const invitation = event.data.link_id ? invitations.get(event.data.link_id) : undefined;
      if (invitation) invitations.set(event.data.link_id!, { ...invitation, accepted: true });
      return { account_id: event.data.account_id, members, invitations };
    }
    case 'MemberInvited': {
      const { email, role, expires_at } = event.data;
      return { ...state, account_id: event.data.account_id, invitations: new Map(state.invitations).set(event.data.invitation_id, { email, role, expires_at, accepted: false }) };
    }
    case 'MemberRoleChanged': {
      const member = state.members.get(event.data.member_id);
      return member ? { ...state, members: new Map(state.members).set(event.data.member_id, { ...member, role: event.data.to }) } : state;
    }
    case 'MemberRemoved': {
      const members = new Map(state.members);
      members.delete(event.data.member_id);
      return { ...state, members };
    }
    default:
      return state;
  }
}

const memberNotFound = () => new AppError('member_not_found', 'no such member in this account');
const owners = (state: MembersState) => [...state.members.values()].filter((m) => m.role === 'owner').length;
const lastOwner = () => new AppError('last_owner', 'An account keeps at least one owner: make another member owner first');
const emailTaken = (state: MembersState, email: string) => [...state.members.values()].some((m) => m.email === email);

/** Only an owner grants, takes away or touches the owner role; an admin manages every other role. */
function checkManage(actor: Actor, from: Role | undefined, to: Role | undefined): void {
  requireRole(actor.role, 'admin');
  if ((from === 'owner' || to === 'owner') && actor.role !== 'owner') requireRole(actor.role, 'owner');
}

export function decide(command: MembersCommand, state: MembersState): MemberEvent[] {
  switch (command.type) {
    case 'AddMember': {
      const { account_id, member_id, email, role, via, link_id, actor, at } = command;
      if (via !== 'account_opened' && via !== 'sign_up') checkManage(actor, undefined, role);
      if (emailTaken(state, email)) throw new AppError('member_exists', `${email} is a member of this account already`);
      return [{ type: 'MemberJoined', data: { account_id, member_id, email, role, via, link_id, by: actor.by, joined_at: at } }];
    }
    case 'Invite': {
      const { account_id, invitation_id, email, role, expires_at, actor, at } = command;
      checkManage(actor, undefined, role);
      if (emailTaken(state, email)) throw new AppError('member_exists', `${email} is a member of this account already`);
      return [{ type: 'MemberInvited', data: { account_id, invitation_id, email, role, by: actor.by, expires_at, invited_at: at } }];
    }
    case 'AcceptInvitation': {
      const invitation = state.invitations.get(command.invitation_id);
      if (!invitation || !state.account_id) throw new AppError('invitation_invalid', 'This invitation is not valid: ask for a new one');
      if (invitation.accepted) throw new AppError('invitation_used', 'This invitation has been accepted already: sign in instead');
      if (Date.parse(invitation.expires_at) <= Date.parse(command.at)) throw new AppError('invitation_expired', 'This invitation has expired: ask for a new one');
      if (emailTaken(state, invitation.email)) throw new AppError('member_exists', `${invitation.email} is a member of this account already: sign in instead`);
      const { email, role } = invitation;
      return [
        { type: 'MemberJoined', data: { account_id: state.account_id, member_id: command.member_id, email, role, via: 'invitation', link_id: command.invitation_id, by: command.member_id, joined_at: command.at } },
      ];
    }
    case 'ChangeRole': {
      const member = state.members.get(command.member_id);
      if (!member || !state.account_id) throw memberNotFound();
      checkManage(command.actor, member.role, command.role);
      if (member.role === command.role) return [];
      if (member.role === 'owner' && owners(state) === 1) throw lastOwner();
      return [
        { type: 'MemberRoleChanged', data: { account_id: state.account_id, member_id: command.member_id, email: member.email, from: member.role, to: command.role, by: command.actor.by, changed_at: command.at } },
      ];
    }
    case 'RemoveMember':
    case 'Leave': {
      const member = state.members.get(command.member_id);
      if (!member || !state.account_id) throw memberNotFound();
      const by = command.type === 'Leave' ? command.member_id : command.actor.by;
      if (command.type === 'RemoveMember' && command.actor.by !== command.member_id) checkManage(command.actor, member.role, undefined);
      if (member.role === 'owner' && owners(state) === 1) throw lastOwner();
      const reason = command.type === 'Leave' || command.actor.by === command.member_id ? 'left' : 'removed';
      return [{ type: 'MemberRemoved', data: { account_id: state.account_id, member_id: command.member_id, email: member.email, reason, by, removed_at: command.at } }];
    }
  }
}

export const members: Aggregate<MembersState, MemberEvent | AccountEvent, MembersCommand> = {
  streamId: (accountId) => `members-${accountId}`,
  startsFrom: (accountId) => account.streamId(accountId),
  initial: () => ({ account_id: undefined, members: new Map(), invitations: new Map() }),
  evolve,
  decide,
};

export { atLeast };
