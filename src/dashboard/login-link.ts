import { createHmac, timingSafeEqual } from 'node:crypto';
import type { Aggregate } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import type { DashboardEvent } from './events.js';

/** How long a login link can be used. */
export const LINK_TTL_MS = 15 * 60 * 1000;

/**
 * A login link's token: `<link_id>.<account_id>.<expiry, ms base 36>.<HMAC>`.
 * Signed rather than stored, so the event that records the link holds
 * nothing that would sign anyone in; it is used once because a sign-in
 * starts the link's own stream (session.ts).
 */
export interface LinkClaims {
  linkId: string;
  accountId: string;
  expiresAt: Date;
}

const ID = /^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/;
const EXPIRY = /^[0-9a-z]{1,11}$/;
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

const sign = (key: Buffer, payload: string) => createHmac('sha256', key).update(`login-link:${payload}`).digest('base64url');

export function issueLinkToken(key: Buffer, claims: LinkClaims): string {
  const payload = `${claims.linkId}.${claims.accountId}.${claims.expiresAt.getTime().toString(36)}`;
  return `${payload}.${sign(key, payload)}`;
}

/** The claims of a genuine token, whatever its expiry; 401 `login_link_invalid` for anything else. */
export function readLinkToken(key: Buffer, token: unknown): LinkClaims {
  const invalid = new AppError('login_link_invalid', 'This login link is not valid: ask for a new one');
  if (typeof token !== 'string' || token.length > 200) throw invalid;
  const parts = token.split('.');
  if (parts.length !== 4) throw invalid;
  const [linkId, accountId, expiry, signature] = parts as [string, string, string, string];
  if (!ID.test(linkId) || !linkId.startsWith('lnk_') || !ID.test(accountId) || !EXPIRY.test(expiry) || !SIGNATURE.test(signature)) throw invalid;
  const expected = Buffer.from(sign(key, `${linkId}.${accountId}.${expiry}`));
  if (!timingSafeEqual(expected, Buffer.from(signature))) throw invalid;
  return { linkId, accountId, expiresAt: new Date(parseInt(expiry, 36)) };
}

/** A genuine token's claims, or 401 `login_link_expired` once its time is past. */
export function checkLinkToken(key: Buffer, token: unknown, now: Date): LinkClaims {
  const claims = readLinkToken(key, token);
  if (now.getTime() >= claims.expiresAt.getTime()) throw new AppError('login_link_expired', 'This login link has expired: ask for a new one');
  return claims;
}

export type LoginLinkCommand = { type: 'IssueLoginLink'; link_id: string; account_id: string; expires_at: string; at: string };
export type LoginLinkState = { status: 'none' } | { status: 'issued' };

/** The record that a link was issued (to whom, until when): its own stream, apart from the sign-in it may lead to. */
export const loginLink: Aggregate<LoginLinkState, DashboardEvent, LoginLinkCommand> = {
  streamId: (id) => `login-link-${id}`,
  initial: () => ({ status: 'none' }),
  evolve: (state, event) => (event.type === 'LoginLinkIssued' ? { status: 'issued' } : state),
  decide(command, state) {
    if (state.status !== 'none') throw new AppError('conflict', `login link ${command.link_id} exists already`);
    const { link_id, account_id, expires_at, at } = command;
    return [{ type: 'LoginLinkIssued', data: { link_id, account_id, expires_at, issued_at: at } }];
  },
};
