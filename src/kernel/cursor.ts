import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import { AppError } from './errors.js';

/**
 * An opaque page cursor: the sort key of the last item a page held, signed
 * so that a cursor cannot be forged or altered into a query the service did
 * not hand out. It names a place in the list, not a page: items added or
 * erased meanwhile move no item across it.
 */
const Key = z.tuple([z.string().max(64), z.string().max(64)]);
export type CursorKey = z.infer<typeof Key>;

const sign = (key: Buffer, body: string) => createHmac('sha256', key).update(`cursor:${body}`).digest().subarray(0, 16);

export function encodeCursor(key: Buffer, position: CursorKey): string {
  const body = Buffer.from(JSON.stringify(position)).toString('base64url');
  return `${body}.${sign(key, body).toString('base64url')}`;
}

/** The position a cursor names; 400 `validation_error` for anything the service did not sign. */
export function decodeCursor(key: Buffer, cursor: string): CursorKey {
  const invalid = () => new AppError('validation_error', 'The cursor is not one this service handed out', [{ path: 'querystring.cursor', message: 'must be a next_cursor from an earlier page, unchanged' }]);
  const [body, signature, extra] = cursor.split('.');
  if (!body || !signature || extra !== undefined) throw invalid();
  // The encodings are compared, not what they decode to: a base64url decoder skips characters outside
  // its alphabet and the spare bits of the last one, so many strings would pass as the one cursor.
  const given = Buffer.from(signature, 'utf8');
  const expected = Buffer.from(sign(key, body).toString('base64url'), 'utf8');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
  try {
    return Key.parse(JSON.parse(Buffer.from(body, 'base64url').toString('utf8')));
  } catch {
    throw invalid();
  }
}
