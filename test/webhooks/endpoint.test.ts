import t from 'tap';
import { endpointAggregate } from '../../src/webhooks/endpoint.js';
import type { WebhookEvent } from '../../src/webhooks/events.js';
import { subscribed } from '../../src/webhooks/types.js';
import { aggregateOf } from '../support/decider.js';

const AT = '2026-11-22T10:00:00.000Z';
const created: WebhookEvent = {
  type: 'WebhookEndpointCreated',
  data: { endpoint_id: 'whk_1', account_id: 'acc_1', url: 'https://hooks.example.com/x', events: ['response.created'], description: '', secret_salt: 'ab', created_at: AT },
};
const disabled: WebhookEvent = { type: 'WebhookEndpointDisabled', data: { endpoint_id: 'whk_1', reason: 'failing', disabled_at: AT } };

t.test('given an endpoint, changes record only what differs', async (t) => {
  const endpoint = aggregateOf(t, endpointAggregate);
  endpoint.given([created]).when({ type: 'UpdateEndpoint', account_id: 'acc_1', changes: { url: 'https://hooks.example.com/x', events: ['response.created', 'response.created'] }, at: AT }).then([]);
  endpoint
    .given([created])
    .when({ type: 'UpdateEndpoint', account_id: 'acc_1', changes: { events: ['*'], enabled: false }, at: AT })
    .then([{ type: 'WebhookEndpointUpdated', data: { endpoint_id: 'whk_1', changes: { events: ['*'], enabled: false }, updated_at: AT } }]);
  endpoint.given([created]).when({ type: 'UpdateEndpoint', account_id: 'acc_2', changes: { enabled: false }, at: AT }).thenThrows('webhook_not_found', "another account's endpoint does not exist for the caller");
});

t.test('given a failing endpoint, the dispatcher disables it once; the owner enables it again', async (t) => {
  const endpoint = aggregateOf(t, endpointAggregate);
  endpoint.given([created]).when({ type: 'DisableEndpoint', reason: 'failing', at: AT }).then([disabled]);
  endpoint.given([created, disabled]).when({ type: 'DisableEndpoint', reason: 'failing', at: AT }).then([], 'disabled already');
  endpoint
    .given([created, disabled])
    .when({ type: 'UpdateEndpoint', account_id: 'acc_1', changes: { enabled: true }, at: AT })
    .then([{ type: 'WebhookEndpointUpdated', data: { endpoint_id: 'whk_1', changes: { enabled: true }, updated_at: AT } }]);
});

t.test("given an endpoint, its owner rotates its secret; another account cannot, nor anyone a deleted endpoint's", async (t) => {
  const endpoint = aggregateOf(t, endpointAggregate);
  const until = '2026-11-23T10:00:00.000Z';
  endpoint
    .given([created])
    .when({ type: 'RotateSecret', account_id: 'acc_1', secret_salt: 'cd', previous_until: until, at: AT })
    .then([{ type: 'WebhookSecretRotated', data: { endpoint_id: 'whk_1', secret_salt: 'cd', previous_until: until, rotated_at: AT } }]);
  endpoint.given([created]).when({ type: 'RotateSecret', account_id: 'acc_2', secret_salt: 'cd', previous_until: until, at: AT }).thenThrows('webhook_not_found');
  const deleted: WebhookEvent = { type: 'WebhookEndpointDeleted', data: { endpoint_id: 'whk_1', account_id: 'acc_1', deleted_at: AT } };
  endpoint.given([created, deleted]).when({ type: 'RotateSecret', account_id: 'acc_1', secret_salt: 'cd', previous_until: until, at: AT }).thenThrows('webhook_not_found');
});

t.test('given a replay the dispatcher has not handled yet, another of the same endpoint is refused until it has', async (t) => {
  const endpoint = aggregateOf(t, endpointAggregate);
  const ask = (handled: bigint) => ({ type: 'RequestReplay' as const, account_id: 'acc_1', since: AT, at: AT, handled_through: handled });
  // As read back from the store: with its feed position.
  const requested = { type: 'WebhookReplayRequested', data: { endpoint_id: 'whk_1', account_id: 'acc_1', since: AT, requested_at: AT }, position: 42n } as WebhookEvent;
  endpoint.given([created]).when(ask(0n)).then([{ type: 'WebhookReplayRequested', data: { endpoint_id: 'whk_1', account_id: 'acc_1', since: AT, requested_at: AT } }], 'the first one is taken');
  endpoint.given([created, requested]).when(ask(41n)).thenThrows('replay_pending', 'queued: the dispatcher is before it');
  endpoint.given([created, requested]).when(ask(42n)).then([{ type: 'WebhookReplayRequested', data: { endpoint_id: 'whk_1', account_id: 'acc_1', since: AT, requested_at: AT } }], 'handled: another may be asked for');
  const unplaced: WebhookEvent = { type: 'WebhookReplayRequested', data: { endpoint_id: 'whk_1', account_id: 'acc_1', since: AT, requested_at: AT } };
  endpoint.given([created, unplaced]).when(ask(1000n)).thenThrows('replay_pending', 'one whose position is not known yet is taken to be waiting');
});

t.test('given a deleted endpoint, nothing more is decided of it', async (t) => {
  const endpoint = aggregateOf(t, endpointAggregate);
  const deleted: WebhookEvent = { type: 'WebhookEndpointDeleted', data: { endpoint_id: 'whk_1', account_id: 'acc_1', deleted_at: AT } };
  endpoint.given([created, deleted]).when({ type: 'RequestReplay', account_id: 'acc_1', since: AT, at: AT, handled_through: 0n }).thenThrows('webhook_not_found');
  endpoint.given([created, deleted]).when({ type: 'DisableEndpoint', reason: 'failing', at: AT }).then([]);
  endpoint.given([created, deleted]).when({ type: 'DeleteEndpoint', account_id: 'acc_1', at: AT }).thenThrows('webhook_not_found');
});

t.test('given patterns, an endpoint receives the types they name', async (t) => {
  t.ok(subscribed(['*'], 'poll.deleted'));
  t.ok(subscribed(['widget.*'], 'widget.published'));
  t.notOk(subscribed(['widget.*'], 'form.published'));
  t.ok(subscribed(['response.created'], 'response.created'));
  t.notOk(subscribed(['response.created'], 'response.erased'));
  t.notOk(subscribed([], 'response.created'));
});
