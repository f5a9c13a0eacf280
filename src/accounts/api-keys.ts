import { createHash, timingSafeEqual } from 'node:crypto';
import type { RandomBytes } from '../infra/ids.js';

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const RANDOM_BYTES = 32;
/** 32 random bytes need 43 base62 digits. */
const BODY_LENGTH = 43;
export const API_KEY = /^svc_[0-9A-Za-z]{43}$/;

function base62(bytes: Buffer): string {
  let n = BigInt(`0x${bytes.toString('hex')}`);
  let out = '';
  while (n > 0n) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out.padStart(BODY_LENGTH, '0');
}

/** Keys carry 256 random bits, so a plain SHA-256 is enough to store them: there is nothing to guess. */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** What may be shown of a key after its creation: the service prefix and eight characters. */
export function displayPrefix(key: string): string {
  return key.slice(0, 12);
}

export function generateApiKey(random: RandomBytes): { key: string; hash: string; prefix: string } {
  const key = `svc_${base62(random(RANDOM_BYTES))}`;
  return { key, hash: hashApiKey(key), prefix: displayPrefix(key) };
}

export function sameHash(a: string, b: string): boolean {
  const left = Buffer.from(a, 'hex');
  const right = Buffer.from(b, 'hex');
  return left.length === right.length && timingSafeEqual(left, right);
}
