import { z } from 'zod';
import { defineEvent, type EventOf } from '../event-catalog.js';

export const Plan = z.enum(['free', 'pro', 'business']);
export type Plan = z.infer<typeof Plan>;

/** D1: the spec's read scopes, and the write scopes it announces. */
export const Scope = z.enum(['forms:read', 'forms:write', 'responses:read', 'responses:write']);
export type Scope = z.infer<typeof Scope>;
export const DEFAULT_SCOPES: Scope[] = ['forms:read', 'responses:read'];

export const AccountOpened = defineEvent(
  'AccountOpened',
  z.object({ account_id: z.string(), name: z.string(), plan: Plan, opened_at: z.string() }),
);

export const AccountPlanChanged = defineEvent(
  'AccountPlanChanged',
  z.object({ account_id: z.string(), from: Plan, to: Plan, changed_at: z.string() }),
);

/** Only the key's hash and its display prefix are recorded: the key itself is shown once and never stored. */
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
