import { z } from 'zod';
import type { Plan } from '../accounts/plans.js';
import type { Context } from '../kernel/context.js';
import type { Gate } from '../embeddables/access.js';
import { duplicate, networkLimit } from '../submissions/decide.js';
import { pageFact, type SubmissionRequest } from '../submissions/metadata.js';
import {
  accessFacts,
  countHoneypotCatch,
  firstVisitPlacement,
  networkPlacement,
  networkStream,
  record,
  slotPlacement,
  userAgentOf,
  visitorFacts,
  visitorMeta,
  visitorStream,
  type ObjectAt,
  type Placement,
} from '../submissions/visitors.js';
import type { Poll } from './poll.js';
import { decideVote, type VoteDecision } from './vote.js';

/** D8: `{option_ids, _token, metadata?: {fingerprint}}`; unknown keys are dropped. */
export const VoteBody = z.object({
  option_ids: z.array(z.string().max(64)).min(1).max(20),
  _token: z.string().max(1000).optional(),
  /** The honeypot: a hidden input only bots fill. */
  _hp: z.string().max(1000).optional(),
  metadata: z.object({ fingerprint: pageFact(512).optional() }).default({}),
}).meta({
  examples: [{ option_ids: ['opt_01JD3Q5V8K2M4N6P8R0S2T4V6X'], _token: 'v1.poll.pol_01JD3Q5V8K2M4N6P8R0S2T4V6Z.m3u9x0a1.Xb8…', metadata: { fingerprint: '5c1f9e0d2b7a4e63' } }],
});
export type VoteBody = z.infer<typeof VoteBody>;

/**
 * Records one vote: gathers what the decision needs, decides, and appends
 * what was decided: the guard, which makes the visitor's own stream (so the
 * store refuses a second vote before it takes a slot), the network's count
 * (under `network_limit_per_hour`),
 * the slot, and the vote after the guard. Returns its id and where it was
 * recorded (undefined when the honeypot caught a bot and nothing was kept).
 */
export async function castVote(
  services: Context,
  poll: Poll,
  plan: Plan,
  body: VoteBody,
  request: Pick<SubmissionRequest, 'headers' | 'ip'>,
  requestId?: string,
  unchanged?: ObjectAt,
): Promise<{ id: string; position: bigint } | undefined> {
  const now = services.clock();
  const target: Gate = { kind: 'poll', id: poll.id, published: poll.published, settings: poll.settings };
  const stream = visitorStream(services, `vote-${poll.id}`, { fingerprint: body.metadata.fingerprint, ip: request.ip });
  // The network's count only where the poll has a limit on it.
  const limit = networkLimit(poll.settings);
  const network = limit !== null ? networkStream(services, target, { ip: request.ip, userAgent: userAgentOf(request.headers) }, now) : undefined;
  const [facts, visitor] = await Promise.all([accessFacts(services, target, body._token, request.headers, now), visitorFacts(services, { visitor: stream, network })]);
  const voteId = services.ids('vote');
  const events = decideVote(
    { voteId, plan, optionIds: body.option_ids, honeypot: body._hp, now, issuedAt: facts.issuedAt, host: facts.host },
    { poll, full: facts.full, ...visitor },
  );
  if (events.length === 0) {
    countHoneypotCatch(services, 'poll');
    return undefined;
  }
  const place = (event: VoteDecision[number]): Placement => {
    switch (event.type) {
      case 'SubmissionGuarded':
        return firstVisitPlacement('poll', stream);
      case 'NetworkSubmissionCounted':
        return networkPlacement('poll', network!, limit!);
      case 'SubmissionSlotReserved':
        return slotPlacement(target);
      case 'VoteCast':
        // After the guard, the one event before it in the visitor's stream.
        return { stream, expected: 0n, refused: duplicate('poll') };
    }
  };
  const position = await record(services, events, place, visitorMeta(now, requestId), unchanged);
  await services.commands.awaitProjections(position);
  return { id: voteId, position };
}
