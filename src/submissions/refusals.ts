import { AppError, type ErrorCode } from '../errors.js';
import type { EmbedTarget } from './embed-token.js';
import type { Settings } from './settings.js';

/** The error codes of each kind of embeddable object, one place for each. */
export const CODES: Record<EmbedTarget, { notFound: ErrorCode; notPublished: ErrorCode; closed: ErrorCode; label: string }> = {
  widget: { notFound: 'widget_not_found', notPublished: 'widget_not_published', closed: 'widget_closed', label: 'Widget' },
  form: { notFound: 'form_not_found', notPublished: 'form_not_published', closed: 'form_closed', label: 'Form' },
  poll: { notFound: 'poll_not_found', notPublished: 'poll_not_published', closed: 'poll_closed', label: 'Poll' },
};

export const notFound = (kind: EmbedTarget) => new AppError(CODES[kind].notFound, `${CODES[kind].label} not found`);
export const notPublished = (kind: EmbedTarget) => new AppError(CODES[kind].notPublished, `This ${kind} is not published`);
export const closed = (kind: EmbedTarget) => new AppError(CODES[kind].closed, `This ${kind} is closed`);

/** At or after `closes_at`. */
export const pastClosingTime = (settings: Settings, now: Date): boolean => Boolean(settings.closes_at && Date.parse(settings.closes_at) <= now.getTime());
