import type { Aggregate } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import type { DashboardEvent } from './events.js';

/** However active, a session ends this long after its sign-in. */
export const SESSION_LIFETIME_MS = 12 * 60 * 60 * 1000;

export const linkUsed = () => new AppError('login_link_used', 'This login link has been used already: ask for a new one');

export type SessionCommand =
  | { type: 'SignIn'; session_id: string; account_id: string; link_id: string; at: string }
  | { type: 'SignOut'; session_id: string; reason: 'signed_out' | 'expired'; at: string };

export type SessionState =
  | { status: 'none' }
  | { status: 'active' | 'ended'; session_id: string; account_id: string; link_id: string; signed_in_at: string };

export function evolve(state: SessionState, event: DashboardEvent): SessionState {
  switch (event.type) {
    case 'DashboardSignedIn':
      return { status: 'active', ...event.data };
    case 'DashboardSignedOut':
      return state.status === 'none' ? state : { ...state, status: 'ended' };
    default:
      return state;
  }
}

export function decide(command: SessionCommand, state: SessionState): DashboardEvent[] {
  switch (command.type) {
    case 'SignIn': {
      // A link's stream holds at most one session: the second use finds it.
      if (state.status !== 'none') throw linkUsed();
      const { session_id, account_id, link_id, at } = command;
      return [{ type: 'DashboardSignedIn', data: { session_id, account_id, link_id, signed_in_at: at } }];
    }
    case 'SignOut':
      // Ending a session that has ended (two tabs, two instances) changes nothing.
      if (state.status !== 'active' || state.session_id !== command.session_id) return [];
      return [{ type: 'DashboardSignedOut', data: { session_id: state.session_id, account_id: state.account_id, reason: command.reason, signed_out_at: command.at } }];
  }
}

/** A dashboard session lives in the stream of the link that started it, so a link signs in once, even across instances. */
export const session: Aggregate<SessionState, DashboardEvent, SessionCommand> = {
  streamId: (linkId) => `login-${linkId}`,
  initial: () => ({ status: 'none' }),
  evolve,
  decide,
};

/**
 * When a session that started at `signedInAt` and was last seen at
 * `lastActiveAt` ends, if nothing happens before: after `idleMs` without a
 * request, or at its lifetime's end, whichever comes first.
 */
export function sessionEndsAt(signedInAt: Date, lastActiveAt: Date, idleMs: number): Date {
  return new Date(Math.min(lastActiveAt.getTime() + idleMs, signedInAt.getTime() + SESSION_LIFETIME_MS));
}
