import type { Aggregate } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import type { WebhookEvent } from './events.js';

export interface Endpoint {
  id: string;
  account_id: string;
  url: string;
  events: string[];
  description: string;
  enabled: boolean;
}

export type EndpointState =
  | { status: 'none' }
  | {
      status: 'active';
      endpoint: Endpoint;
      /**
       * The feed position of the last replay asked for; undefined in a
       * state folded from events not read back from the store yet.
       */
      replay?: { position: bigint | undefined };
    }
  | { status: 'deleted' };

export interface EndpointChanges {
  url?: string | undefined;
  events?: string[] | undefined;
  description?: string | undefined;
  enabled?: boolean | undefined;
}

export type EndpointCommand =
  | { type: 'CreateEndpoint'; endpoint_id: string; account_id: string; url: string; events: string[]; description: string; secret_salt: string; at: string }
  | { type: 'UpdateEndpoint'; account_id: string; changes: EndpointChanges; at: string }
  /** From the dispatcher, which answers to no account. */
  | { type: 'DisableEndpoint'; reason: 'failing'; at: string }
  | { type: 'DeleteEndpoint'; account_id: string; at: string }
  | { type: 'RotateSecret'; account_id: string; secret_salt: string; previous_until: string; at: string }
  /** `handled_through`: how far in the feed the dispatcher has handled (a replay request at or before it is done). */
  | { type: 'RequestReplay'; account_id: string; since: string; at: string; handled_through: bigint };

/** Events as read from the store carry their feed position; those just decided do not yet. */
export function evolve(state: EndpointState, event: WebhookEvent & { position?: bigint }): EndpointState {
  switch (event.type) {
    case 'WebhookEndpointCreated': {
      const { endpoint_id, account_id, url, events, description } = event.data;
      return { status: 'active', endpoint: { id: endpoint_id, account_id, url, events, description, enabled: true } };
    }
    case 'WebhookEndpointUpdated':
      return state.status === 'active' ? { status: 'active', endpoint: { ...state.endpoint, ...event.data.changes } } : state;
    case 'WebhookEndpointDisabled':
      return state.status === 'active' ? { status: 'active', endpoint: { ...state.endpoint, enabled: false } } : state;
    case 'WebhookEndpointDeleted':
      return { status: 'deleted' };
    case 'WebhookReplayRequested':
      return state.status === 'active' ? { ...state, replay: { position: event.position } } : state;
    case 'WebhookSecretRotated':
      return state;
  }
}

/** D5: another account's endpoint is answered exactly like a missing one. */
function owned(state: EndpointState, accountId: string): Endpoint {
  if (state.status !== 'active' || state.endpoint.account_id !== accountId) throw new AppError('webhook_not_found', 'Webhook not found');
  return state.endpoint;
}

export function decide(command: EndpointCommand, state: EndpointState): WebhookEvent[] {
  switch (command.type) {
    case 'CreateEndpoint': {
      if (state.status !== 'none') throw new AppError('conflict', 'A webhook with this id exists');
      const { endpoint_id, account_id, url, events, description, secret_salt, at } = command;
      return [{ type: 'WebhookEndpointCreated', data: { endpoint_id, account_id, url, events: [...new Set(events)], description, secret_salt, created_at: at } }];
    }
    case 'UpdateEndpoint': {
      const endpoint = owned(state, command.account_id);
      const changes: EndpointChanges = {};
      const { url, events, description, enabled } = command.changes;
      if (url !== undefined && url !== endpoint.url) changes.url = url;
      if (events !== undefined) {
        const unique = [...new Set(events)];
        if (JSON.stringify(unique) !== JSON.stringify(endpoint.events)) changes.events = unique;
      }
      if (description !== undefined && description !== endpoint.description) changes.description = description;
      if (enabled !== undefined && enabled !== endpoint.enabled) changes.enabled = enabled;
      if (Object.keys(changes).length === 0) return [];
      return [{ type: 'WebhookEndpointUpdated', data: { endpoint_id: endpoint.id, changes: changes as Required<EndpointChanges>, updated_at: command.at } }];
    }
    case 'DisableEndpoint':
      if (state.status !== 'active' || !state.endpoint.enabled) return [];
      return [{ type: 'WebhookEndpointDisabled', data: { endpoint_id: state.endpoint.id, reason: command.reason, disabled_at: command.at } }];
    case 'DeleteEndpoint': {
      const endpoint = owned(state, command.account_id);
      return [{ type: 'WebhookEndpointDeleted', data: { endpoint_id: endpoint.id, account_id: endpoint.account_id, deleted_at: command.at } }];
    }
    case 'RotateSecret': {
      const endpoint = owned(state, command.account_id);
      return [{ type: 'WebhookSecretRotated', data: { endpoint_id: endpoint.id, secret_salt: command.secret_salt, previous_until: command.previous_until, rotated_at: command.at } }];
    }
    case 'RequestReplay': {
      const endpoint = owned(state, command.account_id);
      // One replay per endpoint waits or runs at a time; one whose position is unknown is taken to be waiting.
      const last = state.status === 'active' ? state.replay : undefined;
      if (last && (last.position === undefined || last.position > command.handled_through)) {
        throw new AppError('replay_pending', 'A replay of this webhook is queued or running; ask again once it has finished');
      }
      return [{ type: 'WebhookReplayRequested', data: { endpoint_id: endpoint.id, account_id: endpoint.account_id, since: command.since, requested_at: command.at } }];
    }
  }
}

export const endpointAggregate: Aggregate<EndpointState, WebhookEvent, EndpointCommand> = {
  streamId: (id) => `webhook-${id}`,
  initial: () => ({ status: 'none' }),
  evolve,
  decide,
};
