import type { Plan } from '../accounts/plans.js';
import type { Context } from '../kernel/context.js';
import { checkAccess } from '../embeddables/access.js';
import { decideSubmission, guardsDuplicates, type SubmissionDecision, type SubmissionTarget, networkLimit } from './decide.js';
import { captureMetadata, type SubmissionRequest } from './metadata.js';
import { sessionClosed, sessionResponse, type SessionResponse } from './progress.js';
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
} from './visitors.js';

export type { SubmissionTarget } from './decide.js';

export interface SubmissionInput {
  /** The owner's plan now: metadata and the honeypot follow it. */
  plan: Plan;
  token: unknown;
  /** The token's issue time when its signature and object were verified already (on the summary). */
  tokenIssuedAt?: Date;
  /** The honeypot field as sent. */
  honeypot?: string | undefined;
  answers: Record<string, unknown>;
  /** The hidden fields' values as sent. */
  hidden?: Record<string, unknown> | undefined;
  /** The language the visitor saw, as sent. */
  language?: string | undefined;
  request: SubmissionRequest;
  /** A form's visit: the response its pages were kept under (`keep_partial`), which this submission completes. */
  session?: string | undefined;
  /** The object's stream as the decision saw it: the store refuses the append (ObjectChanged) if it moved on since. */
  unchanged?: ObjectAt;
}

/** Where each decided event is recorded; the visitor's streams are there where the object's settings, which alone decide their events, take them. */
function placement(
  event: SubmissionDecision[number],
  target: SubmissionTarget,
  responseId: string,
  visitor: { guard?: string | undefined; network?: string | undefined },
  partial: SessionResponse | undefined,
): Placement {
  switch (event.type) {
    case 'SubmissionSlotReserved':
      return slotPlacement(target);
    case 'SubmissionGuarded':
      return firstVisitPlacement(target.kind, visitor.guard!);
    case 'NetworkSubmissionCounted':
      return networkPlacement(target.kind, visitor.network!, networkLimit(target.settings)!);
    case 'ResponseSubmitted':
      // After the pages kept of it, at the revision read: a page or a submission of the same session in between refuses it.
      return partial ? { stream: partial.stream, expected: partial.at, refused: sessionClosed() } : { stream: `response-${responseId}`, expected: 'no_stream' };
  }
}

/**
 * Records one response: gathers what the decision needs (the token, the
 * request's metadata by the owner's plan at this moment, the slots and the
 * visitor's guard), decides, and appends what was decided, each event where
 * the store enforces its rule. Returns the response's id once the read
 * models show it, with where it was recorded. `kept` is false for a honeypot
 * catch: the bot gets an id, nothing is stored.
 */
export async function submitResponse(
  services: Context,
  target: SubmissionTarget,
  input: SubmissionInput,
  requestId?: string,
): Promise<{ id: string; kept: false } | { id: string; kept: true; position: bigint }> {
  const now = services.clock();
  const { plan, request } = input;
  const userAgent = userAgentOf(request.headers);
  // The visitor's streams (keyed hashes) only where the object guards against duplicates.
  const visitor = {
    guard: guardsDuplicates(target.settings) ? visitorStream(services, `guard-${target.kind}-${target.id}`, { fingerprint: request.client.fingerprint, ip: request.ip }) : undefined,
    network: networkLimit(target.settings) !== null ? networkStream(services, target, { ip: request.ip, userAgent }, now) : undefined,
  };
  const [facts, seen, partial] = await Promise.all([
    accessFacts(services, target, input.token, request.headers, now, input.tokenIssuedAt),
    visitor.guard !== undefined || visitor.network !== undefined ? visitorFacts(services, visitor) : { visited: false, fromNetwork: 0 },
    target.kind === 'form' && input.session !== undefined ? sessionResponse(services, target.id, input.session) : undefined,
  ]);
  // The cheap refusals first, before the request's metadata is worked out (the decision checks them again).
  checkAccess(target, facts);
  if (partial?.closed) throw sessionClosed();
  const responseId = partial?.id ?? services.ids('rsp');
  const events = decideSubmission(
    {
      responseId,
      plan,
      answers: input.answers,
      hidden: input.hidden,
      language: input.language,
      honeypot: input.honeypot,
      now,
      issuedAt: facts.issuedAt,
      host: facts.host,
      metadata: await captureMetadata({ plan, request, issuedAt: facts.issuedAt ?? now, now }, { hashKey: services.keys.hashes, geo: services.geo }),
      userAgent,
      ...(visitor.guard !== undefined ? { guard: visitor.guard } : {}),
    },
    { target, full: facts.full, ...seen },
  );
  if (events.length === 0) {
    countHoneypotCatch(services, target.kind);
    return { id: responseId, kept: false };
  }
  const position = await record(services, events, (event) => placement(event, target, responseId, visitor, partial), visitorMeta(now, requestId), input.unchanged);
  await services.commands.awaitProjections(position);
  return { id: responseId, kept: true, position };
}
