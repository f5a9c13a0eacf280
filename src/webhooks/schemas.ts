import { z } from 'zod';
import { Pagination } from '../kernel/pagination.js';
import { isoInstant } from '../kernel/instant.js';
import { WebhookUrl } from './targets.js';
import { WebhookTypePattern } from './types.js';

const Events = z.array(WebhookTypePattern).min(1, 'give at least one event type').max(30);
const Description = z.string().max(500);

export const CreateWebhookBody = z
  .strictObject({ url: WebhookUrl, events: Events, description: Description.optional() })
  .meta({ examples: [{ url: 'https://hooks.example.com/feedback', events: ['response.created'], description: 'New responses to our CRM' }] });
export type CreateWebhookBody = z.infer<typeof CreateWebhookBody>;

export const UpdateWebhookBody = z
  .strictObject({
    url: WebhookUrl.optional(),
    events: Events.optional(),
    description: Description.optional(),
    enabled: z.boolean().optional().describe('`true` turns on an endpoint the service disabled after failures, or the owner turned off'),
  })
  .meta({ examples: [{ enabled: true }] });
export type UpdateWebhookBody = z.infer<typeof UpdateWebhookBody>;

export const WebhookView = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string(),
  enabled: z.boolean(),
  disabled_reason: z.enum(['failing']).nullable().describe('`failing` when the service disabled it after a delivery failed for the whole retry schedule'),
  created_at: z.string(),
  updated_at: z.string(),
});

export const CreatedWebhook = z.object({
  id: z.string(),
  url: z.string(),
  events: z.array(z.string()),
  description: z.string(),
  secret: z.string().describe('`whsec_…`: shown this once; verify signatures with it'),
  enabled: z.literal(true),
  created_at: z.string(),
});

export const RotatedSecret = z.object({
  id: z.string(),
  secret: z.string().describe('`whsec_…`: the new secret, shown this once'),
  previous_secret_until: z.string().describe('Until then deliveries carry a signature by the previous secret too'),
});

export const WebhookList = z.object({ webhooks: z.array(WebhookView), pagination: Pagination });

export const Delivery = z.object({
  event_id: z.string().describe('The payload `id`'),
  type: z.string(),
  status: z.enum(['pending', 'delivered', 'failed', 'dropped']).describe('`dropped`: erased before it went out'),
  attempts: z.number().int(),
  last_status: z.number().int().nullable().describe('The HTTP status of the last attempt; null when none came'),
  last_error: z.string().nullable(),
  next_attempt_at: z.string().nullable(),
  last_attempt_at: z.string().nullable(),
  created_at: z.string(),
  replay: z.boolean(),
});

export const DeliveryList = z.object({ deliveries: z.array(Delivery), pagination: Pagination });

export const ReplayBody = z.strictObject({
  since: isoInstant('must be an ISO 8601 time')
    .transform((value) => new Date(value).toISOString())
    .describe('Events recorded from this time on are sent again; at most 30 days back (400 `validation_error` beyond)'),
});

export const ReplayAccepted = z.object({ replay: z.literal(true), since: z.string() });
