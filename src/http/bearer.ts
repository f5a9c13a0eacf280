import type { FastifyRequest } from 'fastify';
import { AppError } from '../kernel/errors.js';
import { headerCount } from './raw-headers.js';

const BEARER = /^Bearer[ ]+(\S+)[ ]*$/i;

/**
 * The request's bearer credential: the value of its one `Authorization:
 * Bearer` header. Several `Authorization` headers are no credential at all
 * ('several'): Node keeps the first and drops the rest, while a proxy in
 * front may have read another, so whichever were taken would be a guess.
 */
export function bearerOf(request: FastifyRequest): string | 'several' | undefined {
  if (headerCount(request.raw.rawHeaders, 'authorization') > 1) return 'several';
  return BEARER.exec(request.headers.authorization ?? '')?.[1];
}

/** The 401 of a request with several `Authorization` headers. */
export const severalAuthorizations = () => new AppError('unauthorized', 'Send one Authorization header: this request has several');
