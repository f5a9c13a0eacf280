import { z } from 'zod';
import { partialListing, RESPONSES } from '../../projections/responses.js';
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
  /** The ending the visitor's path reached, by id; null: the default ending (`thank_you_title`, `thank_you_message`). */
  ending: z.string().nullable().optional(),
  /** The language the visitor saw the object in; absent on responses recorded before objects had languages, which were in English. */
  language: z.string().optional(),
  /** `complete`: submitted; `partial`: pages kept of a visit not (yet) submitted, on a form with `keep_partial`. */
  status: z.enum(['complete', 'partial']),
  /** A partial response's last page sent, by id; null for a complete one. */
  last_page: z.string().nullable(),
  /** When it was submitted; for a partial response, when its last page was sent. */
  submitted_at: z.string(),
  /** What the service captured of the visitor at the submission; absent on a partial response. */
  metadata: ResponseMetadata.optional(),
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

/** Which responses a list (or a download) holds: complete ones by default. */
export const StatusQuery = z.object({
  status: z.enum(['complete', 'partial', 'all']).default('complete').describe('`complete` (the default): submitted responses; `partial`: the pages kept of visits not submitted (forms with `keep_partial`); `all`: both'),
});
export type ResponseStatus = z.infer<typeof StatusQuery>['status'];

/**
 * The filter and the ranked listing of a status: complete and partial
 * responses each rank in a listing of their own, so either is read by rank;
 * `all` reads the parent's index by time.
 */
export function statusFilter(parentId: string, status: ResponseStatus): { filter: { parent_id: string } | { listing: string }; listing: string | null } {
  if (status === 'all') return { filter: { parent_id: parentId }, listing: null };
  const listing = status === 'partial' ? partialListing(parentId) : parentId;
  return { filter: { listing }, listing };
}

/** A stored response as the API shows it: a complete one's status and last page are not stored. */
export const shown = (doc: Record<string, unknown>): Record<string, unknown> => ({ ...doc, status: doc.status ?? 'complete', last_page: doc.last_page ?? null });

export const ResponsesQuery = inOrder(
  PaginationQuery.extend({
    ...StatusQuery.shape,
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
 * D9: newest first, in the order the service recorded them; any page of
 * complete (or of partial) responses costs what page 1 costs; `all` is
 * read by time through the parent's index. With `cursor`, `since` or `until`, the list is read by
 * (submitted_at, id) from where the cursor points, through the read model's
 * index on (parent_id, submitted_at, id): a walk by `next_cursor` meets each
 * response once however many arrive or are erased meanwhile.
 */
export async function listResponses(services: Context, parentId: string, query: ResponsesQuery): Promise<z.input<typeof ResponseList>> {
  const next = (docs: Array<Record<string, unknown>>, more: boolean): string | null => {
    const last = docs.at(-1);
    return more && last ? encodeCursor(services.keys.cursors, [String(last.submitted_at), String(last.id)]) : null;
  };
  const { filter, listing } = statusFilter(parentId, query.status);
  if (listing !== null && query.cursor === undefined && query.since === undefined && query.until === undefined) {
    const { docs, total } = await services.readModels.newestFirst(RESPONSES, listing, window(query));
    const { offset } = window(query);
    // The read model keeps the personal fields sealed: opened as served (an erased one is left out).
    const opened = await services.personal.reveal(docs);
    return { responses: opened.map(shown) as unknown as z.input<typeof ResponseRecord>[], pagination: { ...pagination(query, total), next_cursor: next(docs, offset + docs.length < total) } };
  }
  const after = query.cursor === undefined ? undefined : decodeCursor(services.keys.cursors, query.cursor);
  const range = { field: 'submitted_at', ...(query.since ? { gte: query.since } : {}), ...(query.until ? { lte: query.until } : {}) };
  const page = after
    ? { limit: query.limit + 1, after }
    : { ...window(query), limit: query.limit + 1 };
  const [found, total] = await Promise.all([
    services.readModels.find(RESPONSES, filter, { sort: KEYSET, range, ...page }),
    services.readModels.count(RESPONSES, filter, range),
  ]);
  // One more than the page asks for tells whether a page follows, without counting what remains.
  const docs = found.slice(0, query.limit);
  return {
    responses: (await services.personal.reveal(docs)).map(shown) as unknown as z.input<typeof ResponseRecord>[],
    pagination: { ...pagination(query, total), ...(after ? { page: null } : {}), next_cursor: next(docs, found.length > query.limit) },
  };
}
