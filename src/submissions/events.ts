import { z } from 'zod';
import { defineEvent, type EventOf } from '../event-catalog.js';
import { Answers } from '../questions.js';
import { ResponseMetadata } from './metadata.js';

/** Spec 2.8: built by the server inside the response event, so nothing can change it later. */
export const ConsentRecord = z.object({
  consent_given: z.boolean(),
  timestamp: z.string(),
  ip_hash: z.string(),
  user_agent: z.string(),
  consent_text: z.string(),
  form_version: z.number().int().positive(),
});
export type ConsentRecord = z.infer<typeof ConsentRecord>;

/** One response per stream (`response-<id>`), so erasing it is deleting its stream. */
export const ResponseSubmitted = defineEvent(
  'ResponseSubmitted',
  z.object({
    response_id: z.string(),
    account_id: z.string(),
    widget_id: z.string().optional(),
    form_id: z.string().optional(),
    answers: Answers,
    metadata: ResponseMetadata,
    submitted_at: z.string(),
    consent_record: ConsentRecord.optional(),
    /** With `prevent_duplicates`: the visitor's guard stream, erased with the response. */
    duplicate_guard: z.string().optional(),
  }),
);

/**
 * With `max_responses`, each accepted submission first takes a numbered slot
 * in the object's quota stream; the store's revision makes the count exact
 * under any concurrency without a lock.
 */
export const SubmissionSlotReserved = defineEvent(
  'SubmissionSlotReserved',
  z.object({ target: z.enum(['widget', 'form', 'poll']), target_id: z.string(), response_id: z.string() }),
);

/** The first submission of a visitor to an object that takes one per visitor. */
export const SubmissionGuarded = defineEvent(
  'SubmissionGuarded',
  z.object({ target: z.enum(['widget', 'form']), target_id: z.string(), response_id: z.string() }),
);

/** The audit trail of an erasure: which responses, when, by which key; never what they said. */
export const ResponsesErased = defineEvent(
  'ResponsesErased',
  z.object({
    account_id: z.string(),
    parent: z.enum(['widget', 'form', 'poll']),
    parent_id: z.string(),
    response_ids: z.array(z.string()),
    reason: z.enum(['bulk_delete', 'parent_deleted']),
    key_id: z.string().nullable(),
    erased_at: z.string(),
  }),
);

export const submissionEvents = [ResponseSubmitted, SubmissionSlotReserved, SubmissionGuarded, ResponsesErased];

export type SubmissionEvent =
  | EventOf<typeof ResponseSubmitted>
  | EventOf<typeof SubmissionSlotReserved>
  | EventOf<typeof SubmissionGuarded>
  | EventOf<typeof ResponsesErased>;
