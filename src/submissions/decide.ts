import type { Plan } from '../accounts/plans.js';
import type { EventOf } from '../event-catalog.js';
import { AppError } from '../errors.js';
import { validateAnswers, type Answers, type FormQuestion } from '../questions.js';
import { hostAllowed } from './domains.js';
import type { EmbedTarget as Kind } from './embed-token.js';
import type { ConsentRecord, ResponseSubmitted, SubmissionGuarded, SubmissionSlotReserved } from './events.js';
import type { ResponseMetadata } from './metadata.js';
import { closed, domainNotAllowed, notPublished } from '../embeddables/errors.js';
import { pastClosingTime } from '../embeddables/rules.js';
import type { Settings } from './settings.js';

/**
 * What a visitor's submission (a response or a vote) decides, as pure
 * functions of the request and of what the store holds: the shell in
 * submit.ts (votes.ts for polls) gathers both and records what is decided.
 */

/** What every public submission is checked against. */
export interface Gate {
  kind: Kind;
  id: string;
  published: boolean;
  settings: Settings;
}

/** What a submission needs to know about the widget or form it answers. */
export interface SubmissionTarget extends Gate {
  kind: 'widget' | 'form';
  accountId: string;
  questions: FormQuestion[];
  /** Forms: copied into the consent record. */
  version?: number;
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
 * published, not closed, token, domain. Facts in, the token's issue time
 * out, or the first rule broken as an AppError.
 */
export function checkAccess(target: Gate, facts: AccessFacts): Date {
  if (!target.published) throw notPublished(target.kind);
  if (pastClosingTime(target.settings, facts.now) || facts.full) throw closed(target.kind);
  if (!facts.issuedAt) throw new AppError('invalid_token', 'The embed token is missing, invalid or expired; fetch a new one');
  if (!hostAllowed(facts.host, target.settings.allowed_domains)) {
    throw domainNotAllowed(target.kind, facts.host);
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

/** Pro and Business: a filled honeypot is a bot, answered as a success with nothing kept. */
export const caughtByHoneypot = (settings: Settings, plan: Plan, honeypot: string | undefined): boolean =>
  plan !== 'free' && settings.honeypot && Boolean(honeypot);

/** Pro and Business: `prevent_duplicates` takes one response per visitor (polls take one vote always). */
export const guardsDuplicates = (settings: Settings, plan: Plan): boolean => plan !== 'free' && settings.prevent_duplicates;

export const duplicate = (kind: Kind) =>
  new AppError('duplicate_submission', kind === 'poll' ? 'This visitor has voted in this poll already' : `This visitor has answered this ${kind} already`);

export type SlotReserved = EventOf<typeof SubmissionSlotReserved>;

/** With `max_responses`, a submission first takes one of the object's numbered slots. */
export const slotFor = (target: Gate, submissionId: string): SlotReserved[] =>
  target.settings.max_responses === null ? [] : [{ type: 'SubmissionSlotReserved', data: { target: target.kind, target_id: target.id, response_id: submissionId } }];

/** A visitor's response, with what the shell learnt of the request. */
export interface SubmitResponse {
  responseId: string;
  /** The owner's plan now: honeypot and duplicate checks follow it (its metadata already did). */
  plan: Plan;
  answers: Record<string, unknown>;
  /** The honeypot field as sent. */
  honeypot?: string | undefined;
  now: Date;
  issuedAt: Date | null;
  host: string | null;
  /** Captured by the owner's plan at this moment; used only once every check passed. */
  metadata: ResponseMetadata;
  userAgent: string;
  /** The visitor's guard stream under `prevent_duplicates`. */
  guard: string;
}

/** What the store holds that a response is decided on. */
export interface SubmissionState {
  target: SubmissionTarget;
  /** Every `max_responses` slot is taken. */
  full: boolean;
  /** The visitor's guard stream exists: they answered already. */
  visited: boolean;
}

export type SubmissionDecision = Array<SlotReserved | EventOf<typeof SubmissionGuarded> | EventOf<typeof ResponseSubmitted>>;

/** Spec 2.8: what the visitor agreed to, on which version of the form, from where. */
function consentRecord(target: SubmissionTarget, answers: Answers, command: SubmitResponse): ConsentRecord | undefined {
  const question = target.questions.find((q) => q.type === 'consent');
  if (!question || question.type !== 'consent') return undefined;
  return {
    consent_given: answers[question.id] === true,
    timestamp: command.now.toISOString(),
    ip_hash: command.metadata.ip_hash,
    user_agent: command.userAgent,
    consent_text: question.text,
    form_version: target.version ?? 1,
  };
}

/**
 * Published, not closed, token, domain, answers; then a honeypot catch
 * decides nothing, and a visitor seen before is a duplicate. Otherwise: the
 * slot (under `max_responses`), the guard (under `prevent_duplicates`) and
 * the response, in the order they are to be recorded.
 */
export function decideSubmission(command: SubmitResponse, state: SubmissionState): SubmissionDecision {
  const { target } = state;
  const { answers } = checkSubmission(target, { ...command, full: state.full });
  if (caughtByHoneypot(target.settings, command.plan, command.honeypot)) return [];
  const guarded = guardsDuplicates(target.settings, command.plan);
  // Before the slot: a repeat must not use up a limit.
  if (guarded && state.visited) throw duplicate(target.kind);
  const consent = consentRecord(target, answers, command);
  const submitted = { target: target.kind, target_id: target.id, response_id: command.responseId };
  return [
    ...slotFor(target, command.responseId),
    ...(guarded ? [{ type: 'SubmissionGuarded' as const, data: submitted }] : []),
    {
      type: 'ResponseSubmitted',
      data: {
        response_id: command.responseId,
        account_id: target.accountId,
        ...(target.kind === 'widget' ? { widget_id: target.id } : { form_id: target.id }),
        answers,
        metadata: command.metadata,
        submitted_at: command.now.toISOString(),
        ...(consent ? { consent_record: consent } : {}),
        ...(guarded ? { duplicate_guard: command.guard } : {}),
      },
    },
  ];
}
