import type { Aggregate } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import { textProblem } from '../kernel/text.js';
import type { NewKey } from './account.js';
import type { AccountEvent } from './events.js';

/** The most keys an account may hold unrevoked: each is a credential to watch, and they share one rate limit. */
export const MAX_ACTIVE_KEYS = 50;

export type KeyCommand =
  /** `active_keys`: how many unrevoked keys the account holds as the command is made. */
  | { type: 'IssueApiKey'; account_id: string; key: NewKey; active_keys: number; at: string }
  | { type: 'RevokeApiKey'; key_id: string; at: string };

export type KeyState = { status: 'none' } | { status: 'active' | 'revoked'; account_id: string };

export function evolve(state: KeyState, event: AccountEvent): KeyState {
  switch (event.type) {
    case 'ApiKeyIssued':
      return { status: 'active', account_id: event.data.account_id };
    case 'ApiKeyRevoked':
      return state.status === 'none' ? state : { ...state, status: 'revoked' };
    default:
      return state;
  }
}

export function decide(command: KeyCommand, state: KeyState): AccountEvent[] {
  switch (command.type) {
    case 'IssueApiKey': {
      const problem = textProblem(command.key.name);
      if (problem) throw new AppError('validation_error', `the key name ${problem}`);
      if (state.status !== 'none') throw new AppError('conflict', `key ${command.key.key_id} exists already`);
      if (command.active_keys >= MAX_ACTIVE_KEYS) {
        throw new AppError('key_limit_reached', `The account has ${command.active_keys} active API keys, and may hold ${MAX_ACTIVE_KEYS}: revoke one to create another`);
      }
      return [{ type: 'ApiKeyIssued', data: { account_id: command.account_id, ...command.key, issued_at: command.at } }];
    }
    case 'RevokeApiKey':
      if (state.status === 'none') throw new AppError('key_not_found', 'no such key');
      // Revoking twice changes nothing and is not an error.
      if (state.status === 'revoked') return [];
      return [{ type: 'ApiKeyRevoked', data: { account_id: state.account_id, key_id: command.key_id, revoked_at: command.at } }];
  }
}

/**
 * A key made after its account was opened lives in a stream of its own
 * (its issue and its revocation), not in the account's: making a key then
 * reads and writes a stream of one event whatever number of keys the account
 * ever had, where the account's stream grew with every key and each new key
 * replayed it. The account's first key stays in the account's stream, made
 * with it; so do the keys made before keys had streams of their own.
 */
export const apiKey: Aggregate<KeyState, AccountEvent, KeyCommand> = {
  streamId: (id) => `api-key-${id}`,
  initial: () => ({ status: 'none' }),
  evolve,
  decide,
};
