import { z } from 'zod';

/**
 * The instants whose UTC form has a four-digit year: outside them
 * `toISOString` writes `+010000-…` or `-000001-…`, which sort as text out of
 * time order (`+` and `-` before every digit), and which the same format
 * check would refuse when the value is sent back.
 */
const FIRST = Date.parse('0000-01-01T00:00:00.000Z');
const LAST = Date.parse('9999-12-31T23:59:59.999Z');

/**
 * An ISO 8601 instant with any offset, refused (with `error`, else zod's
 * own words for the format) unless it falls within years 0000 to 9999 once
 * in UTC: `9999-12-31T23:59:59-01:00` is in year 10000.
 */
export function isoInstant(error?: string) {
  // abort: a value that is no time at all is told so once, not also that it is out of range.
  return z.iso.datetime({ offset: true, abort: true, ...(error ? { error } : {}) }).refine(
    (value) => {
      const at = Date.parse(value);
      return at >= FIRST && at <= LAST;
    },
    { error: 'must fall within years 0000 to 9999 once in UTC' },
  );
}
