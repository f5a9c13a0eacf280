/**
 * The stored shapes of notification settings, frozen (see accounts/events.ts).
 * Each object has one stream of them, `notifications-<object id>`: each
 * member's choice for the object, and the object's Slack address.
 */
import { z } from 'zod';
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';

/**
 * A member's choice of notifications for one object: `each` response (at
 * most one email a minute, batched), a daily `digest` at `digest_hour` in
 * `time_zone` (IANA), or `none`. `via` says whether it was set on the
 * dashboard or by the one-click unsubscribe link of an email. `email` is
 * the member's address when they chose, where the mail goes.
 */
export const NotificationsChosen = defineEvent(
  'NotificationsChosen',
  z.object({
    account_id: z.string(),
    object_id: z.string(),
    object_kind: z.enum(['widget', 'form', 'poll']),
    member_id: z.string(),
    email: z.string(),
    mode: z.enum(['each', 'digest', 'none']),
    digest_hour: z.number().int().min(0).max(23),
    time_zone: z.string(),
    include_answers: z.boolean(),
    via: z.enum(['dashboard', 'unsubscribe']),
    by: z.string(),
    chosen_at: z.string(),
  }),
);

/** The object's Slack incoming-webhook address, or null when it no longer notifies Slack. */
export const SlackNotificationsSet = defineEvent(
  'SlackNotificationsSet',
  z.object({
    account_id: z.string(),
    object_id: z.string(),
    object_kind: z.enum(['widget', 'form', 'poll']),
    url: z.string().nullable(),
    by: z.string(),
    set_at: z.string(),
  }),
);

export const notificationEvents = [NotificationsChosen, SlackNotificationsSet];

export type NotificationEvent = EventOf<typeof NotificationsChosen> | EventOf<typeof SlackNotificationsSet>;
