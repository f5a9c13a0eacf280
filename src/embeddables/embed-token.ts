import { createHmac, timingSafeEqual } from 'node:crypto';

/** Spec 2.10 and 3.2: a token is valid for 1800 seconds from its issue. */
export const TOKEN_TTL_SECONDS = 1800 as const;
/** Issue times this far in the future still pass, for clocks of several instances that drift apart. */
const SKEW_MS = 5_000;

export type EmbedTarget = 'widget' | 'form' | 'poll';

const sign = (key: Buffer, payload: string) => createHmac('sha256', key).update(payload).digest('base64url');

/**
 * `v1.<target>.<id>.<issued-at ms, base 36>.<HMAC>`: bound to one object and
 * carrying its issue time, which also gives the response its completion time.
 */
export function issueEmbedToken(key: Buffer, target: EmbedTarget, id: string, now: Date): string {
  const payload = `v1.${target}.${id}.${now.getTime().toString(36)}`;
  return `${payload}.${sign(key, payload)}`;
}

/**
 * Genuine tokens met lately, with their issue times, by the key that signed
 * them: a visit sends its one token with its display, its start and its
 * answers, and the signature's check was a tenth of counting a display.
 * Only tokens whose signature was checked are kept, at most GENUINE_KEPT a
 * key (all forgotten at once past that); their lifetime is checked at every
 * use.
 */
const genuine = new WeakMap<Buffer, Map<string, number>>();
const GENUINE_KEPT = 10_000;

/** The token's issue time when it is genuine, for this object, and not expired; otherwise null. */
export function verifyEmbedToken(key: Buffer, token: unknown, target: EmbedTarget, id: string, now: Date): Date | null {
  if (typeof token !== 'string' || token.length > 512) return null;
  let known = genuine.get(key);
  const issued = known?.get(token);
  // The token names its object in full ahead of its issue time, and no id holds a dot.
  if (issued !== undefined) return token.startsWith(`v1.${target}.${id}.`) ? withinLifetime(new Date(issued), now) : null;
  const parts = token.split('.');
  if (parts.length !== 5 || parts[0] !== 'v1' || parts[1] !== target || parts[2] !== id) return null;
  const payload = parts.slice(0, 4).join('.');
  // The encodings are compared, not what they decode to: a base64url decoder
  // skips characters outside its alphabet and ignores padding and the spare
  // bits of the last character, so many strings decode to the one signature.
  const given = Buffer.from(parts[4]!, 'utf8');
  const expected = Buffer.from(sign(key, payload), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  const issuedAt = Number.parseInt(parts[3]!, 36);
  if (!Number.isSafeInteger(issuedAt)) return null;
  if (known === undefined) genuine.set(key, (known = new Map()));
  if (known.size >= GENUINE_KEPT) known.clear();
  known.set(token, issuedAt);
  return withinLifetime(new Date(issuedAt), now);
}

/** The issue time of a genuine token while it is still valid at `now`; otherwise null. */
export function withinLifetime(issuedAt: Date, now: Date): Date | null {
  // An issue time no date can hold (a signed field past ±8.64e15 ms) is no lifetime at all.
  if (Number.isNaN(issuedAt.getTime())) return null;
  const age = now.getTime() - issuedAt.getTime();
  return age > TOKEN_TTL_SECONDS * 1000 || age < -SKEW_MS ? null : issuedAt;
}
