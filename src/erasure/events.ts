import { z } from 'zod';
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';

/*
 * Frozen: a stored event keeps the shape it was written with. A change is a
 * new version with an upcaster, never an edit here.
 */

/**
 * An owner asked for responses (or votes) of one parent to be erased. It is
 * revision 0 of the erasure's own stream (`erasure-<erasure_id>`); the erasure
 * process records what it erased after it, as `ResponsesErased`.
 */
export const ErasureRequested = defineEvent(
  'ErasureRequested',
  z.object({
    erasure_id: z.string(),
    account_id: z.string(),
    parent: z.enum(['widget', 'form', 'poll']),
    parent_id: z.string(),
    /** Candidates: only those of that parent and account are erased. */
    response_ids: z.array(z.string()),
    key_id: z.string().nullable(),
    requested_at: z.string(),
  }),
);

export const erasureEvents = [ErasureRequested];

export type ErasureEvent = EventOf<typeof ErasureRequested>;
