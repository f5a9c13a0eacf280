import { z } from 'zod';
import { AppError, type ErrorDetail } from '../errors.js';
import type { Services } from '../services.js';
import type { SubmissionRequest } from '../submissions/metadata.js';
import { accessFacts, checkAccess, reserveSlot } from '../submissions/submit.js';
import { appendFirstVisit, assertFirstVisit, caughtByHoneypot, visitorMeta, visitorStream } from '../submissions/visitors.js';
import type { Plan } from '../accounts/plans.js';
import type { Poll } from './poll.js';

/** D8: `{option_ids, _token, metadata?: {fingerprint}}`; unknown keys are dropped. */
export const VoteBody = z.object({
  option_ids: z.array(z.string().max(64)).min(1).max(20),
  _token: z.string().max(1000).optional(),
  /** The honeypot: a hidden input only bots fill. */
  _hp: z.string().max(1000).optional(),
  metadata: z.object({ fingerprint: z.string().max(512).optional() }).default({}),
}).meta({
  examples: [{ option_ids: ['opt_01JD3Q5V8K2M4N6P8R0S2T4V6X'], _token: 'v1.poll.pol_01JD3Q5V8K2M4N6P8R0S2T4V6Z.m3u9x0a1.Xb8…', metadata: { fingerprint: '5c1f9e0d2b7a4e63' } }],
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

/** Records one vote and returns its id (undefined when the honeypot caught a bot and nothing was kept). */
export async function castVote(services: Services, poll: Poll, plan: Plan, body: VoteBody, request: Pick<SubmissionRequest, 'headers' | 'ip'>, requestId?: string): Promise<string | undefined> {
  const now = services.clock();
  const target = { kind: 'poll' as const, id: poll.id, published: poll.published, settings: poll.settings };
  checkAccess(target, await accessFacts(services, target, body._token, request.headers, now));
  const details = checkChoice(poll, body.option_ids);
  if (details.length > 0) throw new AppError('validation_error', 'The vote is invalid', details);
  if (caughtByHoneypot(services, 'poll', poll.settings, plan, body._hp)) return undefined;

  // Each visitor's vote is the one event of their own stream, so the store refuses a second.
  const stream = visitorStream(services, `vote-${poll.id}`, { fingerprint: body.metadata.fingerprint, ip: request.ip });
  await assertFirstVisit(services, 'poll', stream);
  const voteId = services.ids('vote');
  const meta = visitorMeta(now, requestId);
  await reserveSlot(services, target, voteId, meta);
  const { position } = await appendFirstVisit(
    services,
    'poll',
    stream,
    services.catalog.serialize({ type: 'VoteCast', data: { vote_id: voteId, poll_id: poll.id, account_id: poll.account_id, option_ids: body.option_ids, cast_at: now.toISOString() } }, meta),
  );
  await services.commands.awaitProjections(position);
  return voteId;
}
