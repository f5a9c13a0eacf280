import { createHash } from 'node:crypto';
import type { DomainEvent } from '../src/domain-events.js';
import type { Doc, ReadModelOp } from '../src/infra/read-models/port.js';
import type { Projection } from '../src/kernel/feed/projection.js';
import { utcDay } from './response-summaries.js';

/**
 * The funnel of each object by day: displays and starts (from the counts the
 * embed reports, `SignalsCounted`), responses (widgets' and forms'
 * responses, polls' votes), each in total and by the breakdowns the plan
 * recorded, and numeric answers (NPS, ratings) by value. A small record of
 * each response beside them holds its completion time (for medians) and
 * what it counted in, so an erasure takes back exactly what it added (the
 * port's retract): after an erasure the counters are what a rebuild builds.
 */
export const ANALYTICS_COUNTS = 'analytics_counts';
export const ANALYTICS_RESPONSES = 'analytics_responses';

export type Metric = 'display' | 'start' | 'response' | 'score';
/** The breakdowns, as the response metadata names them. */
export const FACETS = ['device', 'referer_domain', 'country', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
export type Facet = (typeof FACETS)[number];
/** `total`, a breakdown, or (for a score) the question's id. */
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

function tally(scope: string, account: string, day: string, metric: Metric, dim: CountDim, value: string, by: number): Tally {
  const id = countId(JSON.stringify([scope, day, metric, dim, value]));
  return { op: 'tally', collection: ANALYTICS_COUNTS, doc: { id, scope, account_id: account, day, metric, dim, value }, field: 'count', by };
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
}

export function responseTallies(record: ResponseRecord): Tally[] {
  const { parent_id: scope, account_id: account, day } = record;
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

export const analyticsProjection: Projection<DomainEvent> = {
  name: 'analytics',
  version: 1,
  collections: [
    {
      name: ANALYTICS_COUNTS,
      indexes: [
        ['scope', 'day'],
        ['account_id', 'dim', 'day'],
      ],
      indexedColumns: true,
    },
    { name: ANALYTICS_RESPONSES, indexes: [['parent_id', 'day']], indexedColumns: true, counted: recordCounters },
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
        return put(responseRecord(event.data as Parameters<typeof responseRecord>[0], parent));
      }
      case 'VoteCast': {
        const { vote_id, poll_id, account_id, cast_at } = event.data;
        return put({ id: vote_id, parent_id: poll_id, account_id, day: utcDay(cast_at), completion_ms: null, facets: {}, scores: {} });
      }
      case 'ResponsesErased':
        return event.data.response_ids.flatMap((id): ReadModelOp[] => [
          { op: 'retract', collection: ANALYTICS_COUNTS, field: 'count', record: { collection: ANALYTICS_RESPONSES, id } },
          { op: 'delete', collection: ANALYTICS_RESPONSES, where: { id } },
        ]);
      default:
        return [];
    }
  },
};
