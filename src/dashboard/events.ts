/**
 * The stored shapes of the dashboard's sign-in events, frozen (see
 * accounts/events.ts). None holds a link's token or a session's cookie: a
 * link is signed, not stored, and a session id is the keyed hash of its
 * cookie's secret.
 */
import { z } from 'zod';
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';

export const LoginLinkIssued = defineEvent(
  'LoginLinkIssued',
  z.object({ link_id: z.string(), account_id: z.string(), expires_at: z.string(), issued_at: z.string() }),
);

export const DashboardSignedIn = defineEvent(
  'DashboardSignedIn',
  z.object({ session_id: z.string(), account_id: z.string(), link_id: z.string(), signed_in_at: z.string() }),
);

export const DashboardSignedOut = defineEvent(
  'DashboardSignedOut',
  z.object({ session_id: z.string(), account_id: z.string(), reason: z.enum(['signed_out', 'expired']), signed_out_at: z.string() }),
);

export const dashboardEvents = [LoginLinkIssued, DashboardSignedIn, DashboardSignedOut];

export type DashboardEvent = EventOf<typeof LoginLinkIssued> | EventOf<typeof DashboardSignedIn> | EventOf<typeof DashboardSignedOut>;
