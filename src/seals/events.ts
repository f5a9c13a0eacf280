import { z } from 'zod';
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';

/*
 * Frozen: a stored event keeps the shape it was written with. A change is a
 * new version with an upcaster, never an edit here.
 */

/**
 * One link of the hash chain over the history: the events recorded after the
 * previous seal's `through`, up to and including this one's, each as one line
 * of `events` (see chain.ts), and the hash of the previous seal. The seal
 * number is its revision in the `seals` stream.
 *
 * `events` is one string rather than an array so that reading a seal back
 * costs one string check, whatever the number of events it covers.
 *
 * Version 2 keeps the fields and changes what two of them hold: each line of
 * `events` has the event's revision in its stream after the stream, and
 * `hash` covers the version too (chain.ts). Which one a stored seal is, its
 * metadata's `schema_version` says; a seal of version 1 is read as written.
 *
 * Version 3 keeps the fields and the lines of version 2, and `hash` covers
 * `sealed_at` too: the seal's own hash then pins when it was made, which
 * for the last seal nothing else does (the next seal covers the event).
 */
export const LogSealed = defineEvent(
  'LogSealed',
  z.object({
    seal: z.number().int().nonnegative(),
    /** The position just before the first event covered (exclusive), as a decimal string: the previous seal's `through`, "0" for the first. */
    from: z.string(),
    /** The position of the last event covered (inclusive). */
    through: z.string(),
    count: z.number().int().nonnegative(),
    events: z.string(),
    /** The previous seal's `hash`; null for the first seal. */
    previous: z.string().nullable(),
    /** SHA-256 (hex) over the version (from version 2 on), the seal number, previous, from, through, sealed_at (from version 3 on) and events. */
    hash: z.string(),
    sealed_at: z.string(),
  }),
  { version: 3, upcasters: { 1: (data) => data, 2: (data) => data } },
);

export const sealEvents = [LogSealed];

export type SealEvent = EventOf<typeof LogSealed>;
