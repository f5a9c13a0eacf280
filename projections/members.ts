import type { DomainEvent } from '../src/domain-events.js';
import type { Projection } from '../src/kernel/feed/projection.js';

export const MEMBERS = 'members';
export const MEMBER_INVITATIONS = 'member_invitations';
/** Which member a sign-in link (or an accepted invitation, a completed sign-up) signs in as. */
export const MEMBER_LINKS = 'member_links';
/** Every membership change of an account, newest first by position: the account's activity. */
export const MEMBER_ACTIVITY = 'member_activity';

const pad = (position: bigint) => position.toString().padStart(20, '0');

export const membersProjection: Projection<DomainEvent> = {
  name: 'members',
  version: 1,
  collections: [
    { name: MEMBERS, indexes: [['account_id', 'joined_at'], ['email']] },
    { name: MEMBER_INVITATIONS, indexes: [['account_id', 'invited_at']] },
    { name: MEMBER_LINKS, indexes: [] },
    { name: MEMBER_ACTIVITY, indexes: [['account_id', 'seq'], ['member_id']] },
  ],
  project(event) {
    const activity = (account_id: string, what: string, member: { id: string | null; email: string }, by: string, at: string, detail: Record<string, unknown> = {}) => ({
      op: 'put' as const,
      collection: MEMBER_ACTIVITY,
      doc: { id: `${account_id}:${pad(event.position)}`, account_id, seq: pad(event.position), type: what, member_id: member.id, email: member.email, by, at, ...detail },
    });
    const joined = ({ account_id, member_id, email, role, via, link_id, by, joined_at }: { account_id: string; member_id: string; email: string; role: string; via: string; link_id: string | null; by: string; joined_at: string }) => [
      { op: 'put' as const, collection: MEMBERS, doc: { id: member_id, account_id, email, role, joined_at, via } },
      ...(link_id ? [{ op: 'put' as const, collection: MEMBER_LINKS, doc: { id: link_id, account_id, member_id } }] : []),
      ...(via === 'invitation' && link_id ? [{ op: 'patch' as const, collection: MEMBER_INVITATIONS, where: { id: link_id }, set: { accepted_at: joined_at } }] : []),
      activity(account_id, 'member.joined', { id: member_id, email }, by, joined_at, { role, via }),
    ];
    switch (event.type) {
      // An account opened with its first owner (version 2 on): the owner joined then.
      case 'AccountOpened': {
        const { account_id, owner, opened_at } = event.data;
        return owner ? joined({ account_id, ...owner, role: 'owner', joined_at: opened_at }) : [];
      }
      case 'MemberJoined':
        return joined(event.data);
      case 'MemberInvited': {
        const { account_id, invitation_id, email, role, by, expires_at, invited_at } = event.data;
        return [
          { op: 'put', collection: MEMBER_INVITATIONS, doc: { id: invitation_id, account_id, email, role, by, expires_at, invited_at, accepted_at: null } },
          activity(account_id, 'member.invited', { id: null, email }, by, invited_at, { role }),
        ];
      }
      case 'MemberRoleChanged': {
        const { account_id, member_id, email, from, to, by, changed_at } = event.data;
        return [{ op: 'patch', collection: MEMBERS, where: { id: member_id }, set: { role: to } }, activity(account_id, 'member.role_changed', { id: member_id, email }, by, changed_at, { from, to })];
      }
      case 'MemberRemoved': {
        const { account_id, member_id, email, reason, by, removed_at } = event.data;
        return [{ op: 'delete', collection: MEMBERS, where: { id: member_id } }, activity(account_id, reason === 'left' ? 'member.left' : 'member.removed', { id: member_id, email }, by, removed_at)];
      }
      case 'SignInRequested':
        return event.data.links.map(({ link_id, account_id, member_id }) => ({ op: 'put' as const, collection: MEMBER_LINKS, doc: { id: link_id, account_id, member_id } }));
      default:
        return [];
    }
  },
};
