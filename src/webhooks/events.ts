/**
 * The stored shapes of the webhook endpoint events, frozen: a change is a new
 * version with an upcaster (and a fixture in test/fixtures/events), never an
 * edit here. One stream per endpoint (`webhook-<id>`).
 */
import { z } from 'zod';
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';

export const WebhookEndpointCreated = defineEvent(
  'WebhookEndpointCreated',
  z.object({
    endpoint_id: z.string(),
    account_id: z.string(),
    url: z.string(),
    /** Event types and patterns (`widget.*`, `*`) the endpoint receives. */
    events: z.array(z.string()),
    description: z.string(),
    /**
     * Random; the signing secret is derived from it under the server secret,
     * so neither the history nor a read-model dump holds a usable secret.
     */
    secret_salt: z.string(),
    created_at: z.string(),
  }),
);

/** `changes` holds the new value of every field that changed; `enabled: true` turns an endpoint the service disabled back on. */
export const WebhookEndpointUpdated = defineEvent(
  'WebhookEndpointUpdated',
  z.object({
    endpoint_id: z.string(),
    changes: z.object({ url: z.string(), events: z.array(z.string()), description: z.string(), enabled: z.boolean() }).partial(),
    updated_at: z.string(),
  }),
);

/** The dispatcher gave up on a delivery after its whole retry schedule: nothing more is sent until the owner enables it again. */
export const WebhookEndpointDisabled = defineEvent(
  'WebhookEndpointDisabled',
  z.object({ endpoint_id: z.string(), reason: z.enum(['failing']), disabled_at: z.string() }),
);

export const WebhookEndpointDeleted = defineEvent(
  'WebhookEndpointDeleted',
  z.object({ endpoint_id: z.string(), account_id: z.string(), deleted_at: z.string() }),
);

/**
 * A new signing secret (from a new salt). The one before keeps signing too,
 * beside it, until `previous_until`, so receivers can switch over without
 * refusing a delivery.
 */
export const WebhookSecretRotated = defineEvent(
  'WebhookSecretRotated',
  z.object({ endpoint_id: z.string(), secret_salt: z.string(), previous_until: z.string(), rotated_at: z.string() }),
);

/** Every event of the endpoint's account recorded from `since` up to this request is delivered again. */
export const WebhookReplayRequested = defineEvent(
  'WebhookReplayRequested',
  z.object({ endpoint_id: z.string(), account_id: z.string(), since: z.string(), requested_at: z.string() }),
);

export const webhookEvents = [WebhookEndpointCreated, WebhookEndpointUpdated, WebhookEndpointDisabled, WebhookEndpointDeleted, WebhookSecretRotated, WebhookReplayRequested];

export type WebhookEvent =
  | EventOf<typeof WebhookEndpointCreated>
  | EventOf<typeof WebhookEndpointUpdated>
  | EventOf<typeof WebhookEndpointDisabled>
  | EventOf<typeof WebhookEndpointDeleted>
  | EventOf<typeof WebhookSecretRotated>
  | EventOf<typeof WebhookReplayRequested>;
