import type { DomainEvent } from '../src/domain-events.js';
import type { CollectionSpec, Doc } from '../src/infra/read-models/port.js';
import type { Projection } from '../src/kernel/feed/projection.js';

export const WEBHOOKS = 'webhooks';

/** An endpoint as the API shows it; its signing secret is nowhere in here (see WebhookEndpointCreated). */
export interface WebhookDoc extends Doc {
  account_id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
  /** Why the service turned it off; null while enabled or when the owner turned it off. */
  disabled_reason: 'failing' | null;
  created_at: string;
  updated_at: string;
}

export const webhooksProjection: Projection<DomainEvent> = {
  name: 'webhooks',
  version: 1,
  collections: [{ name: WEBHOOKS, indexes: [['account_id', 'created_at']] }],
  project(event) {
    switch (event.type) {
      case 'WebhookEndpointCreated': {
        const { endpoint_id, account_id, url, events, description, created_at } = event.data;
        const doc: WebhookDoc = { id: endpoint_id, account_id, url, events, description, enabled: true, disabled_reason: null, created_at, updated_at: created_at };
        return [{ op: 'put', collection: WEBHOOKS, doc }];
      }
      case 'WebhookEndpointUpdated': {
        const { changes } = event.data;
        const reason = changes.enabled === undefined ? {} : { disabled_reason: null };
        return [{ op: 'patch', collection: WEBHOOKS, where: { id: event.data.endpoint_id }, set: { ...changes, ...reason, updated_at: event.data.updated_at } }];
      }
      case 'WebhookEndpointDisabled':
        return [
          {
            op: 'patch',
            collection: WEBHOOKS,
            where: { id: event.data.endpoint_id },
            set: { enabled: false, disabled_reason: event.data.reason, updated_at: event.data.disabled_at },
          },
        ];
      case 'WebhookEndpointDeleted':
        return [{ op: 'delete', collection: WEBHOOKS, where: { id: event.data.endpoint_id } }];
      case 'WebhookSecretRotated':
        return [{ op: 'patch', collection: WEBHOOKS, where: { id: event.data.endpoint_id }, set: { updated_at: event.data.rotated_at } }];
      default:
        return [];
    }
  },
};

export const WEBHOOK_REPLAYS = 'webhook_replays';

/** One replay asked for, of any endpoint of the account (a deleted one's too): what the account's replay quota counts. */
export interface WebhookReplayDoc extends Doc {
  account_id: string;
  endpoint_id: string;
  requested_at: string;
}

export const webhookReplaysProjection: Projection<DomainEvent> = {
  name: 'webhook_replays',
  version: 1,
  collections: [{ name: WEBHOOK_REPLAYS, indexes: [['account_id', 'requested_at']] }],
  project(event) {
    if (event.type !== 'WebhookReplayRequested') return [];
    const { endpoint_id, account_id, requested_at } = event.data;
    const doc: WebhookReplayDoc = { id: `${event.streamId}:${event.revision}`, account_id, endpoint_id, requested_at };
    return [{ op: 'put', collection: WEBHOOK_REPLAYS, doc }];
  },
};

/*
 * The dispatcher's own state, written with its checkpoint in one transaction
 * (like the erasure process's): the endpoints as of its position in the feed,
 * who owns each widget, form and poll (their later events name no account),
 * and the deliveries, which are both its queue and the delivery log the API
 * shows. A delivery names the event by stream and revision and never holds
 * its payload: it is read from the history when sent, so nothing erased
 * survives in here, and no secret ever is.
 */
export const WEBHOOK_TARGETS = 'webhook_targets';
export const WEBHOOK_OWNERS = 'webhook_owners';
export const WEBHOOK_DELIVERIES = 'webhook_deliveries';

export interface WebhookTarget extends Doc {
  account_id: string;
  url: string;
  events: string[];
  secret_salt: string;
  /** The salt before the last rotation, which signs beside the new one until `previous_until`. */
  previous_salt?: string;
  previous_until?: string;
  enabled: boolean;
}

export type DeliveryStatus = 'pending' | 'delivered' | 'failed' | 'dropped';

export interface WebhookDelivery extends Doc {
  endpoint_id: string;
  /** Feed order per endpoint: the position, zero-padded; a replay's come after the replay request's position. */
  seq: string;
  /** `evt_…`: the payload's id; with the endpoint, it makes the stable `webhook-id`. */
  event_id: string;
  type: string;
  stream: string;
  revision: string;
  position: string;
  /** The response or vote the event carries, and its parent: an erasure drops what is still queued. */
  subject_id: string | null;
  parent_id: string | null;
  status: DeliveryStatus;
  attempts: number;
  last_status: number | null;
  /** Why the last attempt failed, in a few words (never a response body). */
  last_error: string | null;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  created_at: string;
  replay: boolean;
}

export const webhookDispatchState = {
  name: 'webhook_dispatch',
  version: 1,
  collections: [
    { name: WEBHOOK_TARGETS, indexes: [] },
    { name: WEBHOOK_OWNERS, indexes: [] },
    { name: WEBHOOK_DELIVERIES, indexes: [['endpoint_id', 'seq'], ['endpoint_id', 'status', 'seq'], ['parent_id', 'status'], ['subject_id', 'status']] },
  ] satisfies CollectionSpec[],
};
