import type { DomainEvent } from '../src/domain-events.js';
import type { Projection } from '../src/kernel/feed/projection.js';

export const ACCOUNTS = 'accounts';
export const API_KEYS = 'api_keys';

export const accountsProjection: Projection<DomainEvent> = {
  name: 'accounts',
  version: 1,
  collections: [
    { name: ACCOUNTS, indexes: [] },
    // account_id + revoked_at: the count of an account's unrevoked keys, which a key's creation checks.
    { name: API_KEYS, indexes: [['key_hash'], ['account_id', 'created_at'], ['account_id', 'revoked_at']] },
  ],
  project(event) {
    switch (event.type) {
      case 'AccountOpened': {
        const { account_id, name, plan, opened_at } = event.data;
        return [
          {
            op: 'put',
            collection: ACCOUNTS,
            doc: { id: account_id, name, plan, created_at: opened_at, updated_at: opened_at },
          },
        ];
      }
      case 'AccountPlanChanged':
        return [
          {
            op: 'patch',
            collection: ACCOUNTS,
            where: { id: event.data.account_id },
            set: { plan: event.data.to, updated_at: event.data.changed_at },
          },
        ];
      case 'ApiKeyIssued': {
        const { key_id, account_id, name, key_hash, prefix, scopes, issued_at } = event.data;
        return [
          {
            op: 'put',
            collection: API_KEYS,
            doc: { id: key_id, account_id, name, key_hash, prefix, scopes, created_at: issued_at, revoked_at: null },
          },
        ];
      }
      case 'ApiKeyRevoked':
        return [
          { op: 'patch', collection: API_KEYS, where: { id: event.data.key_id }, set: { revoked_at: event.data.revoked_at } },
        ];
      default:
        return [];
    }
  },
};
