import type { Aggregate } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import { textProblem } from '../kernel/text.js';
import type { AccountEvent } from './events.js';
import type { Plan, Scope } from './plans.js';

export interface NewKey {
  key_id: string;
  name: string;
  key_hash: string;
  prefix: string;
  scopes: Scope[];
}

/** The first owner an account is opened with, recorded in its opening. */
export interface FirstOwner {
  member_id: string;
  email: string;
  via: 'account_opened' | 'sign_up';
  link_id: string | null;
  by: string;
}

/** Keys made after the account are issued in streams of their own (key.ts); the account's stream keeps those it already holds. */
export type AccountCommand =
  | { type: 'OpenAccount'; account_id: string; name: string; plan: Plan; key: NewKey; owner?: FirstOwner | undefined; at: string }
  | { type: 'RevokeApiKey'; key_id: string; at: string }
  | { type: 'ChangePlan'; plan: Plan; at: string };

export type AccountState =
  | { status: 'none' }
  | { status: 'open'; account_id: string; plan: Plan; keys: Map<string, { revoked: boolean }> };

export function evolve(state: AccountState, event: AccountEvent): AccountState {
  switch (event.type) {
    case 'AccountOpened':
      return { status: 'open', account_id: event.data.account_id, plan: event.data.plan, keys: new Map() };
    case 'AccountPlanChanged':
      return state.status === 'open' ? { ...state, plan: event.data.to } : state;
    case 'ApiKeyIssued':
    case 'ApiKeyRevoked': {
      if (state.status !== 'open') return state;
      const keys = new Map(state.keys);
      keys.set(event.data.key_id, { revoked: event.type === 'ApiKeyRevoked' });
      return { ...state, keys };
    }
  }
}

/** Names are shown in listings and terminals: refused with the rules of every other text (docs/api.md, "Text"). */
function checkName(what: string, name: string): void {
  const problem = textProblem(name);
  if (problem) throw new AppError('validation_error', `the ${what} name ${problem}`);
}

export function decide(command: AccountCommand, state: AccountState): AccountEvent[] {
  if (command.type === 'OpenAccount') checkName('account', command.name);
  if (command.type === 'OpenAccount') {
    if (state.status !== 'none') throw new AppError('account_exists', `account ${command.account_id} exists already`);
    const { account_id, name, plan, key, owner, at } = command;
    return [
      // The owner in the same event: one append opens the account with its owner, or nothing.
      { type: 'AccountOpened', data: { account_id, name, plan, opened_at: at, ...(owner ? { owner } : {}) } },
      { type: 'ApiKeyIssued', data: { account_id, ...key, issued_at: at } },
    ];
  }
  if (state.status !== 'open') throw new AppError('account_not_found', 'no such account');
  const { account_id } = state;
  switch (command.type) {
    case 'RevokeApiKey': {
      const key = state.keys.get(command.key_id);
      if (!key) throw new AppError('key_not_found', 'no such key');
      // Revoking twice changes nothing and is not an error.
      if (key.revoked) return [];
      return [{ type: 'ApiKeyRevoked', data: { account_id, key_id: command.key_id, revoked_at: command.at } }];
    }
    case 'ChangePlan':
      if (state.plan === command.plan) return [];
      return [{ type: 'AccountPlanChanged', data: { account_id, from: state.plan, to: command.plan, changed_at: command.at } }];
  }
}

export const account: Aggregate<AccountState, AccountEvent, AccountCommand> = {
  streamId: (id) => `account-${id}`,
  initial: () => ({ status: 'none' }),
  evolve,
  decide,
};
