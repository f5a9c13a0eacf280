import { z } from 'zod';
import { POLL_VOTERS } from '../../projections/polls.js';
import { BREAKDOWNS, COUNT, RESPONSE_SUMMARIES, VOTE_SUMMARIES, counterId, type Counter, type CounterValue, type Dimension, type ParentKind } from '../../projections/response-summaries.js';
import { RESPONSES } from '../../projections/responses.js';
import { EMBEDDABLES, FORM, POLL, WIDGET } from '../embeddables/queries.js';
import type { ReadModelStore } from '../infra/read-models/port.js';
import { SEVERITIES } from '../embeddables/questions.js';

/** Days the per-day figures cover, today (UTC) included. */
export const DAYS = 90;

const Day = z.object({ day: z.string().describe('UTC day, YYYY-MM-DD'), count: z.number().int() });
const ValueCount = z.object({ value: z.union([z.string(), z.number(), z.boolean(), z.null()]), label: z.string().optional(), count: z.number().int() });

export const QuestionSummary = z.object({
  question_id: z.string(),
  title: z.string(),
  type: z.string(),
  /** Answers this question got (a question may be optional, so below the total); absent for text questions, which are not counted. */
  answered: z.number().int().optional(),
  nps: z.object({ score: z.number().int().nullable(), promoters: z.number().int(), passives: z.number().int(), detractors: z.number().int() }).optional(),
  rating: z.object({ average: z.number().nullable(), distribution: z.array(ValueCount) }).optional(),
  choices: z.array(ValueCount).optional(),
  /** Numbers: the mean of the answers, and how many gave each value, ascending. */
  number: z.object({ average: z.number().nullable(), distribution: z.array(ValueCount) }).optional(),
  /** Ranking: each choice's mean place (1 = top), best first. */
  ranking: z.array(z.object({ value: z.string(), label: z.string(), average_rank: z.number().nullable(), count: z.number().int() })).optional(),
  /** Matrix: per row, how many picked each column. */
  matrix: z.array(z.object({ row: z.string(), label: z.string(), answered: z.number().int(), columns: z.array(ValueCount) })).optional(),
  /** Dates: how many answers name each day, oldest first. */
  dates: z.array(Day).optional(),
});

export const ObjectSummary = z.object({
  total: z.number().int(),
  first_at: z.string().nullable(),
  last_at: z.string().nullable(),
  per_day: z.array(Day),
  questions: z.array(QuestionSummary),
  breakdowns: z.object({
    device: z.array(ValueCount),
    browser: z.array(ValueCount),
    country: z.array(ValueCount),
    /** Responses per language the visitor saw (a tag, as `de`), most first; a poll's votes are not counted by language. */
    language: z.array(ValueCount),
  }),
});
export type ObjectSummary = z.infer<typeof ObjectSummary>;

export const Overview = z.object({
  totals: z.object({ widgets: z.number().int(), forms: z.number().int(), polls: z.number().int(), responses: z.number().int() }),
  per_day: z.array(Day),
  latest: z.array(z.object({ id: z.string(), kind: z.enum(['widget', 'form', 'poll']), parent_id: z.string(), parent_title: z.string().nullable(), submitted_at: z.string() })),
});
export type Overview = z.infer<typeof Overview>;

const DAY_MS = 86_400_000;

/** The last DAYS UTC days up to `now`'s, oldest first. */
export function window(now: Date): string[] {
  const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  return Array.from({ length: DAYS }, (_, i) => new Date(today - (DAYS - 1 - i) * DAY_MS).toISOString().slice(0, 10));
}

/** Where an object's counters are: votes' beside the polls, responses' beside the responses. */
const countersOf = (kind: ParentKind): string => (kind === 'poll' ? VOTE_SUMMARIES : RESPONSE_SUMMARIES);

async function counter(store: ReadModelStore, counters: string, scope: string, dim: Dimension, key = '', value: CounterValue = null): Promise<number> {
  const doc = await store.get(counters, counterId(scope, dim, key, value));
  return doc === null ? 0 : Number(doc[COUNT]);
}

async function perDay(store: ReadModelStore, counters: string, scope: string, now: Date): Promise<Array<{ day: string; count: number }>> {
  const days = window(now);
  // At most one counter per day: DAYS documents through the index, whatever the total.
  const found = (await store.find(counters, { scope, dim: 'day' }, { range: { field: 'key', gte: days[0], lte: days.at(-1) } })) as unknown as Counter[];
  const byDay = new Map(found.map((c) => [c.key, c.count]));
  return days.map((day) => ({ day, count: byDay.get(day) ?? 0 }));
}

/**
 * The score of NPS (%promoters − %detractors) as an integer: 100·(P − D)/N
 * computed exactly, rounded half away from zero (12.5 → 13, −12.5 → −13).
 */
export function npsScore(promoters: number, detractors: number, answered: number): number | null {
  if (answered === 0) return null;
  const scaled = 100 * (promoters - detractors);
  const magnitude = Math.abs(scaled);
  const whole = Math.floor(magnitude / answered);
  const rounded = 2 * (magnitude - whole * answered) >= answered ? whole + 1 : whole;
  return scaled < 0 ? -rounded : rounded;
}

/** The mean of `sum` over `count`, rounded half up to 2 decimals in integer arithmetic (no 1.005 → 1.00 surprises). */
export function average(sum: number, count: number): number | null {
  if (count === 0) return null;
  const hundredths = Math.floor((sum * 100) / count);
  const rest = sum * 100 - hundredths * count;
  return (2 * rest >= count ? hundredths + 1 : hundredths) / 100;
}

interface StoredQuestion {
  id: string;
  title: string;
  type: string;
  choices?: Array<{ id: string; label: string }>;
  rows?: Array<{ id: string; label: string }>;
  columns?: Array<{ id: string; label: string }>;
  starRatingSettings?: { maxStars: number };
  start?: number;
  end?: number;
}

/** Distinct values read for a number's or a date's summary: each is one counter. */
const DISTINCT_VALUES = 10_000;

async function questionSummary(store: ReadModelStore, scope: string, question: StoredQuestion): Promise<z.infer<typeof QuestionSummary>> {
  const base = { question_id: question.id, title: question.title, type: question.type };
  // Each question reads the counters of the values its type allows, by id: a bounded number of documents.
  const counts = async (values: Array<string | number | boolean>) =>
    Promise.all(values.map(async (value) => ({ value, count: await counter(store, RESPONSE_SUMMARIES, scope, 'answer', question.id, value) })));
  const answered = (rows: Array<{ count: number }>) => rows.reduce((sum, row) => sum + row.count, 0);
  const labelled = (options: Array<{ id: string; label: string }>, rows: Array<{ value: string | number | boolean; count: number }>) => rows.map((row, i) => ({ ...row, label: options[i]!.label }));
  /** Every counter of a key, with the values they keep (numbers, days, places). */
  const kept = async (dim: Dimension, key: string) =>
    ((await store.find(RESPONSE_SUMMARIES, { scope, dim, key }, { limit: DISTINCT_VALUES })) as unknown as Counter[]).filter((c) => c.value !== null);
  const scale = async (from: number, to: number) => {
    const rows = await counts(Array.from({ length: to - from + 1 }, (_, i) => i + from));
    const n = answered(rows);
    const sum = rows.reduce((s, r) => s + (r.value as number) * r.count, 0);
    return { answered: n, rating: { average: average(sum, n), distribution: rows } };
  };
  switch (question.type) {
    case 'nps': {
      const rows = await counts(Array.from({ length: 11 }, (_, i) => i));
      const sum = (from: number, to: number) => rows.filter((r) => (r.value as number) >= from && (r.value as number) <= to).reduce((s, r) => s + r.count, 0);
      const promoters = sum(9, 10);
      const passives = sum(7, 8);
      const detractors = sum(0, 6);
      const n = answered(rows);
      return { ...base, answered: n, nps: { score: npsScore(promoters, detractors, n), promoters, passives, detractors } };
    }
    case 'star_rating':
      return { ...base, ...(await scale(1, question.starRatingSettings?.maxStars ?? 5)) };
    case 'opinion_scale':
      return { ...base, ...(await scale(question.start ?? 1, question.end ?? 5)) };
    case 'single_choice': {
      const choices = question.choices ?? [];
      const rows = await counts(choices.map((c) => c.id));
      return { ...base, answered: answered(rows), choices: labelled(choices, rows) };
    }
    case 'yes_no': {
      const rows = await counts([true, false]);
      return { ...base, answered: answered(rows), choices: rows };
    }
    case 'multiple_choice': {
      const choices = question.choices ?? [];
      const [n, rows] = await Promise.all([counter(store, RESPONSE_SUMMARIES, scope, 'answered', question.id), counts(choices.map((c) => c.id))]);
      return { ...base, answered: n, choices: labelled(choices, rows) };
    }
    case 'ranking': {
      const choices = question.choices ?? [];
      const [n, places] = await Promise.all([
        counter(store, RESPONSE_SUMMARIES, scope, 'answered', question.id),
        Promise.all(choices.map((c) => kept('rank', `${question.id}.${c.id}`))),
      ]);
      const ranking = choices.map((c, i) => {
        const found = places[i]!;
        const count = found.reduce((sum, p) => sum + p.count, 0);
        return { value: c.id, label: c.label, average_rank: average(found.reduce((sum, p) => sum + Number(p.value) * p.count, 0), count), count };
      });
      ranking.sort((a, b) => (a.average_rank ?? Infinity) - (b.average_rank ?? Infinity));
      return { ...base, answered: n, ranking };
    }
    case 'matrix': {
      const columns = question.columns ?? [];
      const [n, matrix] = await Promise.all([
        counter(store, RESPONSE_SUMMARIES, scope, 'answered', question.id),
        Promise.all(
          (question.rows ?? []).map(async (row) => {
            const cells = await Promise.all(columns.map(async (c) => ({ value: c.id, label: c.label, count: await counter(store, RESPONSE_SUMMARIES, scope, 'answer', `${question.id}.${row.id}`, c.id) })));
            return { row: row.id, label: row.label, answered: answered(cells), columns: cells };
          }),
        ),
      ]);
      return { ...base, answered: n, matrix };
    }
    case 'number': {
      const values = (await kept('answer', question.id)).filter((c) => typeof c.value === 'number');
      values.sort((a, b) => (a.value as number) - (b.value as number));
      const n = answered(values);
      const sum = values.reduce((s, c) => s + (c.value as number) * c.count, 0);
      // A number question takes any finite number: near the largest ones the sum (or its hundredths) overflows, so their mean is taken share by share.
      const mean = Number.isFinite(sum * 100) ? average(sum, n) : n === 0 ? null : values.reduce((m, c) => m + ((c.value as number) / n) * c.count, 0);
      return { ...base, answered: n, number: { average: mean, distribution: values.map((c) => ({ value: c.value, count: c.count })) } };
    }
    case 'date': {
      const days = (await kept('answer', question.id)).filter((c) => typeof c.value === 'string');
      days.sort((a, b) => String(a.value).localeCompare(String(b.value)));
      return { ...base, answered: answered(days), dates: days.map((c) => ({ day: String(c.value), count: c.count })) };
    }
    case 'severity': {
      const rows = await counts([...SEVERITIES]);
      return { ...base, answered: answered(rows), choices: rows };
    }
    case 'consent': {
      const rows = await counts([true, false]);
      return { ...base, answered: answered(rows), choices: rows };
    }
    default:
      // Text, email, phone and URL answers are read in the responses, not counted per value; a statement takes none.
      return base;
  }
}

async function breakdown(store: ReadModelStore, counters: string, scope: string, dim: (typeof BREAKDOWNS)[number] | 'language') {
  // Bounded by the values a field can take (3 devices, the browsers a parser knows, ~250 countries).
  const found = (await store.find(counters, { scope, dim }, { limit: 1000 })) as unknown as Counter[];
  return found
    .map((c) => ({ value: c.value, count: c.count }))
    .sort((a, b) => b.count - a.count || String(a.value).localeCompare(String(b.value)));
}

/** Where each kind's responses (or votes) are, with the fields that name their parent and their time. */
const RECORDS = {
  // Complete responses only: a parent's rank in its own listing (partial ones rank apart).
  response: { collection: RESPONSES, parent: 'listing', at: 'submitted_at' },
  vote: { collection: POLL_VOTERS, parent: 'poll_id', at: 'cast_at' },
} as const;

async function firstAndLast(store: ReadModelStore, kind: ParentKind, parentId: string): Promise<{ first_at: string | null; last_at: string | null }> {
  const records = RECORDS[kind === 'poll' ? 'vote' : 'response'];
  const edge = async (direction: 1 | -1) => {
    const [record] = await store.find(records.collection, { [records.parent]: parentId }, { sort: [[records.at, direction], ['id', direction]], limit: 1 });
    const at = record?.[records.at];
    return typeof at === 'string' ? at : null;
  };
  const [first_at, last_at] = await Promise.all([edge(1), edge(-1)]);
  return { first_at, last_at };
}

/**
 * The summary of one object (a widget, form or poll), read from the
 * counters: a bounded number of documents whatever the total. Questions are
 * the object's current ones; answers kept under a question id it no longer
 * has are not shown.
 */
export async function objectSummary(store: ReadModelStore, kind: ParentKind, object: Record<string, unknown> & { id: string }, now: Date): Promise<ObjectSummary> {
  const scope = object.id;
  const counters = countersOf(kind);
  const [total, edges, per_day] = await Promise.all([counter(store, counters, scope, 'total'), firstAndLast(store, kind, scope), perDay(store, counters, scope, now)]);
  let questions: ObjectSummary['questions'];
  if (kind === 'poll') {
    const options = (object.options ?? []) as Array<{ id: string; text: string }>;
    const rows = await Promise.all(options.map(async (option) => ({ value: option.id, label: option.text, count: await counter(store, counters, scope, 'option', option.id) })));
    questions = [{ question_id: 'options', title: String(object.question ?? ''), type: 'poll', answered: total, choices: rows }];
  } else {
    questions = await Promise.all(((object.questions ?? []) as StoredQuestion[]).map((question) => questionSummary(store, scope, question)));
  }
  const [device, browser, country, language] = await Promise.all([...BREAKDOWNS, 'language' as const].map((dim) => breakdown(store, counters, scope, dim)));
  return { total, ...edges, per_day, questions, breakdowns: { device: device!, browser: browser!, country: country!, language: language! } };
}

const TITLE_FIELD: Record<ParentKind, string> = { widget: 'title', form: 'title', poll: 'question' };
const LATEST = 10;

/** The account's figures for the dashboard's overview; the responses counted are widgets' and forms' responses and polls' votes. */
export async function overview(store: ReadModelStore, accountId: string, now: Date): Promise<Overview> {
  const latestOf = (records: (typeof RECORDS)[keyof typeof RECORDS]) =>
    store.find(records.collection, { account_id: accountId }, { sort: [[records.at, -1], ['id', -1]], limit: LATEST });
  const [widgets, forms, polls, responses, votes, responseDays, voteDays, latestResponses, latestVotes] = await Promise.all([
    store.count(WIDGET.summaries, { account_id: accountId }),
    store.count(FORM.summaries, { account_id: accountId }),
    store.count(POLL.summaries, { account_id: accountId }),
    counter(store, RESPONSE_SUMMARIES, accountId, 'total'),
    counter(store, VOTE_SUMMARIES, accountId, 'total'),
    perDay(store, RESPONSE_SUMMARIES, accountId, now),
    perDay(store, VOTE_SUMMARIES, accountId, now),
    latestOf(RECORDS.response),
    latestOf(RECORDS.vote),
  ]);
  const newest = [
    ...latestResponses.map((doc) => ({ id: doc.id, kind: (doc.widget_id === undefined ? 'form' : 'widget') as ParentKind, parent_id: String(doc.parent_id), at: String(doc.submitted_at) })),
    ...latestVotes.map((doc) => ({ id: doc.id, kind: 'poll' as ParentKind, parent_id: String(doc.poll_id), at: String(doc.cast_at) })),
  ]
    .sort((a, b) => (a.at === b.at ? (a.id < b.id ? 1 : -1) : a.at < b.at ? 1 : -1))
    .slice(0, LATEST);
  const latest = await Promise.all(
    newest.map(async (record) => {
      const parent = await store.get(EMBEDDABLES[record.kind].summaries, record.parent_id);
      const title = parent?.[TITLE_FIELD[record.kind]];
      return { id: record.id, kind: record.kind, parent_id: record.parent_id, parent_title: typeof title === 'string' ? title : null, submitted_at: record.at };
    }),
  );
  const per_day = responseDays.map((day, i) => ({ day: day.day, count: day.count + voteDays[i]!.count }));
  return { totals: { widgets, forms, polls, responses: responses + votes }, per_day, latest };
}
