import { z } from 'zod';
import { ACCOUNTS } from '../../projections/accounts.js';
import type { Context } from '../kernel/context.js';

export const Plan = z.enum(['free', 'pro', 'business']);
export type Plan = z.infer<typeof Plan>;

/** D1: the spec's read scopes, and the write scopes it announces. */
export const Scope = z.enum(['forms:read', 'forms:write', 'responses:read', 'responses:write', 'webhooks:read', 'webhooks:write']);
export type Scope = z.infer<typeof Scope>;
export const DEFAULT_SCOPES: Scope[] = ['forms:read', 'responses:read'];

/** Built once: every public request reads its owner's plan through it. */
const StoredPlan = Plan.catch('free');

/** The plan of an object's owner now (D4, D10: rates and metadata follow it), as a public request reads it (RecentDocs). */
export async function ownerPlan(services: Context, accountId: string): Promise<Plan> {
  const owner = await services.recent.get(ACCOUNTS, accountId);
  return StoredPlan.parse(owner?.plan);
}
