import { z } from 'zod';

export const Plan = z.enum(['free', 'pro', 'business']);
export type Plan = z.infer<typeof Plan>;

/** D1: the spec's read scopes, and the write scopes it announces. */
export const Scope = z.enum(['forms:read', 'forms:write', 'responses:read', 'responses:write', 'webhooks:read', 'webhooks:write']);
export type Scope = z.infer<typeof Scope>;
export const DEFAULT_SCOPES: Scope[] = ['forms:read', 'responses:read'];
