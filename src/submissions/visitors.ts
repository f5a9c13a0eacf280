import { keptState, load, loadWithRevision, type Aggregate } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import type { EventMetadata } from '../kernel/event-catalog.js';
import { PartlyAppended, RevisionLimitReached, WrongExpectedRevision, type ExpectedRevision, type StreamAppend } from '../infra/event-store/port.js';
import { keyedHash } from '../infra/keys.js';
import type { Context } from '../kernel/context.js';
import type { FeedEvent } from '../kernel/feed/projection.js';
import { embeddingHost, verifyEmbedToken, withinLifetime, type AccessFacts, type Gate } from '../embeddables/access.js';
import { duplicate, NETWORK_WINDOW_MS, networkSpent, type VisitorFacts } from './decide.js';
import type { SubmissionRequest } from './metadata.js';
import { closed, type Kind } from '../embeddables/kinds.js';

/**
 * What a visitor's submission reads from the store before it is decided, the
 * object's state it is decided on, and how what was decided is recorded:
 * shared by responses and votes.
 */

/** Metadata of the events a public visitor causes. */
export const visitorMeta = (now: Date, requestId?: string): Omit<EventMetadata, 'schema_version'> => ({
  occurred_at: now.toISOString(),
  actor: 'public',
  ...(requestId ? { request_id: requestId } : {}),
});

/**
 * A stream that exists once per visitor of an object: `<prefix>-<hash>`,
 * the visitor being their fingerprint, else their address, keyed-hashed.
 * Poll votes live in theirs; `prevent_duplicates` keeps a guard in one.
 */
export function visitorStream(services: Pick<Context, 'keys'>, prefix: string, visitor: { fingerprint?: string | undefined; ip: string }): string {
  const who = visitor.fingerprint ? `fingerprint:${visitor.fingerprint}` : `ip:${visitor.ip}`;
  return `${prefix}-${keyedHash(services.keys.hashes, who)}`;
}

/**
 * Whether the visitor's stream was made: they submitted already. A stream
 * deleted by an erasure counts too, as the store refuses to make it again:
 * the erased submission stays the visitor's one, and a repeat is refused here,
 * before it takes a slot.
 */
export async function visited(services: Context, stream: string): Promise<boolean> {
  return (await services.events.streamState(stream)) !== 'no_stream';
}

/**
 * The address a network is known by: an IPv4 address whole (also written as
 * IPv4-mapped IPv6), an IPv6 address by its /64, which one subscriber
 * usually holds whole and can change addresses in at will.
 */
export function networkAddress(ip: string): string {
  const address = ip.replace(/%.*$/, '').toLowerCase();
  if (!address.includes(':')) return address;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(address);
  if (mapped) return mapped[1]!;
  const [head = '', tail] = address.split('::');
  const front = head ? head.split(':') : [];
  const back = tail ? tail.split(':') : [];
  const groups = tail === undefined ? front : [...front, ...Array<string>(Math.max(0, 8 - front.length - back.length)).fill('0'), ...back];
  return `${groups.slice(0, 4).map((group) => (parseInt(group, 16) || 0).toString(16)).join(':')}::/64`;
}

/**
 * The stream that counts a network's submissions to an object in one clock
 * hour: the network's address and the user agent, with the hour's number,
 * keyed-hashed; a new hour is a new stream.
 */
export function networkStream(services: Pick<Context, 'keys'>, target: Pick<Gate, 'kind' | 'id'>, network: { ip: string; userAgent: string }, now: Date): string {
  const hour = Math.floor(now.getTime() / NETWORK_WINDOW_MS);
  return `net-${target.kind}-${target.id}-${keyedHash(services.keys.hashes, `network:${networkAddress(network.ip)}\n${network.userAgent}\n${hour}`)}`;
}

/** The user agent as the network signal takes it: one header, else none. */
export const userAgentOf = (headers: SubmissionRequest['headers']): string => {
  const agent = headers['user-agent'];
  return typeof agent === 'string' ? agent : '';
};

/** What the decision knows of a visitor: whether their own stream exists, and what their network's stream counted (each only where the object looks). */
export async function visitorFacts(services: Context, streams: { visitor?: string | undefined; network?: string | undefined }): Promise<VisitorFacts> {
  const [seen, network] = await Promise.all([
    streams.visitor === undefined ? false : visited(services, streams.visitor),
    streams.network === undefined ? 'no_stream' : services.events.streamState(streams.network),
  ]);
  // Network streams are never deleted; were one, it could take nothing more.
  const fromNetwork = network === 'no_stream' ? 0 : network === 'deleted' ? Number.MAX_SAFE_INTEGER : Number(network) + 1;
  return { visited: seen, fromNetwork };
}

/** The slots of an object under `max_responses`, numbered by the store's revisions. */
const quotaStream = (target: Pick<Gate, 'kind' | 'id'>) => `quota-${target.kind}-${target.id}`;

/** Whether every `max_responses` slot of the object is taken: the slot numbered max - 1 exists. */
async function slotsFull(services: Context, target: Gate): Promise<boolean> {
  const max = target.settings.max_responses;
  if (max === null) return false;
  const slot = await services.events.readStream(quotaStream(target), { fromRevision: BigInt(max - 1), maxCount: 1 });
  return slot.length > 0;
}

/**
 * The facts of a request about an object, read from the token, the headers
 * and the quota stream. `verified` is the issue time of the same token when
 * its signature and object were checked already (on the summary): only its
 * lifetime is checked again, at `now`.
 */
export async function accessFacts(
  services: Context,
  target: Gate,
  token: unknown,
  headers: SubmissionRequest['headers'],
  now: Date,
  verified?: Date,
): Promise<AccessFacts> {
  return {
    now,
    issuedAt: verified ? withinLifetime(verified, now) : verifyEmbedToken(services.keys.embedTokens, token, target.kind, target.id, now),
    host: embeddingHost(headers, services.config.PUBLIC_BASE_URL),
    full: await slotsFull(services, target),
  };
}

/** A bot's submission is answered as a success, keeps nothing, and is counted at /metrics. */
export const countHoneypotCatch = (services: Pick<Context, 'metrics'>, kind: Kind): void =>
  services.metrics.increment('feedback_honeypot_caught_total', { kind });

/**
 * Where a decided event is recorded, and the revision the store must find
 * there, so that the store, not a read made earlier, enforces the rule.
 */
export interface Placement {
  stream: string;
  expected: ExpectedRevision;
  /** The answer when the store finds the stream other than `expected` says. */
  refused?: AppError;
  /** The revision the event gets must stay below `below`, else `error` is the answer. */
  cap?: { below: number; error: AppError };
}

/**
 * A slot goes anywhere in the object's quota stream; the revision it gets
 * numbers it, so the count is exact under any concurrency, and a slot that
 * would be numbered past `max_responses` means the object closed meanwhile
 * (the embedded store then stores none of the submission).
 */
export function slotPlacement(target: Gate): Placement {
  const max = target.settings.max_responses;
  return { stream: quotaStream(target), expected: 'any', ...(max !== null ? { cap: { below: max, error: closed(target.kind) } } : {}) };
}

/** A network's count takes any revision below the object's limit: one past it is refused, however close the submissions arrive. */
export const networkPlacement = (kind: Kind, stream: string, limit: number): Placement => ({ stream, expected: 'any', cap: { below: limit, error: networkSpent(kind, limit) } });

/** The visitor's own stream, made by their first submission only: the store refuses a second however close the two arrive. */
export const firstVisitPlacement = (kind: Kind, stream: string): Placement => ({ stream, expected: 'no_stream', refused: duplicate(kind) });

/** The object's stream at the revision a decision was made on: the append's condition (stores whose appends are atomic). */
export interface ObjectAt {
  stream: string;
  revision: bigint;
}

/** The object's stream was no longer at the revision the decision was made on: nothing was stored, decide again. */
export class ObjectChanged extends Error {
  constructor() {
    super('the object changed after the decision was made');
    this.name = 'ObjectChanged';
  }
}

/**
 * Appends the decided events, each where `place` puts it, as one append
 * to several streams, and answers the feed position of the last one. On
 * the embedded store that is every event or none: a refusal, or a store
 * out of reach, leaves nothing of the submission, and the visitor may send
 * it again. A store that appends part by part (KurrentDB) may have kept
 * the events before a refused one (a slot, a guard): they count nothing
 * that was not tried.
 */
export async function record<E extends FeedEvent>(
  services: Context,
  events: E[],
  place: (event: E) => Placement,
  meta: Omit<EventMetadata, 'schema_version'>,
  unchanged?: ObjectAt,
): Promise<bigint> {
  const placements = events.map(place);
  const parts: StreamAppend[] = events.map((event, i) => {
    const { stream, expected, cap } = placements[i]!;
    return { streamId: stream, events: [services.catalog.serialize(event, meta)], expected, ...(cap ? { below: BigInt(cap.below) } : {}) };
  });
  // First, so that what the append answers is the submission's own last event.
  if (unchanged) parts.unshift({ streamId: unchanged.stream, events: [], expected: unchanged.revision });
  const placed = (streamId: string) => placements.find((placement) => placement.stream === streamId);
  try {
    return (await services.events.appendToStreams(parts)).position;
  } catch (error) {
    if (error instanceof WrongExpectedRevision && error.streamId === unchanged?.stream) throw new ObjectChanged();
    if (error instanceof WrongExpectedRevision) {
      const refused = placed(error.streamId)?.refused;
      if (refused) throw refused;
    }
    if (error instanceof RevisionLimitReached) {
      const cap = placed(error.streamId)?.cap;
      if (cap) throw cap.error;
    }
    // Recorded in part (a guard, a count, a slot): neither "nothing stored, retry" (503, 507) nor the store's own word would be true.
    if (error instanceof PartlyAppended) throw new AppError('internal_error', 'Something went wrong on our side; the request id identifies it in our logs', undefined, { cause: error });
    throw error;
  }
}

/** Appends with the condition that the object is as decided, each refused because it had moved on, before a decision is made without one. */
const CONDITIONED_ATTEMPTS = 3;

/**
 * Runs `act` (a submission or a vote: decide, append) on the state of the
 * object it answers. Where the store's appends are atomic, that is the state
 * this process last built of the object, its stream not read, and `act`
 * appends with the condition (`unchanged`) that the stream is still at that
 * revision: the store checks it with the rest, so a change (a close, a
 * deletion) that landed in between refuses the append (ObjectChanged) and
 * the decision is made again on the stored state. A refusal made on a kept
 * state is made again on the stored one too, so none rests on a state the
 * store has moved past. Elsewhere (KurrentDB appends part by part) the
 * state is read and `act` appends without a condition: `conditioned` false
 * says the object is to be looked at again (see `stillThere`).
 */
export async function onObjectAsDecided<State, Event extends { type: string; data: unknown }, Command, Target, Result>(
  services: Pick<Context, 'events' | 'commands'>,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
  targetOf: (state: State) => Target | null,
  gone: () => AppError,
  act: (target: Target, unchanged: ObjectAt | undefined) => Promise<Result>,
): Promise<{ result: Result; conditioned: boolean }> {
  const atomic = services.events.atomicAcrossStreams;
  let kept = true;
  for (let attempt = 1; ; attempt++) {
    // After those, one as without a condition: decided on the stored state, and looked at again after.
    const conditioned = atomic && attempt <= CONDITIONED_ATTEMPTS;
    const held = kept && conditioned ? keptState(services.commands, aggregate, id) : undefined;
    const found = held ?? (await loadWithRevision(services.commands, aggregate, id));
    const unchanged = conditioned && found.revision !== undefined ? { stream: aggregate.streamId(id), revision: found.revision } : undefined;
    try {
      const target = targetOf(found.state);
      if (!target) throw gone();
      return { result: await act(target, unchanged), conditioned: unchanged !== undefined };
    } catch (error) {
      // The store had moved past the state decided on, or refused on the state this process kept,
      // which the store may have moved past: decided again on the stored one.
      if (error instanceof ObjectChanged || (held !== undefined && error instanceof AppError)) {
        kept = false;
        continue;
      }
      throw error;
    }
  }
}

/** Whether the object is there (not deleted) as stored now: looked at after an append made without the condition. */
export async function stillThere<State, Event extends { type: string; data: unknown }, Command>(
  services: Pick<Context, 'commands'>,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
  targetOf: (state: State) => unknown,
): Promise<boolean> {
  return targetOf(await load(services.commands, aggregate, id)) !== null;
}

/**
 * An answer whose object was found deleted after it was recorded (an append
 * made without the condition): the erasure process erases it with the rest,
 * as a late answer if it landed after the deletion, with the object's other
 * answers if before. Waits, at most `erasureWaitMs`, until that process has
 * passed both the answer and the deletion (the store's head, read after the
 * deletion was seen) and the read models show what it recorded, so the 404
 * that follows leaves nothing readable.
 */
export async function awaitLateErasure(services: Pick<Context, 'reach' | 'erasureWaitMs' | 'commands' | 'events'>, answer: { position: bigint }): Promise<void> {
  // Read after the answer was stored and the deletion seen: at or past both.
  const head = await services.events.headPosition();
  if (await services.reach.erasure(head, services.erasureWaitMs)) await services.commands.awaitProjections(await services.events.headPosition());
}
