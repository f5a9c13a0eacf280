import { z } from 'zod';
import { AppError, type ErrorDetail } from '../errors.js';
import { WrongExpectedRevision } from '../infra/event-store/port.js';
import { keyedHash } from '../infra/keys.js';
import type { Services } from '../services.js';
import type { SubmissionRequest } from '../submissions/metadata.js';
import { accessFacts, checkAccess, reserveSlot } from '../submissions/submit.js';
import type { Plan } from '../accounts/events.js';
import type { Poll } from './poll.js';

/** D8: `{option_ids, _token, metadata?: {fingerprint}}`; unknown keys are dropped. */
export const VoteBody = z.object({
  option_ids: z.array(z.string().max(64)).min(1).max(20),
  _token: z.string().max(1000).optional(),
  /** The honeypot: a hidden input only bots fill. */
  _hp: z.string().max(1000).optional(),
  metadata: z.object({ fingerprint: z.string().max(512).optional() }).default({}),
});
export type VoteBody = z.infer<typeof VoteBody>;

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
 * The voter's stream: one per poll and voter, so the store itself refuses a
 * second vote, however close the two arrive. The voter is their fingerprint,
 * or their address when the embed sent none; both keyed-hashed.
 */
export function voteStream(services: Pick<Services, 'keys'>, pollId: string, voter: { fingerprint?: string; ip: string }): string {
  const who = voter.fingerprint ? `fingerprint:${voter.fingerprint}` : `ip:${voter.ip}`;
  return `vote-${pollId}-${keyedHash(services.keys.hashes, who)}`;
}

export async function castVote(services: Services, poll: Poll, plan: Plan, body: VoteBody, request: Pick<SubmissionRequest, 'headers' | 'ip'>, requestId?: string): Promise<void> {
  const now = services.clock();
  const target = { kind: 'poll' as const, id: poll.id, published: poll.published, settings: poll.settings };
  checkAccess(target, await accessFacts(services, target, body._token, request.headers, now));
  const details = checkChoice(poll, body.option_ids);
  if (details.length > 0) throw new AppError('validation_error', 'The vote is invalid', details);
  if (plan !== 'free' && poll.settings.honeypot && body._hp) {
    services.metrics.increment('feedback_honeypot_caught_total', { kind: 'poll' });
    return;
  }

  const stream = voteStream(services, poll.id, { fingerprint: body.metadata.fingerprint, ip: request.ip });
  const duplicate = () => new AppError('duplicate_submission', 'This visitor has voted in this poll already');
  // Checked before taking a slot, so a repeat does not use up the poll's limit.
  if ((await services.events.readStream(stream, { maxCount: 1 })).length > 0) throw duplicate();
  const voteId = services.ids('vote');
  const meta = { occurred_at: now.toISOString(), actor: 'public', ...(requestId ? { request_id: requestId } : {}) };
  await reserveSlot(services, target, voteId, meta);
  try {
    const { position } = await services.events.append(
      stream,
      [services.catalog.serialize({ type: 'VoteCast', data: { vote_id: voteId, poll_id: poll.id, account_id: poll.account_id, option_ids: body.option_ids, cast_at: now.toISOString() } }, meta)],
      'no_stream',
    );
    await services.commands.awaitProjections(position);
  } catch (error) {
    if (error instanceof WrongExpectedRevision) throw duplicate();
    throw error;
  }
}
