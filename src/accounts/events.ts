/**
 * The stored shapes of the account events, frozen: history is written in
 * them and must stay readable by every later version of the service. A change
 * is a new version of the event with an upcaster from the one before (and a
 * fixture of it in test/fixtures/events), never an edit of a shape here. They
 * state fields and types, not the API's limits, and import nothing from the
 * API's schemas: tightening a limit there must not make history unreadable.
 */
import { z } from 'zod';
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';

const Plan = z.enum(['free', 'pro', 'business']);
/** Version 2 of ApiKeyIssued adds the webhook scopes; version 1 holds the first four only, and reads unchanged. */
const Scope = z.enum(['forms:read', 'forms:write', 'responses:read', 'responses:write', 'webhooks:read', 'webhooks:write']);

/**
 * Version 2 may record the account's first owner with it (absent when it
 * was opened without one), so an account never stands without the owner it
 * was opened for; version 1 has no owner, which reads unchanged: an owner
 * then joined in a `MemberJoined` after it.
 */
export const AccountOpened = defineEvent(
  'AccountOpened',
  z.object({
    account_id: z.string(),
    name: z.string(),
    plan: Plan,
    opened_at: z.string(),
    owner: z
      .object({
        member_id: z.string(),
        email: z.string(),
        /** The admin command line's opening, or an open sign-up. */
        via: z.enum(['account_opened', 'sign_up']),
        /** The sign-up whose link made the owner, whose session signs in as them. */
        link_id: z.string().nullable(),
        by: z.string(),
      })
      .optional(),
  }),
  { version: 2, upcasters: { 1: (data) => data } },
);

export const AccountPlanChanged = defineEvent(
  'AccountPlanChanged',
  z.object({ account_id: z.string(), from: Plan, to: Plan, changed_at: z.string() }),
);

/**
 * Only the key's hash and its display prefix are recorded: the key itself is
 * shown once and never stored, which the hash's format holds to on append.
 */
export const ApiKeyIssued = defineEvent(
  'ApiKeyIssued',
  z.object({
    account_id: z.string(),
    key_id: z.string(),
    name: z.string(),
    key_hash: z.string().regex(/^[0-9a-f]{64}$/),
    prefix: z.string(),
    scopes: z.array(Scope),
    issued_at: z.string(),
  }),
  { version: 2, upcasters: { 1: (data) => data } },
);

export const ApiKeyRevoked = defineEvent(
  'ApiKeyRevoked',
  z.object({ account_id: z.string(), key_id: z.string(), revoked_at: z.string() }),
);

export const accountEvents = [AccountOpened, AccountPlanChanged, ApiKeyIssued, ApiKeyRevoked];

export type AccountEvent =
  | EventOf<typeof AccountOpened>
  | EventOf<typeof AccountPlanChanged>
  | EventOf<typeof ApiKeyIssued>
  | EventOf<typeof ApiKeyRevoked>;
