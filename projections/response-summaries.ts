import { createHash } from 'node:crypto';
import type { CollectionSpec, Doc, ReadModelOp } from '../src/infra/read-models/port.js';

/**
 * The dashboard's summaries: counters kept from the feed, so a summary reads
 * a bounded number of small documents however many responses there are.
 * The responses projection keeps the counters of widgets' and forms'
 * responses, the polls projection those of votes, each in a collection of
 * its own (a projection owns what it writes, and replays it alone).
 *
 * An erasure (`ResponsesErased`) names responses by id only, and a pure
 * projection cannot read what they said. So the erasure `retract`s each
 * response (or vote) before it deletes its document: the read models work
 * out from the document the counters it added 1 to (the collection's
 * `counted`, the same rule as counted it: responseCounters, voteCounters)
 * and take 1 back from each in the transaction that moves the checkpoint. A
 * counter taken back to 0 is deleted, so after an erasure the collection
 * holds what a rebuild (which never sees the erased response) builds: the
 * same documents.
 */
export const RESPONSE_SUMMARIES = 'response_summaries';
export const VOTE_SUMMARIES = 'vote_summaries';

/** The field every counter counts in. */
export const COUNT = 'count';

/** A collection of counters, read by scope, dimension and key. */
export const countersCollection = (name: string): CollectionSpec => ({ name, indexes: [['scope', 'dim', 'key']], indexedColumns: true });

export type ParentKind = 'widget' | 'form' | 'poll';
/** What a counter counts, within its scope (an object, or an account for the overview). */
export type Dimension = 'total' | 'day' | 'answer' | 'answered' | 'rank' | 'option' | 'device' | 'browser' | 'country' | 'language';
/** The metadata fields broken down, as stored (src/submissions/metadata.ts). */
export const BREAKDOWNS = ['device', 'browser', 'country'] as const;

export type CounterValue = string | number | boolean | null;

/** A counter: how many responses of `scope` have `value` in `dimension` (for an answer, `key` is the question id; for a day, the day). */
export interface Counter {
  id: string;
  scope: string;
  dim: Dimension;
  key: string;
  value: CounterValue;
  count: number;
}

/**
 * A counter already worked out: its id, and by collection the op that
 * counts one more in it. A replay counts the same few counters a million
 * times; each response then lists ids and ops made once (frozen: stores
 * and sums only read ops) rather than hashing and allocating anew.
 */
interface KnownCounter {
  id: string;
  countOne: Map<string, CountOne>;
}

type CountOne = Extract<ReadModelOp, { op: 'tally' }>;

/**
 * Counters already worked out, by scope, dimension, key and value. The
 * values are what responses answered, a visitor's one-word text among
 * them: an erasure forgets them all (uncount), and working out what an
 * erased response counted (`retract`) adds none.
 */
const known = new Map<string, Map<Dimension, Map<string, Map<CounterValue, KnownCounter>>>>();
let countersKept = 0;
const COUNTERS_KEPT = 65_536;
/** Off while the counters of a response being erased are worked out. */
let remembering = true;

function forgetCounters(): void {
  known.clear();
  countersKept = 0;
}

function unremembered<T>(work: () => T): T {
  remembering = false;
  try {
    return work();
  } finally {
    remembering = true;
  }
}

/**
 * A counter's id from what it counts: 96 bits of a SHA-256 of (scope,
 * dimension, key, value) with the value's type (the answer 9 and the text
 * "9" are two counters): a hash, so no id holds what a visitor wrote. The
 * counter's document says what it counts.
 */
export function counterId(scope: string, dim: Dimension, key = '', value: CounterValue = null): string {
  return counter(scope, dim, key, value).id;
}

function counter(scope: string, dim: Dimension, key: string, value: CounterValue): KnownCounter {
  const found = known.get(scope)?.get(dim)?.get(key)?.get(value);
  if (found !== undefined) return found;
  const made = { id: createHash('sha256').update(JSON.stringify([scope, dim, key, value])).digest('base64url').slice(0, 16), countOne: new Map() };
  if (!remembering) return made;
  let byDim = known.get(scope);
  if (byDim === undefined) {
    if (countersKept >= COUNTERS_KEPT) forgetCounters();
    known.set(scope, (byDim = new Map()));
  }
  let byKey = byDim.get(dim);
  if (byKey === undefined) byDim.set(dim, (byKey = new Map()));
  // A Map tells 9 from "9" and true from "true" by itself (SameValueZero): the value is its own key.
  let byValue = byKey.get(key);
  if (byValue === undefined) byKey.set(key, (byValue = new Map()));
  byValue.set(value, made);
  countersKept++;
  return made;
}

/** A time as the service writes it, in UTC: its day is its first ten characters. */
const UTC_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z$/;

/** The UTC day of an ISO time, as YYYY-MM-DD. */
export const utcDay = (iso: string): string => (UTC_TIME.test(iso) ? iso.slice(0, 10) : new Date(iso).toISOString().slice(0, 10));

/**
 * Answers counted per value. The projection does not know a question's type
 * (the event holds answers only), so it counts what a counted type can
 * answer: numbers (NPS, ratings), booleans (consent) and single words of at
 * most 64 characters (choice ids, severities). Most text and email answers
 * are not of that shape; a one-word text answer may be counted, but only
 * under its counter's hashed id, its value not stored, and never shown:
 * summaries read a question's counters by the values its type allows. So no
 * text a visitor wrote is copied here.
 */
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;
/** A calendar day as a date question stores it. */
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const counted = (value: unknown): value is string | number | boolean =>
  typeof value === 'number' ? Number.isFinite(value) : typeof value === 'boolean' || (typeof value === 'string' && TOKEN.test(value));

interface Contribution {
  parentId: string;
  accountId: string;
  at: string;
  /** Counters of the object beyond its total and day. */
  counters: Array<{ dim: Dimension; key: string; value: CounterValue; stored?: CounterValue }>;
}

/** What a response or vote counts: one tally into `collection` for each counter it adds to (the counter's id is its doc's). */
export interface Counted {
  ops: CountOne[];
}

function contribute(collection: string, c: Contribution): Counted {
  const day = utcDay(c.at);
  const counted: Counted = { ops: [] };
  count(counted, collection, c.parentId, 'total', '', null, null);
  count(counted, collection, c.parentId, 'day', day, null, null);
  // The account's figures for the overview.
  count(counted, collection, c.accountId, 'total', '', null, null);
  count(counted, collection, c.accountId, 'day', day, null, null);
  for (const counter of c.counters) count(counted, collection, c.parentId, counter.dim, counter.key, counter.value, counter.stored === undefined ? counter.value : counter.stored);
  return counted;
}

function count(into: Counted, collection: string, scope: string, dim: Dimension, key: string, value: CounterValue, stored: CounterValue): void {
  const { id, countOne } = counter(scope, dim, key, value);
  let op = countOne.get(collection);
  // What a counter stores follows from what it counts; a caller that stored otherwise gets an op of its own.
  if (op === undefined || op.doc.value !== stored) {
    const made: CountOne = Object.freeze({ op: 'tally', collection, doc: Object.freeze({ id, scope, dim, key, value: stored }), field: COUNT, by: 1 });
    if (op === undefined) countOne.set(collection, made);
    op = made;
  }
  into.ops.push(op);
}

/** A response's counters: its object's total and day, the account's, each counted answer, its language and each breakdown its plan recorded. */
export function responseCounted(
  response: { account_id: string; answers: Record<string, unknown>; metadata: unknown; submitted_at: string; language?: unknown },
  parentId: string,
): Counted {
  const counters: Contribution['counters'] = [];
  for (const [question, answer] of Object.entries(response.answers)) {
    // Summaries read an answer's counter by the id of a value the question allows, never by its stored value: a text one is not kept.
    // A day (a date answer) is no one's words, and is kept, for the counts per day to be read by range.
    if (counted(answer)) counters.push({ dim: 'answer', key: question, value: answer, stored: typeof answer === 'string' && !DAY.test(answer) ? null : answer });
    else if (Array.isArray(answer)) {
      // Choices picked (multiple choice) or ranked (ranking): each choice once, and each at its place, counted from 1 (kept: a place is a number).
      counters.push({ dim: 'answered', key: question, value: null });
      answer.forEach((choice, place) => {
        if (!counted(choice)) return;
        counters.push({ dim: 'answer', key: question, value: choice, stored: null });
        counters.push({ dim: 'rank', key: `${question}.${String(choice)}`, value: place + 1 });
      });
    } else if (isObject(answer)) {
      // A matrix: each row's column, under `<question>.<row>` (ids hold no dot, so no key of another question's).
      counters.push({ dim: 'answered', key: question, value: null });
      for (const [row, column] of Object.entries(answer)) {
        if (counted(column) && TOKEN.test(row)) counters.push({ dim: 'answer', key: `${question}.${row}`, value: column, stored: null });
      }
    }
  }
  // A field the owner's plan did not record is absent and not counted; one recorded but not known is null, counted as unknown.
  const recorded = response.metadata as Record<string, unknown>;
  for (const field of BREAKDOWNS) {
    if (!Object.hasOwn(recorded, field)) continue;
    const value = recorded[field];
    counters.push({ dim: field, key: '', value: typeof value === 'string' ? value : null });
  }
  // The language the visitor saw; a response from before languages was given in English (as its event reads).
  counters.push({ dim: 'language', key: '', value: typeof response.language === 'string' ? response.language : 'en' });
  return contribute(RESPONSE_SUMMARIES, { parentId, accountId: response.account_id, at: response.submitted_at, counters });
}

/** A vote's counters: its poll's total and day, the account's, and each option chosen. */
export function voteCounted(vote: { poll_id: string; account_id: string; option_ids: string[]; cast_at: string }): Counted {
  return contribute(VOTE_SUMMARIES, {
    parentId: vote.poll_id,
    accountId: vote.account_id,
    at: vote.cast_at,
    counters: [...new Set(vote.option_ids)].map((option) => ({ dim: 'option', key: option, value: null })),
  });
}

/** The counters a response's document counted in (the responses collection's `counted`); none for a document not of that shape. */
export function responseCounters(doc: Doc): string[] {
  const { parent_id, account_id, answers, metadata, submitted_at, status, language, counted } = doc;
  // A partial response counts in nothing.
  if (status === 'partial') return [];
  // A sealed response lists them: its answers are not readable here.
  if (Array.isArray(counted)) return counted.filter((id): id is string => typeof id === 'string');
  if (typeof parent_id !== 'string' || typeof account_id !== 'string' || typeof submitted_at !== 'string' || !isObject(answers) || !isObject(metadata)) return [];
  // Asked for a response being erased (a retract): its answers are not kept here.
  return unremembered(() => responseCounted({ account_id, answers, metadata, submitted_at, language }, parent_id).ops.map((op) => op.doc.id));
}

/** The counters a vote's document counted in (the voters collection's `counted`); none for a document not of that shape. */
export function voteCounters(doc: Doc): string[] {
  const { poll_id, account_id, option_ids, cast_at } = doc;
  if (typeof poll_id !== 'string' || typeof account_id !== 'string' || typeof cast_at !== 'string' || !Array.isArray(option_ids) || !option_ids.every((id) => typeof id === 'string')) return [];
  return unremembered(() => voteCounted({ poll_id, account_id, option_ids, cast_at }).ops.map((op) => op.doc.id));
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Takes back what each erased response or vote (documents of `records`) counted in `collection`, then deletes it. */
export function uncount(collection: string, records: string, ids: readonly string[]): ReadModelOp[] {
  // Whatever the erased responses answered is forgotten with the rest: a few counters are worked out again.
  if (ids.length > 0) forgetCounters();
  return ids.flatMap((id): ReadModelOp[] => [
    { op: 'retract', collection, field: COUNT, record: { collection: records, id } },
    { op: 'delete', collection: records, where: { id } },
  ]);
}
