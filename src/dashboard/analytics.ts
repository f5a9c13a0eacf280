import { z } from 'zod';
import { ANALYTICS_COUNTS, ANALYTICS_RESPONSES, FACETS, type AnalyticsCount, type Facet } from '../../projections/analytics.js';
import type { ParentKind } from '../../projections/response-summaries.js';
import { EMBEDDABLES } from '../embeddables/queries.js';
import type { ReadModelStore } from '../infra/read-models/port.js';
import { AppError } from '../kernel/errors.js';
import { average, npsScore } from './summaries.js';

const DAY_MS = 86_400_000;
/** The longest range shown at once, in days. */
export const MAX_DAYS = 366;
/** The range shown when none is asked for: the last 30 days, today (UTC) included. */
const DEFAULT_DAYS = 30;
/** The most documents one read takes: the counters of a range are bounded by days × breakdown values. */
const READ_LIMIT = 200_000;

const DayText = z.string().regex(/^\d{4}-\d{2}-\d{2}$/, 'a day as YYYY-MM-DD');
export const AnalyticsQuery = z.object({ from: DayText.optional(), to: DayText.optional() });
export type AnalyticsQuery = z.infer<typeof AnalyticsQuery>;

const Rate = z.number().nullable().describe('a fraction from 0, null when there was nothing to divide by');
const Funnel = z.object({ displays: z.number().int(), starts: z.number().int(), responses: z.number().int(), start_rate: Rate, completion_rate: Rate });
const Range = z.object({ from: z.string(), to: z.string() });
const Split = z.object({ value: z.string(), displays: z.number().int(), starts: z.number().int(), responses: z.number().int(), start_rate: Rate, completion_rate: Rate });

const DropOff = z
  .object({
    keeps_partial: z.boolean(),
    pages: z.array(z.object({ page_id: z.string(), title: z.string().nullable(), removed: z.boolean(), stopped: z.number().int(), share: Rate })),
    sent: z.number().int(),
    sent_share: Rate,
  })
  .nullable();

export const ObjectAnalytics = z.object({
  range: Range,
  previous_range: Range,
  funnel: Funnel,
  previous: Funnel,
  median_completion_ms: z.number().int().nullable(),
  previous_median_completion_ms: z.number().int().nullable(),
  per_day: z.array(Funnel.extend({ day: z.string(), median_completion_ms: z.number().int().nullable() })),
  /** By each breakdown the plan recorded; '' is a value not known. */
  by: z.object(Object.fromEntries(FACETS.map((facet) => [facet, z.array(Split)])) as Record<Facet, z.ZodArray<typeof Split>>),
  /** NPS and rating questions by week (weeks start on Monday, UTC). */
  trends: z.array(
    z.object({
      question_id: z.string(),
      title: z.string(),
      type: z.enum(['nps', 'rating']),
      weeks: z.array(z.object({ week: z.string(), answered: z.number().int(), value: z.number().nullable() })),
    }),
  ),
  /**
   * A form's visits in the range by where they ended: each page with the unfinished responses whose last page it was,
   * and the responses sent; each share of their sum. Null for widgets and polls.
   */
  drop_off: DropOff,
});
export type ObjectAnalytics = z.infer<typeof ObjectAnalytics>;

const ObjectRow = z.object({ id: z.string(), kind: z.enum(['widget', 'form', 'poll']), title: z.string(), ...Funnel.shape });
export const AccountAnalytics = z.object({
  range: Range,
  previous_range: Range,
  funnel: Funnel,
  previous: Funnel,
  objects: z.array(ObjectRow),
  /** The objects displayed at least once in the range, highest completion rate first, then lowest: at most 5 each. */
  best: z.array(ObjectRow),
  worst: z.array(ObjectRow),
});
export type AccountAnalytics = z.infer<typeof AccountAnalytics>;

const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);
const rate = (part: number, whole: number): number | null => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

/** The first and last day a range may name: times are kept from 1970 on, and four-digit years keep days comparable as text. */
const FIRST_DAY = '1970-01-01';
const LAST_DAY = '9999-12-31';

/** The range asked for (or the last 30 days), and the one as long just before it. */
export function ranges(query: AnalyticsQuery, now: Date): { range: { from: string; to: string }; previous_range: { from: string; to: string }; days: number } {
  const refuse = (field: 'from' | 'to', message: string): never => {
    throw new AppError('validation_error', `${field} ${message}`, [{ path: `querystring.${field}`, message }]);
  };
  const to = query.to ?? dayOf(now.getTime());
  const toMs = Date.parse(`${to}T00:00:00Z`);
  if (Number.isNaN(toMs) || dayOf(toMs) !== to) refuse('to', 'must be a calendar day');
  if (to < FIRST_DAY || to > LAST_DAY) refuse('to', `must be a day from ${FIRST_DAY} to ${LAST_DAY}`);
  const fromMs = query.from !== undefined ? Date.parse(`${query.from}T00:00:00Z`) : toMs - (DEFAULT_DAYS - 1) * DAY_MS;
  if (query.from !== undefined && (Number.isNaN(fromMs) || dayOf(fromMs) !== query.from)) refuse('from', 'must be a calendar day');
  const from = dayOf(fromMs);
  if (from < FIRST_DAY || from > LAST_DAY) refuse('from', `must be a day from ${FIRST_DAY} to ${LAST_DAY}`);
  if (fromMs > toMs) refuse('from', 'must not be after to');
  const days = (toMs - fromMs) / DAY_MS + 1;
  if (days > MAX_DAYS) refuse('from', `must be at most ${MAX_DAYS} days before to (the range includes both)`);
  return { range: { from, to }, previous_range: { from: dayOf(fromMs - days * DAY_MS), to: dayOf(fromMs - DAY_MS) }, days };
}

function funnel(displays: number, starts: number, responses: number): z.infer<typeof Funnel> {
  return { displays, starts, responses, start_rate: rate(starts, displays), completion_rate: rate(responses, displays) };
}

/** The middle value (the mean of the two middle ones, rounded, for an even count); null for none. */
export function median(values: number[]): number | null {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

/** Monday of the day's week (UTC). */
const weekOf = (day: string): string => {
  const ms = Date.parse(`${day}T00:00:00Z`);
  return dayOf(ms - ((new Date(ms).getUTCDay() + 6) % 7) * DAY_MS);
};

interface Sums {
  display: number;
  start: number;
  response: number;
}
const zero = (): Sums => ({ display: 0, start: 0, response: 0 });
const add = (into: Map<string, Sums>, key: string, metric: string, count: number) => {
  if (metric !== 'display' && metric !== 'start' && metric !== 'response') return;
  let sums = into.get(key);
  if (sums === undefined) into.set(key, (sums = zero()));
  sums[metric] += count;
};
const asFunnel = (sums: Sums | undefined) => funnel(sums?.display ?? 0, sums?.start ?? 0, sums?.response ?? 0);

interface StoredQuestion {
  id: string;
  title: string;
  type: string;
}

/** One object's funnel, splits and trends over the range, beside the previous period's funnel. */
export async function objectAnalytics(store: ReadModelStore, kind: ParentKind, object: Record<string, unknown> & { id: string }, query: AnalyticsQuery, now: Date): Promise<ObjectAnalytics> {
  const { range, previous_range } = ranges(query, now);
  const [counts, records] = await Promise.all([
    store.find(ANALYTICS_COUNTS, { scope: object.id }, { range: { field: 'day', gte: previous_range.from, lte: range.to }, limit: READ_LIMIT }) as unknown as Promise<AnalyticsCount[]>,
    store.find(ANALYTICS_RESPONSES, { parent_id: object.id }, { range: { field: 'day', gte: previous_range.from, lte: range.to }, limit: READ_LIMIT }),
  ]);
  const inRange = (day: string) => day >= range.from && day <= range.to;
  const days = new Map<string, Sums>();
  const periods = new Map<string, Sums>();
  const splits = new Map<Facet, Map<string, Sums>>(FACETS.map((facet) => [facet, new Map()]));
  const stopped = new Map<string, number>();
  const scores = new Map<string, Map<string, Map<number, number>>>();
  for (const c of counts) {
    const current = inRange(c.day);
    if (c.dim === 'total') {
      add(periods, current ? 'now' : 'before', c.metric, c.count);
      if (current) add(days, c.day, c.metric, c.count);
    } else if (!current) continue;
    else if (c.metric === 'stopped') stopped.set(c.value, (stopped.get(c.value) ?? 0) + c.count);
    else if (c.metric === 'score') {
      const byWeek = scores.get(c.dim) ?? new Map<string, Map<number, number>>();
      scores.set(c.dim, byWeek);
      const week = weekOf(c.day);
      const values = byWeek.get(week) ?? new Map<number, number>();
      byWeek.set(week, values);
      values.set(Number(c.value), (values.get(Number(c.value)) ?? 0) + c.count);
    } else {
      const split = splits.get(c.dim as Facet);
      if (split) add(split, c.value, c.metric, c.count);
    }
  }
  const times = new Map<string, number[]>();
  const timesBefore: number[] = [];
  for (const record of records) {
    const ms = record.completion_ms;
    if (typeof ms !== 'number') continue;
    const day = String(record.day);
    if (!inRange(day)) timesBefore.push(ms);
    else (times.get(day) ?? times.set(day, []).get(day)!).push(ms);
  }
  const per_day: ObjectAnalytics['per_day'] = [];
  for (let ms = Date.parse(`${range.from}T00:00:00Z`); ms <= Date.parse(`${range.to}T00:00:00Z`); ms += DAY_MS) {
    const day = dayOf(ms);
    per_day.push({ day, ...asFunnel(days.get(day)), median_completion_ms: median(times.get(day) ?? []) });
  }
  const by = Object.fromEntries(
    FACETS.map((facet) => [
      facet,
      [...splits.get(facet)!.entries()]
        .map(([value, sums]) => ({ value, ...asFunnel(sums) }))
        .sort((a, b) => b.responses - a.responses || b.displays - a.displays || a.value.localeCompare(b.value)),
    ]),
  ) as ObjectAnalytics['by'];
  return {
    range,
    previous_range,
    funnel: asFunnel(periods.get('now')),
    previous: asFunnel(periods.get('before')),
    median_completion_ms: median([...times.values()].flat()),
    previous_median_completion_ms: median(timesBefore),
    per_day,
    by,
    trends: trends((object.questions ?? []) as StoredQuestion[], scores, range),
    drop_off: kind === 'form' ? dropOff(object, stopped, periods.get('now')?.response ?? 0) : null,
  };
}

/** The form's pages in order, then any page counted that the form no longer has (`removed`). */
function dropOff(form: Record<string, unknown>, stopped: Map<string, number>, sent: number): NonNullable<ObjectAnalytics['drop_off']> {
  const pages = Array.isArray(form.pages) ? (form.pages as Array<{ id: string; title?: string }>) : [];
  const known = new Set(pages.map((page) => page.id));
  const rows = [
    ...pages.map((page) => ({ page_id: page.id, title: page.title ?? null, removed: false })),
    ...[...stopped.keys()].filter((id) => !known.has(id)).sort().map((id) => ({ page_id: id, title: null, removed: true })),
  ];
  const total = sent + [...stopped.values()].reduce((sum, n) => sum + n, 0);
  const settings = form.settings as { keep_partial?: boolean } | undefined;
  return {
    keeps_partial: settings?.keep_partial === true,
    pages: rows.map((row) => ({ ...row, stopped: stopped.get(row.page_id) ?? 0, share: rate(stopped.get(row.page_id) ?? 0, total) })),
    sent,
    sent_share: rate(sent, total),
  };
}

function trends(questions: StoredQuestion[], scores: Map<string, Map<string, Map<number, number>>>, range: { from: string; to: string }): ObjectAnalytics['trends'] {
  const weeks: string[] = [];
  // By the clock, not by the days' text: a week past year 9999 is no day of four digits.
  const end = Date.parse(`${range.to}T00:00:00Z`);
  for (let week = Date.parse(`${weekOf(range.from)}T00:00:00Z`); week <= end; week += 7 * DAY_MS) weeks.push(dayOf(week));
  return questions
    .filter((q) => q.type === 'nps' || q.type === 'star_rating' || q.type === 'opinion_scale')
    .map((question) => {
      const type = question.type === 'nps' ? ('nps' as const) : ('rating' as const);
      const byWeek = scores.get(question.id);
      return {
        question_id: question.id,
        title: question.title,
        type,
        weeks: weeks.map((week) => {
          const values = [...(byWeek?.get(week) ?? new Map<number, number>()).entries()];
          const answered = values.reduce((s, [, n]) => s + n, 0);
          if (type === 'nps') {
            const within = (lo: number, hi: number) => values.filter(([v]) => v >= lo && v <= hi).reduce((s, [, n]) => s + n, 0);
            return { week, answered, value: npsScore(within(9, 10), within(0, 6), answered) };
          }
          return { week, answered, value: average(values.reduce((s, [v, n]) => s + v * n, 0), answered) };
        }),
      };
    });
}

const TITLE: Record<ParentKind, string> = { widget: 'title', form: 'title', poll: 'question' };

/** The account's funnel over the range beside the previous period's, and each object's, best and worst converting first. */
export async function accountAnalytics(store: ReadModelStore, accountId: string, query: AnalyticsQuery, now: Date): Promise<AccountAnalytics> {
  const { range, previous_range } = ranges(query, now);
  const [counts, ...kinds] = await Promise.all([
    store.find(ANALYTICS_COUNTS, { account_id: accountId, dim: 'total' }, { range: { field: 'day', gte: previous_range.from, lte: range.to }, limit: READ_LIMIT }) as unknown as Promise<AnalyticsCount[]>,
    ...(['widget', 'form', 'poll'] as const).map(async (kind) => ({ kind, docs: await store.find(EMBEDDABLES[kind].summaries, { account_id: accountId }, { limit: READ_LIMIT }) })),
  ]);
  const periods = new Map<string, Sums>();
  const objects = new Map<string, Sums>();
  for (const c of counts) {
    const current = c.day >= range.from && c.day <= range.to;
    add(periods, current ? 'now' : 'before', c.metric, c.count);
    if (current) add(objects, c.scope, c.metric, c.count);
  }
  const rows = kinds
    .flatMap(({ kind, docs }) => docs.map((doc) => ({ id: doc.id, kind, title: typeof doc[TITLE[kind]] === 'string' ? (doc[TITLE[kind]] as string) : '', ...asFunnel(objects.get(doc.id)) })))
    .sort((a, b) => b.responses - a.responses || b.displays - a.displays || a.id.localeCompare(b.id));
  const displayed = rows.filter((row) => row.displays > 0);
  const byRate = [...displayed].sort((a, b) => b.completion_rate! - a.completion_rate! || b.displays - a.displays || a.id.localeCompare(b.id));
  const best = byRate.slice(0, 5);
  const worst = byRate.reverse().filter((row) => !best.includes(row) || byRate.length <= 5).slice(0, 5);
  return { range, previous_range, funnel: asFunnel(periods.get('now')), previous: asFunnel(periods.get('before')), objects: rows, best, worst };
}
