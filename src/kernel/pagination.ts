import { z } from 'zod';

export const MAX_LIMIT = 100;

/** Digits: what an integer query value looks like (the OpenAPI document types such values as integers). */
export const DIGITS = /^\d+$/;

const PositiveInteger = z
  .string()
  .regex(DIGITS, 'must be a positive integer')
  .transform(Number)
  .refine((n) => Number.isSafeInteger(n) && n >= 1, 'must be a positive integer');

/** Any positive integer, however large: every one above the most a page holds is served as that most. */
const PageSize = z
  .string()
  .regex(DIGITS, 'must be a positive integer')
  .transform((digits) => Math.min(Number(digits), MAX_LIMIT))
  .refine((n) => n >= 1, 'must be a positive integer');

/** D9: positive integers or 400; a limit above 100 is served as 100. */
export const PaginationQuery = z.object({
  page: PositiveInteger.default(1).meta({ description: 'Page number, from 1 (default 1)', minimum: 1 }),
  limit: PageSize.default(50).meta({ description: `Items a page (default 50); above ${MAX_LIMIT} is served as ${MAX_LIMIT}`, minimum: 1 }),
});
export type PaginationQuery = z.infer<typeof PaginationQuery>;

export const Pagination = z.object({
  page: z.number().int(),
  limit: z.number().int(),
  total: z.number().int(),
  totalPages: z.number().int(),
});
export type Pagination = z.infer<typeof Pagination>;

export function pagination(query: PaginationQuery, total: number): Pagination {
  return { page: query.page, limit: query.limit, total, totalPages: Math.ceil(total / query.limit) };
}

/** Offsets past 2^53 are all past the end of any list, so they are held there rather than lose precision. */
export const window = (query: PaginationQuery) => ({ offset: Math.min((query.page - 1) * query.limit, Number.MAX_SAFE_INTEGER), limit: query.limit });
