import { AppError, type ErrorCode } from '../kernel/errors.js';
import type { EmbedTarget } from './embed-token.js';

/**
 * What widgets, forms and polls share: owners publish them, visitors read
 * and answer them through public endpoints with an embed token.
 */
export type Kind = EmbedTarget;

export const CODES: Record<Kind, { notFound: ErrorCode; notPublished: ErrorCode; closed: ErrorCode; label: string }> = {
  widget: { notFound: 'widget_not_found', notPublished: 'widget_not_published', closed: 'widget_closed', label: 'Widget' },
  form: { notFound: 'form_not_found', notPublished: 'form_not_published', closed: 'form_closed', label: 'Form' },
  poll: { notFound: 'poll_not_found', notPublished: 'poll_not_published', closed: 'poll_closed', label: 'Poll' },
};

export const notFound = (kind: Kind) => new AppError(CODES[kind].notFound, `${CODES[kind].label} not found`);
export const notPublished = (kind: Kind) => new AppError(CODES[kind].notPublished, `This ${kind} is not published`);
export const domainNotAllowed = (kind: Kind, host: string | null) =>
  new AppError('domain_not_allowed', `This ${kind} may not be embedded on ${host ?? 'an unknown site'}`);
export const closed = (kind: Kind) => new AppError(CODES[kind].closed, `This ${kind} is closed`);

/** What a visitor's answer (submit or vote) can be refused with, in the order the checks run (the first: the object's events are replayed). */
export const answerErrors = (kind: Kind): ErrorCode[] => ['event_unreadable', CODES[kind].notFound, CODES[kind].notPublished, CODES[kind].closed, 'invalid_token', 'domain_not_allowed', 'duplicate_submission'];
