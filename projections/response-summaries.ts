import { createHash } from 'node:crypto';
import type { ReadModelOp } from '../src/infra/read-models/port.js';
import type { Projection } from './projection.js';

/**
 * The dashboard's summaries: counters kept from the feed, so a summary reads
 * a bounded number of small documents however many responses there are.
 *
 * An erasure (`ResponsesErased`) names responses by id only, and a pure
 * projection cannot read what they said. So each response (or vote) also
 * leaves a small record listing the counters it added 1 to, and the erasure
 * `retract`s it: the read models take 1 back from each of those counters and
 * delete the record, in the transaction that moves the checkpoint. A counter
 * taken back to 0 is deleted, so after an erasure the collection holds what a
 * rebuild (which never sees the erased response) builds: the same documents.
 * The record keeps no answer, only counter ids, the parent and the time.
 *
 * Counters and records share one collection because a retract reads one and
 * changes the others in order, and the MongoDB adapter keeps order within a
 * collection only.
 */
export const RESPONSE_SUMMARIES = 'response_summaries';

/** The field every counter counts in. */
export const COUNT = 'count';

export type ParentKind = 'widget' | 'form' | 'poll';
/** What a counter counts, within its scope (an object, or an account for the overview). */
export type Dimension = 'total' | 'day' | 'answer' | 'option' | 'device' | 'browser' | 'country';
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

/** One response's (or vote's) record: what `retract` takes back, and the times first/last and the latest list read. */
export interface ContributionRecord {
  id: string;
  parent_kind: ParentKind;
  parent_id: string;
  account_id: string;
  response_id: string;
  at: string;
  tallies: string[];
}

// A text value is named by its hash: a counter's id never holds what a visitor wrote.
const part = (value: CounterValue): string =>
  value === null ? '%' : typeof value === 'string' ? `s${createHash('sha256').update(value).digest('base64url').slice(0, 22)}` : `${typeof value === 'number' ? 'n' : 'b'}${String(value)}`;

/**
 * A counter's id from what it counts: one id per (scope, dimension, key,
 * value), each part escaped or hashed so no two tuples share an id, and a
 * value's type kept (the answer 9 and the text "9" are two counters).
 */
export const counterId = (scope: string, dim: Dimension, key = '', value: CounterValue = null): string =>
  [encodeURIComponent(scope), dim, encodeURIComponent(key), part(value)].join(':');

export const recordId = (parent: ParentKind, responseId: string): string => `record:${parent}:${encodeURIComponent(responseId)}`;

/** The UTC day of an ISO time, as YYYY-MM-DD. */
export const utcDay = (iso: string): string => new Date(iso).toISOString().slice(0, 10);

/**
 * Answers counted per value. The projection does not know a question's type
 * (the event holds answers only), so it counts what a counted type can
 * answer: numbers (NPS, ratings), booleans (consent) and single words of at
 * most 64 characters (choice ids, severities). Most text and email answers
 * are not of that shape; a one-word text answer may be counted, but only
 * under the hash of its value, and never shown: summaries read a question's
 * counters by the values its type allows. So no text a visitor wrote is
 * copied here.
 */
const TOKEN = /^[A-Za-z0-9_-]{1,64}$/;
const counted = (value: unknown): value is string | number | boolean =>
  typeof value === 'number' ? Number.isFinite(value) : typeof value === 'boolean' || (typeof value === 'string' && TOKEN.test(value));

interface Contribution {
  parent: ParentKind;
  parentId: string;
  accountId: string;
  responseId: string;
  at: string;
  /** Counters of the object beyond its total and day. */
  counters: Array<{ dim: Dimension; key: string; value: CounterValue; stored?: CounterValue }>;
}

function contribute(c: Contribution): ReadModelOp[] {
  const day = utcDay(c.at);
  const counters: Array<Omit<Counter, 'id' | 'count'> & { stored?: CounterValue }> = [
    { scope: c.parentId, dim: 'total', key: '', value: null },
    { scope: c.parentId, dim: 'day', key: day, value: null },
    // The account's figures for the overview.
    { scope: c.accountId, dim: 'total', key: '', value: null },
    { scope: c.accountId, dim: 'day', key: day, value: null },
    ...c.counters.map((counter) => ({ scope: c.parentId, ...counter })),
  ];
  const ops: ReadModelOp[] = [];
  const tallies: string[] = [];
  for (const { stored, ...counter } of counters) {
    const id = counterId(counter.scope, counter.dim, counter.key, counter.value);
    tallies.push(id);
    ops.push({ op: 'tally', collection: RESPONSE_SUMMARIES, doc: { id, ...counter, value: stored === undefined ? counter.value : stored }, field: COUNT, by: 1 });
  }
  const record: ContributionRecord = {
    id: recordId(c.parent, c.responseId),
    parent_kind: c.parent,
    parent_id: c.parentId,
    account_id: c.accountId,
    response_id: c.responseId,
    at: c.at,
    tallies,
  };
  ops.push({ op: 'put', collection: RESPONSE_SUMMARIES, doc: { ...record } });
  return ops;
}

export const responseSummariesProjection: Projection = {
  name: 'response_summaries',
  version: 1,
  collections: [
    {
      name: RESPONSE_SUMMARIES,
      indexes: [
        // Counters: a scope's days by range, a question's values, a breakdown.
        ['scope', 'dim', 'key'],
        // Records: an object's first and last, an account's latest.
        ['parent_id', 'at'],
        ['account_id', 'at'],
      ],
    },
  ],
  project(event): ReadModelOp[] {
    switch (event.type) {
      case 'ResponseSubmitted': {
        const { response_id, account_id, widget_id, form_id, answers, metadata, submitted_at } = event.data;
        const [parent, parentId] = widget_id !== undefined ? (['widget', widget_id] as const) : form_id !== undefined ? (['form', form_id] as const) : [];
        if (parent === undefined) return [];
        const counters: Contribution['counters'] = [];
        for (const [question, answer] of Object.entries(answers)) {
          // Summaries read an answer's counter by the id of a value the question allows, never by its stored value: a text one is not kept.
          if (counted(answer)) counters.push({ dim: 'answer', key: question, value: answer, stored: typeof answer === 'string' ? null : answer });
        }
        // A field the owner's plan did not record is absent and not counted; one recorded but not known is null, counted as unknown.
        const recorded = metadata as Record<string, unknown>;
        for (const field of BREAKDOWNS) {
          if (!Object.hasOwn(recorded, field)) continue;
          const value = recorded[field];
          counters.push({ dim: field, key: '', value: typeof value === 'string' ? value : null });
        }
        return contribute({ parent, parentId, accountId: account_id, responseId: response_id, at: submitted_at, counters });
      }
      case 'VoteCast': {
        const { vote_id, poll_id, account_id, option_ids, cast_at } = event.data;
        return contribute({
          parent: 'poll',
          parentId: poll_id,
          accountId: account_id,
          responseId: vote_id,
          at: cast_at,
          counters: [...new Set(option_ids)].map((option) => ({ dim: 'option', key: option, value: null })),
        });
      }
      case 'ResponsesErased':
        return event.data.response_ids.map((id) => ({ op: 'retract', collection: RESPONSE_SUMMARIES, id: recordId(event.data.parent, id), field: COUNT }));
      default:
        return [];
    }
  },
};
