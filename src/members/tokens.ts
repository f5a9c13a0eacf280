import { createHmac, timingSafeEqual } from 'node:crypto';
import { AppError, type ErrorCode } from '../kernel/errors.js';

/**
 * A link's token for an invitation or a sign-up: `<ids…>.<expiry, ms base
 * 36>.<HMAC>`, signed with a purpose so one kind of token is never taken for
 * another. Signed rather than stored: the event that records the
 * invitation holds nothing that would let anyone in; it is used once because
 * its use is recorded (the invitation accepted, the sign-up's session).
 */
export type Purpose = 'invitation' | 'sign-up' | 'unsubscribe';

const ID = /^[a-z]{3}_[0-9A-HJKMNP-TV-Z]{26}$/;
const EXPIRY = /^[0-9a-z]{1,11}$/;
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

const sign = (key: Buffer, purpose: Purpose, payload: string) => createHmac('sha256', key).update(`${purpose}:${payload}`).digest('base64url');

export function signToken(key: Buffer, purpose: Purpose, ids: string[], expiresAt: Date): string {
  const payload = [...ids, expiresAt.getTime().toString(36)].join('.');
  return `${payload}.${sign(key, purpose, payload)}`;
}

const CODES: Record<Purpose, { invalid: ErrorCode; expired: ErrorCode; what: string }> = {
  invitation: { invalid: 'invitation_invalid', expired: 'invitation_expired', what: 'invitation' },
  'sign-up': { invalid: 'login_link_invalid', expired: 'login_link_expired', what: 'sign-up link' },
  unsubscribe: { invalid: 'unsubscribe_link_invalid', expired: 'unsubscribe_link_invalid', what: 'unsubscribe link' },
};

/** The ids of a genuine, unexpired token of the purpose, with `count` ids; else 401 (invalid or expired). */
export function readToken(key: Buffer, purpose: Purpose, count: number, token: unknown, now: Date): string[] {
  const { invalid, expired, what } = CODES[purpose];
  const refused = new AppError(invalid, `This ${what} is not valid: ask for a new one`);
  if (typeof token !== 'string' || token.length > 300) throw refused;
  const parts = token.split('.');
  if (parts.length !== count + 2) throw refused;
  const ids = parts.slice(0, count);
  const expiry = parts[count]!;
  const signature = parts[count + 1]!;
  if (!ids.every((id) => ID.test(id)) || !EXPIRY.test(expiry) || !SIGNATURE.test(signature)) throw refused;
  const expected = Buffer.from(sign(key, purpose, [...ids, expiry].join('.')));
  if (!timingSafeEqual(expected, Buffer.from(signature))) throw refused;
  if (now.getTime() >= parseInt(expiry, 36)) throw new AppError(expired, `This ${what} has expired: ask for a new one`);
  return ids;
}
