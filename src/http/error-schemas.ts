import { z } from 'zod';
import { STATUS } from '../errors.js';

/** D3: the one error body, described once for validation of replies and for OpenAPI. */
export const ErrorBody = z.object({
  statusCode: z.number().int(),
  code: z.enum(Object.keys(STATUS) as [keyof typeof STATUS, ...Array<keyof typeof STATUS>]),
  error: z.string(),
  message: z.string(),
  details: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
});

/** The error statuses any route may answer with, for its response schema. */
export const ErrorResponses = {
  400: ErrorBody,
  401: ErrorBody,
  403: ErrorBody,
  404: ErrorBody,
  409: ErrorBody,
  413: ErrorBody,
  415: ErrorBody,
  429: ErrorBody,
} as const;
