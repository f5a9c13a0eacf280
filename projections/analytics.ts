import { createHash } from 'node:crypto';
import type { DomainEvent } from '../src/domain-events.js';
import type { Doc, ReadModelOp } from '../src/infra/read-models/port.js';
import type { Projection } from '../src/kernel/feed/projection.js';
import { utcDay } from './response-summaries.js';

/**
 * The funnel of each object by day: displays and starts (from the counts the
 * embed reports, `SignalsCounted`), responses (widgets' and forms'
 * responses, polls' votes), each in total and by the breakdowns the plan
 * recorded, numeric answers (NPS, ratings) by value, and a form's unfinished
 * responses by the last page they reached (drop-off). A small record of
 * each response beside them holds its completion time (for medians) and
 * what it counted in, so an erasure takes back exactly what it added (the
 * port's retract): after an erasure the counters are what a rebuild builds.
 * An unfinished response counts on the day of its latest page; each later
 * page, and the submission that completes it, takes its count back first.
 */
export const ANALYTICS_COUNTS = 'analytics_counts';
export const ANALYTICS_RESPONSES = 'analytics_responses';

export type Metric = 'display' | 'start' | 'response' | 'score' | 'stopped';
/** The breakdowns, as the response metadata names them. */
export const FACETS = ['device', 'referer_domain', 'country', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
export type Facet = (typeof FACETS)[number];
/** `total`, a breakdown, `page` (for `stopped`: the value is the page's id), or (for a score) the question's id. */
export type CountDim = 'total' | Facet | string;

/** One counter: how many `metric` of object `scope` on `day` had `value` in `dim`. */
export interface AnalyticsCount {
  id: string;
  scope: string;
  account_id: string;
  day: string;
  metric: Metric;
  dim: CountDim;
  value: string;
  count: number;
}

type Tally = Extract<ReadModelOp, { op: 'tally' }>;

/** Ids worked out already: a rebuild counts the same few counters over and over. */
const ids = new Map<string, string>();
const IDS_KEPT = 65_536;

function countId(key: string): string {
  let id = ids.get(key);
  if (id === undefined) {
    if (ids.size >= IDS_KEPT) ids.clear();
    // A hash: no id holds a value (a campaign's name) as it was given.
    id = createHash('sha256').update(key).digest('base64url').slice(0, 16);
    ids.set(key, id);
  }
  return id;
}

/**
 * Counts of one made already, by scope, day, metric, dimension and value:
 * a rebuild counts the same few counters a million times, and one op made
 * once (frozen: stores and sums only read ops) is neither hashed again nor
 * summed by a key of its own (a write's sum finds it as the op it met).
 */
const ones = new Map<string, Map<string, Map<Metric, Map<CountDim, Map<string, Tally>>>>>();
let onesKept = 0;

function tally(scope: string, account: string, day: string, metric: Metric, dim: CountDim, value: string, by: number): Tally {
  if (by === 1) {
    const one = ones.get(scope)?.get(day)?.get(metric)?.get(dim)?.get(value);
    if (one !== undefined && one.doc.account_id === account) return one;
  }
  const id = countId(JSON.stringify([scope, day, metric, dim, value]));
  const made: Tally = { op: 'tally', collection: ANALYTICS_COUNTS, doc: { id, scope, account_id: account, day, metric, dim, value }, field: 'count', by };
  if (by !== 1) return made;
  if (onesKept >= IDS_KEPT) {
    ones.clear();
    onesKept = 0;
  }
  let byDay = ones.get(scope);
  if (byDay === undefined) ones.set(scope, (byDay = new Map()));
  let byMetric = byDay.get(day);
  if (byMetric === undefined) byDay.set(day, (byMetric = new Map()));
  let byDim = byMetric.get(metric);
  if (byDim === undefined) byMetric.set(metric, (byDim = new Map()));
  let byValue = byDim.get(dim);
  if (byValue === undefined) byDim.set(dim, (byValue = new Map()));
  Object.freeze(made.doc);
  byValue.set(value, Object.freeze(made));
  onesKept++;
  return made;
}

/** What a response counts in: its total, each breakdown its plan recorded ('' for not known), each whole-number answer. */
export interface ResponseRecord {
  id: string;
  parent_id: string;
  account_id: string;
  day: string;
  /** From the token's issue (the object's load) to the submission; null for a vote. */
  completion_ms: number | null;
  facets: Partial<Record<Facet, string>>;
  scores: Record<string, number>;
  /** An unfinished response's last page: it counts there alone, as stopped. */
  last_page?: string;
}

export function responseTallies(record: ResponseRecord): Tally[] {
  const { parent_id: scope, account_id: account, day } = record;
  if (typeof record.last_page === 'string') return [tally(scope, account, day, 'stopped', 'page', record.last_page, 1)];
  const ops = [tally(scope, account, day, 'response', 'total', '', 1)];
  for (const facet of FACETS) {
    const value = record.facets[facet];
    if (value !== undefined) ops.push(tally(scope, account, day, 'response', facet, value, 1));
  }
  for (const [question, score] of Object.entries(record.scores)) ops.push(tally(scope, account, day, 'score', question, String(score), 1));
  return ops;
}

/** The record of a response, from what it stored: whole-number answers of 0 to 100 only (NPS, ratings, scales), no text. */
export function responseRecord(data: { response_id: string; account_id: string; answers: Record<string, unknown>; metadata: Record<string, unknown>; submitted_at: string }, parentId: string): ResponseRecord {
  const facets: ResponseRecord['facets'] = {};
  for (const facet of FACETS) {
    if (!Object.hasOwn(data.metadata, facet)) continue;
    const value = data.metadata[facet];
    facets[facet] = typeof value === 'string' ? value : '';
  }
  const scores: Record<string, number> = {};
  for (const [question, answer] of Object.entries(data.answers)) if (typeof answer === 'number' && Number.isInteger(answer) && answer >= 0 && answer <= 100) scores[question] = answer;
  const time = data.metadata.completion_time_ms;
  return {
    id: data.response_id,
    parent_id: parentId,
    account_id: data.account_id,
    day: utcDay(data.submitted_at),
    completion_ms: typeof time === 'number' ? time : null,
    facets,
    scores,
  };
}

const isRecord = (doc: Doc): doc is Doc & ResponseRecord =>
  typeof doc.parent_id === 'string' && typeof doc.account_id === 'string' && typeof doc.day === 'string' && typeof doc.facets === 'object' && doc.facets !== null && typeof doc.scores === 'object' && doc.scores !== null;

/** The counters a record counted in (the records collection's `counted`). */
export const recordCounters = (doc: Doc): string[] => (isRecord(doc) ? responseTallies(doc).map((op) => op.doc.id) : []);

const put = (record: ResponseRecord): ReadModelOp[] => [{ op: 'put', collection: ANALYTICS_RESPONSES, doc: { ...record } }, ...responseTallies(record)];
/** Takes back what a response's record counted (an unfinished one's page), before it is replaced. */
const retract = (id: string): ReadModelOp => ({ op: 'retract', collection: ANALYTICS_COUNTS, field: 'count', record: { collection: ANALYTICS_RESPONSES, id } });

export const analyticsProjection: Projection<DomainEvent> = {
  name: 'analytics',
  // 2 counts unfinished responses by their last page.
  version: 2,
  collections: [
    {
      name: ANALYTICS_COUNTS,
      indexes: [
        ['scope', 'day'],
        ['account_id', 'dim', 'day'],
      ],
      indexedColumns: true,
      plainValues: true,
    },
    { name: ANALYTICS_RESPONSES, indexes: [['parent_id', 'day']], indexedColumns: true, counted: recordCounters, plainValues: true },
  ],
  project(event): ReadModelOp[] {
    switch (event.type) {
      case 'SignalsCounted': {
        const { target_id: scope, account_id: account, minute } = event.data;
        const day = utcDay(minute);
        const ops: ReadModelOp[] = [];
        for (const metric of ['display', 'start'] as const) {
          const counts = event.data[metric];
          if (counts.total > 0) ops.push(tally(scope, account, day, metric, 'total', '', counts.total));
          for (const facet of FACETS) {
            for (const [value, n] of Object.entries(counts[facet] ?? {})) if (n > 0) ops.push(tally(scope, account, day, metric, facet, value, n));
          }
        }
        return ops;
      }
      case 'ResponseSubmitted': {
        const parent = event.data.widget_id ?? event.data.form_id;
        if (!parent) return [];
        const record = put(responseRecord(event.data as Parameters<typeof responseRecord>[0], parent));
        // Not first in its stream: it completes an unfinished response, whose page count it takes back.
        return event.revision > 0n ? [retract(event.data.response_id), ...record] : record;
      }
      case 'ResponseProgressed': {
        const { response_id, account_id, form_id, page, progressed_at } = event.data;
        return [retract(response_id), ...put({ id: response_id, parent_id: form_id, account_id, day: utcDay(progressed_at), completion_ms: null, facets: {}, scores: {}, last_page: page })];
      }
      case 'VoteCast': {
        const { vote_id, poll_id, account_id, cast_at } = event.data;
        return put({ id: vote_id, parent_id: poll_id, account_id, day: utcDay(cast_at), completion_ms: null, facets: {}, scores: {} });
      }
      case 'ResponsesErased':
        return event.data.response_ids.flatMap((id): ReadModelOp[] => [
          retract(id),
          { op: 'delete', collection: ANALYTICS_RESPONSES, where: { id } },
        ]);
      default:
        return [];
    }
  },
};
