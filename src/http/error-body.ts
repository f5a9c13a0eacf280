import { STATUS_CODES } from 'node:http';
import { z } from 'zod';
import { STATUS, type ErrorCode, type ErrorDetail } from '../errors.js';

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
  return { statusCode, code, error: STATUS_CODES[statusCode] ?? 'Error', message, ...(details ? { details } : {}) };
}
