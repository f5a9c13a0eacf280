import type { Plan } from '../accounts/plans.js';
import type { EventOf } from '../kernel/event-catalog.js';
import { AppError, type ErrorDetail } from '../kernel/errors.js';
import { checkAccess, type Gate } from '../embeddables/access.js';
import { caughtByHoneypot, checkVisitor, slotFor, visitorClaims, type Guarded, type NetworkCounted, type SlotReserved, type VisitorFacts, networkLimit, type Guards } from '../submissions/decide.js';
import type { VoteCast } from './events.js';
import type { Poll } from './poll.js';

/** A visitor's vote, with what the shell learnt of the request. */
export interface CastVote {
  voteId: string;
  /** The owner's plan now: the honeypot follows it. */
  plan: Plan;
  optionIds: string[];
  /** The honeypot field as sent. */
  honeypot?: string | undefined;
  now: Date;
  /** The embed token's issue time, or null when it is missing, forged, expired or another object's. */
  issuedAt: Date | null;
  host: string | null;
}

/** What the store holds that a vote is decided on (`visited`: the visitor's vote stream exists). */
export interface VoteState extends VisitorFacts {
  poll: Poll;
  /** Every `max_responses` slot is taken. */
  full: boolean;
}

export type VoteDecision = Array<Guarded | NetworkCounted | SlotReserved | EventOf<typeof VoteCast>>;

/** One id unless the poll allows several; each an option of the poll, none twice. */
export function checkChoice(poll: Pick<Poll, 'options' | 'allow_multiple'>, optionIds: string[]): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  if (!poll.allow_multiple && optionIds.length > 1) details.push({ path: 'body.option_ids', message: 'this poll takes one option' });
  if (new Set(optionIds).size !== optionIds.length) details.push({ path: 'body.option_ids', message: 'must not name an option twice' });
  const known = new Set(poll.options.map((o) => o.id));
  optionIds.forEach((id, i) => {
    if (!known.has(id)) details.push({ path: `body.option_ids.${i}`, message: 'is not an option of this poll' });
  });
  return details;
}

/**
 * Published, not closed, token, domain, the choice; then a honeypot catch
 * decides nothing, and a visitor who voted (or, under
 * `network_limit_per_hour`, whose network reached it) is a duplicate,
 * whatever the plan. Otherwise, in the order they
 * are to be recorded: the visitor's claims, the slot (under
 * `max_responses`), then the vote, which follows the guard in the visitor's
 * own stream.
 */
export function decideVote(command: CastVote, state: VoteState): VoteDecision {
  const { poll } = state;
  const gate: Gate = { kind: 'poll', id: poll.id, published: poll.published, settings: poll.settings };
  checkAccess(gate, { ...command, full: state.full });
  const details = checkChoice(poll, command.optionIds);
  if (details.length > 0) throw new AppError('validation_error', 'The vote is invalid', details);
  if (caughtByHoneypot(poll.settings, command.plan, command.honeypot)) return [];
  // Every poll guards its visitors; the network limit is the poll's own choice.
  const guards: Guards = { visitor: true, network: networkLimit(poll.settings) };
  checkVisitor('poll', state, guards);
  return [
    ...visitorClaims(gate, command.voteId, guards),
    ...slotFor(gate, command.voteId),
    { type: 'VoteCast', data: { vote_id: command.voteId, poll_id: poll.id, account_id: poll.account_id, option_ids: command.optionIds, cast_at: command.now.toISOString() } },
  ];
}
