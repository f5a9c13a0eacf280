import t from 'tap';
import { account } from '../../src/accounts/account.js';
import type { AccountEvent } from '../../src/accounts/events.js';
import { given as givenFor } from '../support/given.js';

const at = '2026-11-22T10:00:00.000Z';
const key = { key_id: 'key_1', name: 'default', key_hash: 'a'.repeat(64), prefix: 'svc_abcdefgh', scopes: ['forms:read' as const] };
const opened: AccountEvent[] = [
  { type: 'AccountOpened', data: { account_id: 'acc_1', name: 'Acme', plan: 'pro', opened_at: at } },
  { type: 'ApiKeyIssued', data: { account_id: 'acc_1', ...key, issued_at: at } },
];

const given = (history: AccountEvent[]) => givenFor(account, history);

t.test('opening an account issues its first key with it', async (t) => {
  t.same(given([]).when({ type: 'OpenAccount', account_id: 'acc_1', name: 'Acme', plan: 'pro', key, at }), { events: opened });
});

t.test('an account opens once', async (t) => {
  t.same(given(opened).when({ type: 'OpenAccount', account_id: 'acc_1', name: 'Acme', plan: 'pro', key, at }), {
    error: 'account_exists',
  });
});

t.test('keys, revocations and plan changes need an open account', async (t) => {
  t.same(given([]).when({ type: 'IssueApiKey', key, at }), { error: 'account_not_found' });
  t.same(given([]).when({ type: 'RevokeApiKey', key_id: 'key_1', at }), { error: 'account_not_found' });
  t.same(given([]).when({ type: 'ChangePlan', plan: 'business', at }), { error: 'account_not_found' });
});

t.test('a second key', async (t) => {
  const second = { ...key, key_id: 'key_2', name: 'ci' };
  t.same(given(opened).when({ type: 'IssueApiKey', key: second, at }), {
    events: [{ type: 'ApiKeyIssued', data: { account_id: 'acc_1', ...second, issued_at: at } }],
  });
});

t.test('revoking a key, twice, and a key of nobody', async (t) => {
  const revoked: AccountEvent = { type: 'ApiKeyRevoked', data: { account_id: 'acc_1', key_id: 'key_1', revoked_at: at } };
  t.same(given(opened).when({ type: 'RevokeApiKey', key_id: 'key_1', at }), { events: [revoked] });
  t.same(given([...opened, revoked]).when({ type: 'RevokeApiKey', key_id: 'key_1', at }), { events: [] }, 'idempotent');
  t.same(given(opened).when({ type: 'RevokeApiKey', key_id: 'key_9', at }), { error: 'key_not_found' });
});

t.test('changing the plan records from and to; the same plan changes nothing', async (t) => {
  t.same(given(opened).when({ type: 'ChangePlan', plan: 'business', at }), {
    events: [{ type: 'AccountPlanChanged', data: { account_id: 'acc_1', from: 'pro', to: 'business', changed_at: at } }],
  });
  t.same(given(opened).when({ type: 'ChangePlan', plan: 'pro', at }), { events: [] });
  const upgraded: AccountEvent = { type: 'AccountPlanChanged', data: { account_id: 'acc_1', from: 'pro', to: 'business', changed_at: at } };
  t.same(given([...opened, upgraded]).when({ type: 'ChangePlan', plan: 'business', at }), { events: [] }, 'state follows the change');
});
