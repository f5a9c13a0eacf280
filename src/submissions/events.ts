/**
 * The stored shapes of the submission events, frozen: history is written in
 * them and must stay readable by every later version of the service. A change
 * is a new version of the event with an upcaster from the one before (and a
 * fixture of it in test/fixtures/events), never an edit of a shape here. They
 * state fields and types, not the API's limits, and import nothing from the
 * API's schemas: tightening a limit there must not make history unreadable.
 */
import { z } from 'zod';
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';

/** Spec 2.8: built by the server inside the response event, so nothing can change it later. */
export const ConsentRecord = z.object({
  consent_given: z.boolean(),
  timestamp: z.string(),
  ip_hash: z.string(),
  user_agent: z.string(),
  consent_text: z.string(),
  form_version: z.number().int(),
});

const text = z.string().nullable();
const count = z.number().int().nullable();

/** Spec 2.7: what the service captured of the visitor; the fields a plan does not get are absent. */
const ResponseMetadata = z.object({
  browser: text,
  browser_version: text,
  device: z.enum(['Desktop', 'Mobile', 'Tablet']).nullable(),
  os: text,
  ip_hash: z.string(),
  language: text,
  completion_time_ms: z.number().int(),
  page_url: text,
  page_title: text,
  screen_width: count.optional(),
  screen_height: count.optional(),
  fingerprint_hash: text.optional(),
  referer: text.optional(),
  referer_domain: text.optional(),
  country: text.optional(),
  region: text.optional(),
  city: text.optional(),
  timezone: text.optional(),
  utm_source: text.optional(),
  utm_medium: text.optional(),
  utm_campaign: text.optional(),
  is_proxy: z.boolean().optional(),
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
    /**
     * By question id: text, a number, a boolean, a list of choice ids
     * (multiple choice, ranking) or an object of column ids by row id (a
     * matrix), as the question takes; version 1 held the first three only.
     * Stated as an object of any keys: zod checks it in half the time of its
     * record, and every response of a rebuild is checked here.
     */
    answers: z.object({}).catchall(z.union([z.string(), z.number(), z.boolean(), z.array(z.string()), z.object({}).catchall(z.string())])),
    /**
     * Version 2: the values of the object's hidden fields the submission
     * carried, by name; absent when none. Before the metadata, so the
     * response's `submitted_at` stays the last of that name in the text.
     */
    hidden: z.object({}).catchall(z.string()).optional(),
    /**
     * Version 3: the ending the visitor's path reached, by id; null for the
     * default ending, which every response before ended on. The service
     * always writes it; absent reads as null.
     */
    ending: z.string().nullable().optional(),
    /**
     * Version 4: the language the visitor saw the object in (its own or one
     * of its translations). Every object before version 4 was written in
     * English, untranslated. The service always writes it; absent reads
     * as English.
     */
    language: z.string().optional(),
    metadata: ResponseMetadata,
    submitted_at: z.string(),
    consent_record: ConsentRecord.optional(),
    /** With `prevent_duplicates`: the visitor's guard stream, erased with the response. */
    duplicate_guard: z.string().optional(),
  }),
  // Version 1's answers and data are version 2's as they are; every response before version 3 ended on the default ending.
  { version: 4, upcasters: { 1: (data) => data, 2: (data) => ({ ...data, ending: null }), 3: (data) => ({ ...data, language: 'en' }) } },
);

/**
 * A page of a form that keeps partial responses (`keep_partial`), sent as
 * the visitor left it: what they answered so far, in the response's own
 * stream (`response-<id>`, the id fixed by the visit's session), so the
 * submission that completes it, an erasure, a seal and a rebuild treat it as
 * part of the response. The visitor's own words are in `answers` and
 * `hidden`; nothing of the request (address, agent) is kept, and no consent
 * record is made.
 */
export const ResponseProgressed = defineEvent(
  'ResponseProgressed',
  z.object({
    response_id: z.string(),
    account_id: z.string(),
    form_id: z.string(),
    /** The page the visitor left, by id. */
    page: z.string(),
    /** Every answer given so far on the path up to that page, by question id (as a response's answers). */
    answers: z.object({}).catchall(z.union([z.string(), z.number(), z.boolean(), z.array(z.string()), z.object({}).catchall(z.string())])),
    /** The hidden fields' values the page carried, by name; absent when none. */
    hidden: z.object({}).catchall(z.string()).optional(),
    progressed_at: z.string(),
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

/**
 * The first submission of a visitor to an object that takes one per visitor,
 * recorded before the submission takes a `max_responses` slot, so a repeat is
 * refused before it can use one up. Version 2 admits polls (a limited poll's
 * vote stream starts with it); version 1 knew widgets and forms only.
 */
export const SubmissionGuarded = defineEvent(
  'SubmissionGuarded',
  z.object({ target: z.enum(['widget', 'form', 'poll']), target_id: z.string(), response_id: z.string() }),
  { version: 2, upcasters: { 1: (data) => data } },
);

/**
 * A submission counted against the network it came from (the client address
 * and user agent, keyed-hashed into the stream's name, with the hour): the
 * second signal against duplicates besides the fingerprint. It names no
 * response, so it ties nothing a visitor sent to where they sent it from.
 */
export const NetworkSubmissionCounted = defineEvent(
  'NetworkSubmissionCounted',
  z.object({ target: z.enum(['widget', 'form', 'poll']), target_id: z.string() }),
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

export const submissionEvents = [ResponseSubmitted, ResponseProgressed, SubmissionSlotReserved, SubmissionGuarded, NetworkSubmissionCounted, ResponsesErased];

export type SubmissionEvent =
  | EventOf<typeof ResponseSubmitted>
  | EventOf<typeof ResponseProgressed>
  | EventOf<typeof SubmissionSlotReserved>
  | EventOf<typeof SubmissionGuarded>
  | EventOf<typeof NetworkSubmissionCounted>
  | EventOf<typeof ResponsesErased>;
