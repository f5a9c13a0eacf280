import { accountEvents, type AccountEvent } from './accounts/events.js';
import { dashboardEvents, type DashboardEvent } from './dashboard/events.js';
import { erasureEvents, type ErasureEvent } from './erasure/events.js';
import { EventCatalog } from './kernel/event-catalog.js';
import { personal } from './kernel/personal.js';
import { formEvents, type FormEvent } from './forms/events.js';
import { memberEvents, type MemberEvent } from './members/events.js';
import { notificationEvents, type NotificationEvent } from './notifications/events.js';
import { pollEvents, VoteCast, type PollEvent } from './polls/events.js';
import { sealEvents, type SealEvent } from './seals/events.js';
import { signalEvents, type SignalEvent } from './signals/events.js';
import { ResponseProgressed, ResponseSubmitted, submissionEvents, type SubmissionEvent } from './submissions/events.js';
import { webhookEvents, type WebhookEvent } from './webhooks/events.js';
import { widgetEvents, type WidgetEvent } from './widgets/events.js';

/** Every event the service writes, by feature. */
export type DomainEvent = AccountEvent | WidgetEvent | FormEvent | PollEvent | SubmissionEvent | ErasureEvent | SealEvent | WebhookEvent | DashboardEvent | SignalEvent | MemberEvent | NotificationEvent;

/** Every event definition the service writes and reads. */
export const definitions = [...accountEvents, ...widgetEvents, ...formEvents, ...pollEvents, ...submissionEvents, ...erasureEvents, ...sealEvents, ...webhookEvents, ...dashboardEvents, ...signalEvents, ...memberEvents, ...notificationEvents];

export const catalog = new EventCatalog<DomainEvent>(definitions);

/**
 * The events that carry what a person sent, one line each: which fields are
 * personal, and which field names the response or vote whose key seals
 * them (kernel/personal.ts). Erasing the response or vote deletes that key.
 */
export const personalData = [
  personal(ResponseSubmitted, 'response_id', ['answers', 'hidden', 'metadata', 'consent_record']),
  personal(ResponseProgressed, 'response_id', ['answers', 'hidden']),
  personal(VoteCast, 'vote_id', ['option_ids']),
];
