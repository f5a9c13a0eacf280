/**
 * What the MongoDB read-model adapter (./mongo.ts) asks of the server, worked
 * out without one: the keys of its indexes and sorts, and the rank shifts
 * that close the gaps deletes leave in a ranked group. Pure, so the suite
 * checks them where no server runs.
 */
import { assertName, type SortSpec } from './port.js';

export type KeySpec = Record<string, 1 | -1>;

/** The port's `id` is the stored `_id`. */
export function storedField(field: string): string {
  return field === 'id' ? '_id' : field;
}

/**
 * The key of the index declared as `fields`, ending with `_id` unless it
 * names `_id` already. Every sort ends with `_id` as its tie-break (see
 * `sortKey`); a secondary index holds record ids, not `_id`, so without it
 * there the server sorts the matching documents in memory instead of
 * walking the index (an SQLite index ends with the row key on its own).
 */
export function indexKey(fields: string[]): KeySpec {
  const key: KeySpec = {};
  for (const field of fields) {
    assertName('field', field);
    const stored = storedField(field);
    if (stored in key) throw new Error(`field ${field} appears twice in an index`);
    key[stored] = 1;
  }
  if (!('_id' in key)) key._id = 1;
  return key;
}

/** MongoDB's default name of an index: each field and its direction, joined by `_`. */
export function indexName(key: KeySpec): string {
  return Object.entries(key)
    .map(([field, direction]) => `${field}_${direction}`)
    .join('_');
}

/**
 * The sort as sent: stored names, with `_id` last as a tie-break so that
 * offset/limit pages are stable, in the direction of the field before it so
 * that one index walked forwards or backwards serves the whole sort.
 */
export function sortKey(sort: SortSpec): KeySpec {
  if (!Array.isArray(sort)) throw new Error('sort must be a list of [field, 1 | -1]');
  const key: KeySpec = {};
  let last: 1 | -1 = 1;
  for (const entry of sort) {
    if (!Array.isArray(entry)) throw new Error('sort must be a list of [field, 1 | -1]');
    const [field, direction] = entry;
    assertName('field', field);
    if (direction !== 1 && direction !== -1) throw new Error(`sort direction for ${field} must be 1 or -1`);
    const stored = storedField(field);
    if (stored in key) throw new Error(`field ${field} appears twice in a sort`);
    key[stored] = direction;
    last = direction;
  }
  if (!('_id' in key)) key._id = last;
  return key;
}

/** One update that moves the ranks strictly between `above` and `below` down by `by`. */
export interface RankShift {
  above: number;
  below: number;
  by: number;
}

/**
 * Closes the gaps that the `freed` ranks leave in a group whose ranks reach
 * `top` at most: each stretch between two freed ranks (and the one above the
 * last) moves down by the number of ranks freed below it. Empty stretches
 * (freed ranks side by side, or the last freed rank at the top) need no
 * update and are left out, so erasing a run of responses costs one shift or
 * none. The shifts must run in the order given, lowest first: a shifted rank
 * then lands below every stretch still to move, never in one.
 */
export function rankShifts(freed: number[], top: number): RankShift[] {
  const ranks = [...new Set(freed)].sort((a, b) => a - b);
  const shifts: RankShift[] = [];
  ranks.forEach((above, i) => {
    const below = ranks[i + 1] ?? top + 1;
    if (below - above > 1) shifts.push({ above, below, by: i + 1 });
  });
  return shifts;
}
