import { execute, type CommandMeta } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import type { Context } from '../kernel/context.js';
import { API_KEYS } from '../../projections/accounts.js';
import { account, type NewKey } from './account.js';
import { generateApiKey } from './api-keys.js';
import type { Plan, Scope } from './plans.js';

type Deps = Pick<Context, 'commands' | 'readModels' | 'clock' | 'ids' | 'random' | 'keyUsage'>;

function meta(deps: Deps, actor: string): CommandMeta {
  return { actor, at: deps.clock() };
}

function newKey(deps: Deps, name: string, scopes: Scope[]): { key: NewKey; apiKey: string } {
  const generated = generateApiKey(deps.random);
  return {
    apiKey: generated.key,
    key: { key_id: deps.ids('key'), name, key_hash: generated.hash, prefix: generated.prefix, scopes },
  };
}

export async function openAccount(deps: Deps, input: { name: string; plan: Plan; scopes: Scope[] }, actor = 'cli') {
  const accountId = deps.ids('acc');
  const { key, apiKey } = newKey(deps, 'default', input.scopes);
  const m = meta(deps, actor);
  await execute(deps.commands, account, accountId, {
    type: 'OpenAccount',
    account_id: accountId,
    name: input.name,
    plan: input.plan,
    key,
    at: m.at.toISOString(),
  }, m);
  return { account_id: accountId, plan: input.plan, key_id: key.key_id, api_key: apiKey, scopes: key.scopes };
}

export async function createKey(deps: Deps, input: { accountId: string; name: string; scopes: Scope[] }, actor = 'cli') {
  const { key, apiKey } = newKey(deps, input.name, input.scopes);
  const m = meta(deps, actor);
  await execute(deps.commands, account, input.accountId, { type: 'IssueApiKey', key, at: m.at.toISOString() }, m);
  return { key_id: key.key_id, api_key: apiKey, prefix: key.prefix, scopes: key.scopes };
}

export async function revokeKey(deps: Deps, keyId: string, actor = 'cli') {
  const doc = await deps.readModels.get(API_KEYS, keyId);
  if (!doc) throw new AppError('key_not_found', 'no such key');
  const m = meta(deps, actor);
  await execute(deps.commands, account, String(doc.account_id), { type: 'RevokeApiKey', key_id: keyId, at: m.at.toISOString() }, m);
  return { key_id: keyId, revoked: true as const };
}

export async function changePlan(deps: Deps, accountId: string, plan: Plan, actor = 'cli') {
  const m = meta(deps, actor);
  await execute(deps.commands, account, accountId, { type: 'ChangePlan', plan, at: m.at.toISOString() }, m);
  return { account_id: accountId, plan };
}

/** What may be shown of an account's keys: never the key, never its hash. */
export async function listKeys(deps: Deps, accountId: string) {
  if (!(await deps.readModels.get('accounts', accountId))) throw new AppError('account_not_found', 'no such account');
  const keys = await deps.readModels.find(API_KEYS, { account_id: accountId }, { sort: [['created_at', 1], ['id', 1]] });
  return Promise.all(
    keys.map(async (k) => ({
      key_id: k.id,
      name: k.name,
      prefix: k.prefix,
      scopes: k.scopes,
      created_at: k.created_at,
      last_used_at: await deps.keyUsage.lastUsed(k.id),
      revoked_at: k.revoked_at ?? null,
    })),
  );
}
