import type { Plan } from '../accounts/plans.js';
import { AppError } from '../errors.js';
import type { EventMetadata } from '../event-catalog.js';
import { closed, notPublished, pastClosingTime, type Kind } from './embeddable.js';
import { validateAnswers, type Answers, type FormQuestion } from '../questions.js';
import type { Services } from '../services.js';
import { embeddingHost, hostAllowed } from './domains.js';
import { verifyEmbedToken } from './embed-token.js';
import type { ConsentRecord } from './events.js';
import { captureMetadata, type SubmissionRequest } from './metadata.js';
import type { Settings } from './settings.js';
import { appendFirstVisit, assertFirstVisit, caughtByHoneypot, visitorMeta, visitorStream } from './visitors.js';

/** What a submission needs to know about the widget or form it answers. */
export interface SubmissionTarget extends Gate {
  kind: 'widget' | 'form';
  accountId: string;
  questions: FormQuestion[];
  /** Forms: copied into the consent record. */
  version?: number;
}

export interface SubmissionInput {
  /** The owner's plan now: metadata, honeypot and duplicate checks follow it. */
  plan: Plan;
  token: unknown;
  /** The honeypot field as sent. */
  honeypot?: string | undefined;
  answers: Record<string, unknown>;
  request: SubmissionRequest;
}


/** What every public submission (a response or a vote) is checked against. */
export interface Gate {
  kind: Kind;
  id: string;
  published: boolean;
  settings: Settings;
}

export interface AccessFacts {
  now: Date;
  /** The embed token's issue time, or null when it is missing, forged, expired or another object's. */
  issuedAt: Date | null;
  host: string | null;
  /** The object has taken max_responses submissions already. */
  full: boolean;
}

export interface SubmissionFacts extends AccessFacts {
  answers: Record<string, unknown>;
}

/**
 * The rules before any answer is looked at, in the order the spec gives them:
 * published, not closed, token, domain. Pure: facts in, the token's issue
 * time out, or the first rule broken as an AppError.
 */
export function checkAccess(target: Gate, facts: AccessFacts): Date {
  if (!target.published) throw notPublished(target.kind);
  if (pastClosingTime(target.settings, facts.now) || facts.full) throw closed(target.kind);
  if (!facts.issuedAt) throw new AppError('invalid_token', 'The embed token is missing, invalid or expired; fetch a new one');
  if (!hostAllowed(facts.host, target.settings.allowed_domains)) {
    throw new AppError('domain_not_allowed', `This ${target.kind} may not be embedded on ${facts.host ?? 'an unknown site'}`);
  }
  return facts.issuedAt;
}

/** checkAccess, then the answers against the questions. */
export function checkSubmission(target: SubmissionTarget, facts: SubmissionFacts): { answers: Answers; issuedAt: Date } {
  const issuedAt = checkAccess(target, facts);
  const { answers, details } = validateAnswers(target.questions, facts.answers);
  if (details.length > 0) throw new AppError('validation_error', 'Some answers are invalid', details);
  return { answers, issuedAt };
}

const quotaStream = (target: Gate) => `quota-${target.kind}-${target.id}`;

/** The facts of a request about an object, read from the token, the headers and the quota stream. */
export async function accessFacts(services: Services, target: Gate, token: unknown, headers: SubmissionRequest['headers'], now: Date): Promise<AccessFacts> {
  return {
    now,
    issuedAt: verifyEmbedToken(services.keys.embedTokens, token, target.kind, target.id, now),
    host: embeddingHost(headers),
    full: await isFull(services, target),
  };
}

async function isFull(services: Services, target: Gate): Promise<boolean> {
  const max = target.settings.max_responses;
  if (max === null) return false;
  const slot = await services.events.readStream(quotaStream(target), { fromRevision: BigInt(max - 1), maxCount: 1 });
  return slot.length > 0;
}

function consentRecord(target: SubmissionTarget, answers: Answers, input: SubmissionInput, ipHash: string, now: Date): ConsentRecord | undefined {
  const question = target.questions.find((q) => q.type === 'consent');
  if (!question || question.type !== 'consent') return undefined;
  const userAgent = input.request.headers['user-agent'];
  return {
    consent_given: answers[question.id] === true,
    timestamp: now.toISOString(),
    ip_hash: ipHash,
    user_agent: typeof userAgent === 'string' ? userAgent : '',
    consent_text: question.text,
    form_version: target.version ?? 1,
  };
}

/**
 * With `max_responses`, takes the next numbered slot of the object before a
 * submission is recorded; past the limit the object is closed. The store's
 * revision numbers the slots, so the count is exact under any concurrency.
 */
export async function reserveSlot(services: Services, target: Gate, submissionId: string, meta: Omit<EventMetadata, 'schema_version'>): Promise<void> {
  const max = target.settings.max_responses;
  if (max === null) return;
  const reserved = await services.events.append(
    quotaStream(target),
    [services.catalog.serialize({ type: 'SubmissionSlotReserved', data: { target: target.kind, target_id: target.id, response_id: submissionId } }, meta)],
    'any',
  );
  if (reserved.nextRevision >= BigInt(max)) throw closed(target.kind);
}

/**
 * Records one response: checks it, captures its metadata by the owner's plan
 * at this moment, takes a slot when the object has a response limit, appends
 * it to its own stream, and returns its id once the read models show it.
 * `kept` is false for a honeypot catch: the bot gets an id, nothing is stored.
 */
export async function submitResponse(
  services: Services,
  target: SubmissionTarget,
  input: SubmissionInput,
  requestId?: string,
): Promise<{ id: string; kept: boolean }> {
  const now = services.clock();
  const { answers, issuedAt } = checkSubmission(target, {
    ...(await accessFacts(services, target, input.token, input.request.headers, now)),
    answers: input.answers,
  });
  const { plan } = input;
  const responseId = services.ids('rsp');
  // A bot gets the reply a person would, and nothing is kept.
  if (caughtByHoneypot(services, target.kind, target.settings, plan, input.honeypot)) return { id: responseId, kept: false };
  const metadata = await captureMetadata({ plan, request: input.request, issuedAt, now }, { hashKey: services.keys.hashes, geo: services.geo });
  const meta = visitorMeta(now, requestId);
  const guard =
    plan !== 'free' && target.settings.prevent_duplicates
      ? visitorStream(services, `guard-${target.kind}-${target.id}`, { fingerprint: input.request.client.fingerprint, ip: input.request.ip })
      : undefined;
  if (guard) await assertFirstVisit(services, target.kind, guard);

  await reserveSlot(services, target, responseId, meta);
  if (guard) {
    await appendFirstVisit(services, target.kind, guard, services.catalog.serialize({ type: 'SubmissionGuarded', data: { target: target.kind, target_id: target.id, response_id: responseId } }, meta));
  }

  const consent = consentRecord(target, answers, input, metadata.ip_hash, now);
  const { position } = await services.events.append(
    `response-${responseId}`,
    [
      services.catalog.serialize(
        {
          type: 'ResponseSubmitted',
          data: {
            response_id: responseId,
            account_id: target.accountId,
            ...(target.kind === 'widget' ? { widget_id: target.id } : { form_id: target.id }),
            answers,
            metadata,
            submitted_at: now.toISOString(),
            ...(consent ? { consent_record: consent } : {}),
            ...(guard ? { duplicate_guard: guard } : {}),
          },
        },
        meta,
      ),
    ],
    'no_stream',
  );
  await services.commands.awaitProjections(position);
  return { id: responseId, kept: true };
}
