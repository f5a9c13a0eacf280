import { ACCOUNTS, API_KEYS } from '../../projections/accounts.js';
import type { ReadModelStore } from '../infra/read-models/port.js';
import { API_KEY, hashApiKey, sameHash } from './api-keys.js';
import { Plan, Scope } from './plans.js';

export interface Caller {
  accountId: string;
  plan: Plan;
  keyId: string;
  scopes: Scope[];
}

/** The caller behind a presented key, or null when the key is malformed, unknown or revoked. */
export async function authenticate(readModels: ReadModelStore, presented: string): Promise<Caller | null> {
  if (!API_KEY.test(presented)) return null;
  const hash = hashApiKey(presented);
  const [key] = await readModels.find(API_KEYS, { key_hash: hash }, { limit: 1 });
  if (!key || typeof key.key_hash !== 'string' || !sameHash(key.key_hash, hash) || key.revoked_at) return null;
  const account = await readModels.get(ACCOUNTS, String(key.account_id));
  if (!account) return null;
  return {
    accountId: account.id,
    plan: Plan.parse(account.plan),
    keyId: key.id,
    scopes: Scope.array().parse(key.scopes),
  };
}
