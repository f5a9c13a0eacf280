import { z } from 'zod';
import { sameJson } from '../kernel/aggregate.js';
import { AppError, type ErrorDetail } from '../kernel/errors.js';

/**
 * Fields a GET of a widget, form or poll shows that only the service sets.
 * A PUT may send them back, as a GET-then-PUT round trip does, as long as
 * each is unchanged; a changed one is refused rather than dropped unseen.
 * (Widgets add `widget_type`, forms `version`.)
 */
export const ReadOnly = {
  id: z.string().max(200).optional(),
  created_at: z.string().max(100).optional(),
  updated_at: z.string().max(100).optional(),
  /** Derived from `closes_at`, `max_responses` and the clock: closing is done through the settings. */
  closed: z.boolean().optional(),
};

/** Timestamps are compared as instants, so a client that rewrites one in another offset or precision still sends it unchanged. */
function unchanged(key: string, sent: unknown, shown: unknown): boolean {
  if (key.endsWith('_at') && typeof sent === 'string' && typeof shown === 'string') {
    const instant = Date.parse(sent);
    return !Number.isNaN(instant) && instant === Date.parse(shown);
  }
  return sameJson(sent, shown);
}

/**
 * The read-only fields a PUT sent (undefined: not sent) against what a GET
 * shows now: 400 `validation_error` naming each that differs, with its
 * current value.
 */
export function checkReadOnly(sent: Record<string, unknown>, shown: Record<string, unknown>): void {
  const details: ErrorDetail[] = [];
  for (const [key, value] of Object.entries(sent)) {
    if (value === undefined || unchanged(key, value, shown[key])) continue;
    details.push({ path: `body.${key}`, message: `is read-only (now ${JSON.stringify(shown[key])}): send it unchanged or leave it out` });
  }
  if (details.length > 0) throw new AppError('validation_error', 'Read-only fields cannot be changed', details);
}
