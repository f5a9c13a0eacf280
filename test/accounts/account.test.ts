import t from 'tap';
import { account } from '../../src/accounts/account.js';
import { apiKey, MAX_ACTIVE_KEYS } from '../../src/accounts/key.js';
import type { AccountEvent } from '../../src/accounts/events.js';
import { aggregateOf } from '../support/decider.js';

const at = '2026-11-22T10:00:00.000Z';
const key = { key_id: 'key_1', name: 'default', key_hash: 'a'.repeat(64), prefix: 'svc_abcdefgh', scopes: ['forms:read' as const] };
const opened: AccountEvent[] = [
  { type: 'AccountOpened', data: { account_id: 'acc_1', name: 'Acme', plan: 'pro', opened_at: at } },
  { type: 'ApiKeyIssued', data: { account_id: 'acc_1', ...key, issued_at: at } },
];

t.test('opening an account issues its first key with it', async (t) => {
  aggregateOf(t, account).given([]).when({ type: 'OpenAccount', account_id: 'acc_1', name: 'Acme', plan: 'pro', key, at }).then(opened);
});

t.test('an account opens once', async (t) => {
  aggregateOf(t, account).given(opened).when({ type: 'OpenAccount', account_id: 'acc_1', name: 'Acme', plan: 'pro', key, at }).thenThrows('account_exists');
});

t.test('revocations and plan changes need an open account', async (t) => {
  const spec = aggregateOf(t, account);
  spec.given([]).when({ type: 'RevokeApiKey', key_id: 'key_1', at }).thenThrows('account_not_found');
  spec.given([]).when({ type: 'ChangePlan', plan: 'business', at }).thenThrows('account_not_found');
});

t.test('a second key is issued in a stream of its own, while the account holds fewer than 50 unrevoked', async (t) => {
  const second = { ...key, key_id: 'key_2', name: 'ci' };
  const issued: AccountEvent = { type: 'ApiKeyIssued', data: { account_id: 'acc_1', ...second, issued_at: at } };
  const spec = aggregateOf(t, apiKey);
  t.equal(apiKey.streamId('key_2'), 'api-key-key_2');
  spec.given([]).when({ type: 'IssueApiKey', account_id: 'acc_1', key: second, active_keys: 1, at }).then([issued]);
  spec.given([]).when({ type: 'IssueApiKey', account_id: 'acc_1', key: second, active_keys: MAX_ACTIVE_KEYS - 1, at }).then([issued], 'the 50th');
  spec.given([]).when({ type: 'IssueApiKey', account_id: 'acc_1', key: second, active_keys: MAX_ACTIVE_KEYS, at }).thenThrows('key_limit_reached', 'not the 51st');
  spec.given([issued]).when({ type: 'IssueApiKey', account_id: 'acc_1', key: second, active_keys: 1, at }).thenThrows('conflict', 'a key id is issued once');
  spec.given([]).when({ type: 'IssueApiKey', account_id: 'acc_1', key: { ...second, name: 'a\u0000b' }, active_keys: 1, at }).thenThrows('validation_error');
});

t.test('revoking a key of its own stream, twice, and one never issued', async (t) => {
  const spec = aggregateOf(t, apiKey);
  const issued: AccountEvent = { type: 'ApiKeyIssued', data: { account_id: 'acc_1', ...key, key_id: 'key_2', issued_at: at } };
  const revoked: AccountEvent = { type: 'ApiKeyRevoked', data: { account_id: 'acc_1', key_id: 'key_2', revoked_at: at } };
  spec.given([issued]).when({ type: 'RevokeApiKey', key_id: 'key_2', at }).then([revoked]);
  spec.given([issued, revoked]).when({ type: 'RevokeApiKey', key_id: 'key_2', at }).then([], 'idempotent');
  spec.given([]).when({ type: 'RevokeApiKey', key_id: 'key_2', at }).thenThrows('key_not_found');
});

t.test('revoking a key, twice, and a key of nobody', async (t) => {
  const spec = aggregateOf(t, account);
  const revoked: AccountEvent = { type: 'ApiKeyRevoked', data: { account_id: 'acc_1', key_id: 'key_1', revoked_at: at } };
  spec.given(opened).when({ type: 'RevokeApiKey', key_id: 'key_1', at }).then([revoked]);
  spec.given([...opened, revoked]).when({ type: 'RevokeApiKey', key_id: 'key_1', at }).then([], 'idempotent');
  spec.given(opened).when({ type: 'RevokeApiKey', key_id: 'key_9', at }).thenThrows('key_not_found');
});

t.test('changing the plan records from and to; the same plan changes nothing', async (t) => {
  const spec = aggregateOf(t, account);
  const upgraded: AccountEvent = { type: 'AccountPlanChanged', data: { account_id: 'acc_1', from: 'pro', to: 'business', changed_at: at } };
  spec.given(opened).when({ type: 'ChangePlan', plan: 'business', at }).then([upgraded]);
  spec.given(opened).when({ type: 'ChangePlan', plan: 'pro', at }).then([]);
  spec.given([...opened, upgraded]).when({ type: 'ChangePlan', plan: 'business', at }).then([], 'state follows the change');
});
