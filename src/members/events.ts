/**
 * The stored shapes of membership, sign-in by email and sign-up, frozen (see
 * accounts/events.ts). `by` names who made a change: a member's id, `cli`
 * for the admin command line, or `operator` for a session opened with the
 * command line's login link. No event holds a link's token: links are
 * signed from the ids, expiries and accounts recorded here.
 */
import { z } from 'zod';
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';

const Role = z.enum(['owner', 'admin', 'editor', 'viewer']);

export const MemberJoined = defineEvent(
  'MemberJoined',
  z.object({
    account_id: z.string(),
    member_id: z.string(),
    email: z.string(),
    role: Role,
    /** How: the account's first owner, an open sign-up, an accepted invitation, or the admin command line. */
    via: z.enum(['account_opened', 'sign_up', 'invitation', 'cli']),
    /** The link whose use made the member (an invitation's id, a sign-up's), whose session signs in as them. */
    link_id: z.string().nullable(),
    by: z.string(),
    joined_at: z.string(),
  }),
);

export const MemberInvited = defineEvent(
  'MemberInvited',
  z.object({ account_id: z.string(), invitation_id: z.string(), email: z.string(), role: Role, by: z.string(), expires_at: z.string(), invited_at: z.string() }),
);

export const MemberRoleChanged = defineEvent(
  'MemberRoleChanged',
  z.object({ account_id: z.string(), member_id: z.string(), email: z.string(), from: Role, to: Role, by: z.string(), changed_at: z.string() }),
);

export const MemberRemoved = defineEvent(
  'MemberRemoved',
  z.object({ account_id: z.string(), member_id: z.string(), email: z.string(), reason: z.enum(['removed', 'left']), by: z.string(), removed_at: z.string() }),
);

/**
 * A request for sign-in links: one link per account the address is a member
 * of, and a sign-up link when sign-up is open and it is a member of none.
 * An address that gets neither is not recorded (`email` null), so the
 * history keeps no list of strangers' addresses.
 */
export const SignInRequested = defineEvent(
  'SignInRequested',
  z.object({
    request_id: z.string(),
    email: z.string().nullable(),
    links: z.array(z.object({ link_id: z.string(), account_id: z.string(), member_id: z.string(), expires_at: z.string() })),
    sign_up: z.object({ expires_at: z.string() }).nullable(),
    requested_at: z.string(),
  }),
);

export const memberEvents = [MemberJoined, MemberInvited, MemberRoleChanged, MemberRemoved, SignInRequested];

export type MemberEvent =
  | EventOf<typeof MemberJoined>
  | EventOf<typeof MemberInvited>
  | EventOf<typeof MemberRoleChanged>
  | EventOf<typeof MemberRemoved>
  | EventOf<typeof SignInRequested>;
