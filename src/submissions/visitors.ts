import type { Plan } from '../accounts/plans.js';
import { AppError } from '../errors.js';
import type { EventMetadata } from '../event-catalog.js';
import { WrongExpectedRevision, type AppendResult, type NewEvent } from '../infra/event-store/port.js';
import { keyedHash } from '../infra/keys.js';
import type { Services } from '../services.js';
import type { Kind } from './embeddable.js';
import type { Settings } from './settings.js';

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
export function visitorStream(services: Pick<Services, 'keys'>, prefix: string, visitor: { fingerprint?: string | undefined; ip: string }): string {
  const who = visitor.fingerprint ? `fingerprint:${visitor.fingerprint}` : `ip:${visitor.ip}`;
  return `${prefix}-${keyedHash(services.keys.hashes, who)}`;
}

const duplicate = (kind: Kind) =>
  new AppError('duplicate_submission', kind === 'poll' ? 'This visitor has voted in this poll already' : `This visitor has answered this ${kind} already`);

/** 409 when the visitor's stream exists: checked before a slot is taken, so a repeat does not use up a limit. */
export async function assertFirstVisit(services: Services, kind: Kind, stream: string): Promise<void> {
  if ((await services.events.readStream(stream, { maxCount: 1 })).length > 0) throw duplicate(kind);
}

/** Creates the visitor's stream; the store refuses a second one however close the two arrive (409). */
export async function appendFirstVisit(services: Services, kind: Kind, stream: string, event: NewEvent): Promise<AppendResult> {
  try {
    return await services.events.append(stream, [event], 'no_stream');
  } catch (error) {
    if (error instanceof WrongExpectedRevision) throw duplicate(kind);
    throw error;
  }
}

/**
 * Pro and Business: a filled honeypot is a bot. The caller answers it as a
 * success and keeps nothing; it is counted at /metrics.
 */
export function caughtByHoneypot(services: Pick<Services, 'metrics'>, kind: Kind, settings: Settings, plan: Plan, honeypot: string | undefined): boolean {
  if (plan === 'free' || !settings.honeypot || !honeypot) return false;
  services.metrics.increment('feedback_honeypot_caught_total', { kind });
  return true;
}
