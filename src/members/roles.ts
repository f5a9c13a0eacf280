import { z } from 'zod';
import { AppError } from '../kernel/errors.js';

export const Role = z.enum(['owner', 'admin', 'editor', 'viewer']);
export type Role = z.infer<typeof Role>;

/**
 * What each role may do, each including the ones below it: a viewer reads
 * objects, responses and summaries; an editor also creates, changes and
 * deletes objects and responses; an admin also manages members (not
 * owners), API keys and webhooks; an owner does everything, owners included.
 */
const RANK: Record<Role, number> = { viewer: 0, editor: 1, admin: 2, owner: 3 };

export const atLeast = (role: Role, needed: Role): boolean => RANK[role] >= RANK[needed];

export const forbidden = (needed: Role) => new AppError('forbidden', `This needs the ${needed} role or above in this account`);

/** 403 `forbidden` unless the role reaches the one needed. */
export function requireRole(role: Role, needed: Role): void {
  if (!atLeast(role, needed)) throw forbidden(needed);
}

/** Addresses are compared as typed by most providers: the domain is case-insensitive, and so in practice is the local part. */
export const normalEmail = (email: string): string => email.trim().toLowerCase();

export const Email = z
  .string()
  .trim()
  .max(254, 'must be at most 254 characters')
  .pipe(z.email('must be an email address'))
  .transform(normalEmail);
