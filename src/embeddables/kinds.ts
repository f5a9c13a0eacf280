import { z } from 'zod';
import { AppError, type ErrorCode } from '../kernel/errors.js';
import { idParams } from '../http/operations.js';

/**
 * The three kinds of object an owner publishes and visitors answer through
 * public endpoints with an embed token: each kind's error codes, and what
 * its ids look like.
 */
export type Kind = 'widget' | 'form' | 'poll';

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

/** What an object id looks like; anything else is not found without asking a store. */
export const ID = /^[A-Za-z0-9_-]{1,64}$/;
/** The `:id` of a route the OpenAPI document leaves out (the dashboard's). */
export const Params = z.object({ id: z.string().max(200) });
/** The `:id` of a widget, form or poll route, described by its kind. */
export const ParamsOf = { widget: idParams('widget', 'wgt'), form: idParams('form', 'frm'), poll: idParams('poll', 'pol') } as const;
