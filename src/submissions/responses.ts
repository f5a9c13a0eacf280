import { z } from 'zod';
import { RESPONSES } from '../../projections/responses.js';
import { decodeCursor, encodeCursor } from '../kernel/cursor.js';
import { Pagination, PaginationQuery, pagination, window } from '../kernel/pagination.js';
import { isoInstant } from '../kernel/instant.js';
import { Answers } from '../embeddables/questions.js';
import type { Context } from '../kernel/context.js';
import { ConsentRecord } from './events.js';
import { ResponseMetadata } from './metadata.js';

/** Spec 2.6: a response record as the API shows it (the owner's account id stays inside). */
export const ResponseRecord = z.object({
  id: z.string(),
  widget_id: z.string().optional(),
  form_id: z.string().optional(),
  answers: Answers,
  /** The hidden fields' values the submission carried, by name; absent when it carried none. */
  hidden: z.record(z.string(), z.string()).optional(),
  submitted_at: z.string(),
  metadata: ResponseMetadata,
  consent_record: ConsentRecord.optional(),
});

/** An ISO 8601 time, compared with `submitted_at` in UTC to the millisecond. */
const Time = isoInstant('must be an ISO 8601 time such as 2026-11-22T10:00:00Z').transform((value) => new Date(value).toISOString());

/** `since` and `until`: ISO times, inclusive, compared in UTC to the millisecond. */
export const TimeRange = z.object({
  since: Time.optional().describe('Only responses submitted at or after this time'),
  until: Time.optional().describe('Only responses submitted at or before this time'),
});

/**
 * A range that cannot hold anything is the caller's mistake: an empty list
 * (or file) for it would pass for "no responses". Both ends are in UTC by
 * now, so their text orders them.
 */
export const inOrder = <T extends z.infer<typeof TimeRange>>(range: z.ZodType<T>) =>
  range.refine((query) => !query.since || !query.until || query.since <= query.until, { message: 'must not be after until', path: ['since'] });

export const ResponsesQuery = inOrder(
  PaginationQuery.extend({
    cursor: z.string().max(512).optional().describe('`pagination.next_cursor` of the page before; takes the place of `page`'),
    ...TimeRange.shape,
  }),
);
export type ResponsesQuery = z.infer<typeof ResponsesQuery>;

export const ResponsePagination = Pagination.extend({
  page: z.number().int().nullable().describe('The page number; null for a page asked for by `cursor`, which names where its page starts, not a page number'),
  next_cursor: z.string().nullable().describe('Pass as `cursor` for the page after this one; null on the last page'),
});

export const ResponseList = z.object({ responses: z.array(ResponseRecord), pagination: ResponsePagination });

/** The order cursors walk: newest submission first, the id breaking ties. */
const KEYSET = [['submitted_at', -1], ['id', -1]] satisfies Array<[string, -1]>;

/**
 * D9: newest first, in the order the service recorded them; any page costs
 * what page 1 costs. With `cursor`, `since` or `until`, the list is read by
 * (submitted_at, id) from where the cursor points, through the read model's
 * index on (parent_id, submitted_at, id): a walk by `next_cursor` meets each
 * response once however many arrive or are erased meanwhile.
 */
export async function listResponses(services: Context, parentId: string, query: ResponsesQuery): Promise<z.input<typeof ResponseList>> {
  const next = (docs: Array<Record<string, unknown>>, more: boolean): string | null => {
    const last = docs.at(-1);
    return more && last ? encodeCursor(services.keys.cursors, [String(last.submitted_at), String(last.id)]) : null;
  };
  if (query.cursor === undefined && query.since === undefined && query.until === undefined) {
    const { docs, total } = await services.readModels.newestFirst(RESPONSES, parentId, window(query));
    const { offset } = window(query);
    // The read model keeps the personal fields sealed: opened as served (an erased one is left out).
    const shown = await services.personal.reveal(docs);
    return { responses: shown as unknown as z.input<typeof ResponseRecord>[], pagination: { ...pagination(query, total), next_cursor: next(docs, offset + docs.length < total) } };
  }
  const after = query.cursor === undefined ? undefined : decodeCursor(services.keys.cursors, query.cursor);
  const range = { field: 'submitted_at', ...(query.since ? { gte: query.since } : {}), ...(query.until ? { lte: query.until } : {}) };
  const page = after
    ? { limit: query.limit + 1, after }
    : { ...window(query), limit: query.limit + 1 };
  const [found, total] = await Promise.all([
    services.readModels.find(RESPONSES, { parent_id: parentId }, { sort: KEYSET, range, ...page }),
    services.readModels.count(RESPONSES, { parent_id: parentId }, range),
  ]);
  // One more than the page asks for tells whether a page follows, without counting what remains.
  const docs = found.slice(0, query.limit);
  return {
    responses: (await services.personal.reveal(docs)) as unknown as z.input<typeof ResponseRecord>[],
    pagination: { ...pagination(query, total), ...(after ? { page: null } : {}), next_cursor: next(docs, found.length > query.limit) },
  };
}
