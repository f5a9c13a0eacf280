import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { STATUS, type ErrorCode, type ErrorDetail } from '../kernel/errors.js';

/** D3: the one error body, described once for the OpenAPI document. */
export const ErrorBody = z.object({
  statusCode: z.number().int(),
  code: z.enum(Object.keys(STATUS) as [ErrorCode, ...ErrorCode[]]),
  error: z.string(),
  message: z.string(),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

/**
 * D3: every error leaves in Fastify's shape with our code. This is the one
 * place where errors become HTTP; nothing from a driver, SQLite or a stack
 * trace gets past it.
 */
export function errorBody(code: ErrorCode, message: string, details?: ErrorDetail[]): ErrorBody {
  const statusCode = STATUS[code];
  return { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message, ...(details ? { details: atMost(details) } : {}) };
}

/**
 * The details a reply lists at most: a body of 150,000 wrong values made a
 * 400 of 18 MB, sent to whoever asked, before this. The rest are counted in
 * a last detail at the path of the first one left out.
 */
export const MAX_DETAILS = 100;

function atMost(details: ErrorDetail[]): ErrorDetail[] {
  if (details.length <= MAX_DETAILS) return details;
  const left = details.length - MAX_DETAILS;
  return [...details.slice(0, MAX_DETAILS), { path: details[MAX_DETAILS]!.path, message: `and ${left.toLocaleString('en')} more problem${left === 1 ? '' : 's'}, not listed` }];
}

/** The longest path segment the router takes as a parameter (fastify's `maxParamLength`, set from here). */
export const MAX_PATH_SEGMENT = 100;

/** A URL the router refuses (malformed, or a segment over MAX_PATH_SEGMENT): a 400 with its one detail at `url`. */
export const malformedUrl = (message: string): ErrorBody => errorBody('validation_error', 'The URL is malformed', [{ path: 'url', message }]);

/** What the router says of a segment over MAX_PATH_SEGMENT, where a catch-all route took the request before it could. */
export const SEGMENT_TOO_LONG = 'the path is exceeding the max param length';
