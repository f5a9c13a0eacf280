import { execute, type CommandMeta } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import type { Context } from '../kernel/context.js';
import { API_KEYS, ACCOUNTS } from '../../projections/accounts.js';
import { pagination, window, type PaginationQuery } from '../kernel/pagination.js';
import { account, type FirstOwner, type NewKey } from './account.js';
import { generateApiKey } from './api-keys.js';
import { apiKey } from './key.js';
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

/** An account and its first key; with `owner`, its first owner in the same event (members/commands.ts `openAccountWithOwner`). */
export async function openAccount(deps: Deps, input: { name: string; plan: Plan; scopes: Scope[]; owner?: Omit<FirstOwner, 'by'> }, actor = 'cli') {
  const accountId = deps.ids('acc');
  const { key, apiKey } = newKey(deps, 'default', input.scopes);
  const m = meta(deps, actor);
  await execute(deps.commands, account, accountId, {
    type: 'OpenAccount',
    account_id: accountId,
    name: input.name,
    plan: input.plan,
    key,
    ...(input.owner ? { owner: { ...input.owner, by: actor } } : {}),
    at: m.at.toISOString(),
  }, m);
  return { account_id: accountId, plan: input.plan, key_id: key.key_id, api_key: apiKey, scopes: key.scopes };
}

/** Key creations under way, by account: one at a time per account in this process. */
const issuing = new Map<string, Promise<unknown>>();

/** Runs `run` after every earlier run for the account has settled, so a count it makes includes their keys. */
async function oneAtATime<T>(accountId: string, run: () => Promise<T>): Promise<T> {
  const mine = (issuing.get(accountId) ?? Promise.resolve()).catch(() => undefined).then(run);
  const settled = mine.catch(() => undefined);
  issuing.set(accountId, settled);
  try {
    return await mine;
  } finally {
    if (issuing.get(accountId) === settled) issuing.delete(accountId);
  }
}

/**
 * A new key, in a stream of its own (accounts/key.ts), so its cost does not
 * grow with the keys the account ever had: the account is looked up and its
 * unrevoked keys counted in the read models (indexed), never by replaying a
 * stream. The count decides the cap; creations for one account run one at a
 * time in a process, and each replies once the read models show its key, so
 * the next one counts it.
 */
export async function createKey(deps: Deps, input: { accountId: string; name: string; scopes: Scope[] }, actor = 'cli') {
  if (!(await deps.readModels.get(ACCOUNTS, input.accountId))) throw new AppError('account_not_found', 'no such account');
  return oneAtATime(input.accountId, async () => {
    const activeKeys = await deps.readModels.count(API_KEYS, { account_id: input.accountId, revoked_at: null });
    const { key, apiKey: secret } = newKey(deps, input.name, input.scopes);
    const m = meta(deps, actor);
    await execute(deps.commands, apiKey, key.key_id, { type: 'IssueApiKey', account_id: input.accountId, key, active_keys: activeKeys, at: m.at.toISOString() }, m);
    return { key_id: key.key_id, api_key: secret, prefix: key.prefix, scopes: key.scopes };
  });
}

/** Revokes in the stream the key was issued in: its own, or (the first key, and keys made before they had their own) the account's. */
export async function revokeKey(deps: Deps, keyId: string, actor = 'cli') {
  const doc = await deps.readModels.get(API_KEYS, keyId);
  if (!doc) throw new AppError('key_not_found', 'no such key');
  const m = meta(deps, actor);
  const at = m.at.toISOString();
  if ((await deps.commands.events.streamState(apiKey.streamId(keyId))) === 'no_stream') {
    await execute(deps.commands, account, String(doc.account_id), { type: 'RevokeApiKey', key_id: keyId, at }, m);
  } else {
    await execute(deps.commands, apiKey, keyId, { type: 'RevokeApiKey', key_id: keyId, at }, m);
  }
  return { key_id: keyId, revoked: true as const };
}

export async function changePlan(deps: Deps, accountId: string, plan: Plan, actor = 'cli') {
  const m = meta(deps, actor);
  await execute(deps.commands, account, accountId, { type: 'ChangePlan', plan, at: m.at.toISOString() }, m);
  return { account_id: accountId, plan };
}

type KeyDoc = Awaited<ReturnType<Deps['readModels']['find']>>[number];

const keyView = async (deps: Deps, k: KeyDoc) => ({
  key_id: k.id,
  name: k.name,
  prefix: k.prefix,
  scopes: k.scopes,
  created_at: k.created_at,
  last_used_at: await deps.keyUsage.lastUsed(k.id),
  revoked_at: k.revoked_at ?? null,
});

/** What may be shown of an account's keys: never the key, never its hash. Every key, oldest first (the admin CLI's list). */
export async function listKeys(deps: Deps, accountId: string) {
  if (!(await deps.readModels.get(ACCOUNTS, accountId))) throw new AppError('account_not_found', 'no such account');
  const keys = await deps.readModels.find(API_KEYS, { account_id: accountId }, { sort: [['created_at', 1], ['id', 1]] });
  return Promise.all(keys.map((k) => keyView(deps, k)));
}

/** One page of an account's keys, newest first, revoked ones included, as the API pages its lists. */
export async function keyPage(deps: Deps, accountId: string, query: PaginationQuery) {
  if (!(await deps.readModels.get(ACCOUNTS, accountId))) throw new AppError('account_not_found', 'no such account');
  const [keys, total] = await Promise.all([
    deps.readModels.find(API_KEYS, { account_id: accountId }, { sort: [['created_at', -1], ['id', -1]], ...window(query) }),
    deps.readModels.count(API_KEYS, { account_id: accountId }),
  ]);
  return { keys: await Promise.all(keys.map((k) => keyView(deps, k))), pagination: pagination(query, total) };
}
