/**
 * The stored shape of the display and start counts, frozen (see
 * submissions/events.ts). A count says how many visits of an object did
 * something in one minute, broken down by what the owner's plan records of a
 * response; nothing in it belongs to one visitor.
 */
import { z } from 'zod';
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';

/** How many, by value ('' for a value the request did not tell). */
const Counts = z.object({}).catchall(z.number().int());

/** One signal's count in the minute: its total, and each breakdown the plan recorded at the time (absent: not recorded). */
const Tally = z.object({
  total: z.number().int(),
  device: Counts.optional(),
  referer_domain: Counts.optional(),
  country: Counts.optional(),
  utm_source: Counts.optional(),
  utm_medium: Counts.optional(),
  utm_campaign: Counts.optional(),
});

/**
 * The displays and starts of one object in one minute (`minute`, its first
 * instant in UTC), in the object's signals stream (`signals-<id>`). One a
 * minute an object at most, however many visits there were.
 */
export const SignalsCounted = defineEvent(
  'SignalsCounted',
  z.object({
    target: z.enum(['widget', 'form', 'poll']),
    target_id: z.string(),
    account_id: z.string(),
    minute: z.string(),
    display: Tally,
    start: Tally,
  }),
);

export const signalEvents = [SignalsCounted];

export type SignalEvent = EventOf<typeof SignalsCounted>;
