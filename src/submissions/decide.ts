import type { Plan } from '../accounts/plans.js';
import type { EventOf } from '../kernel/event-catalog.js';
import { AppError, type ErrorDetail } from '../kernel/errors.js';
import { validateAnswers, type Answers, type FormQuestion, characters } from '../embeddables/questions.js';
import { isBlank, pagesOf, walk, type LogicForm } from '../embeddables/evaluate.js';
import { checkAccess, type AccessFacts, type Gate } from '../embeddables/access.js';
import type { Kind } from '../embeddables/kinds.js';
import type { ConsentRecord, NetworkSubmissionCounted, ResponseSubmitted, SubmissionGuarded, SubmissionSlotReserved } from './events.js';
import type { ResponseMetadata } from './metadata.js';
import type { Settings } from '../embeddables/settings.js';

/**
 * What a visitor's submission (a response or a vote) decides, as pure
 * functions of the request and of what the store holds: the shell in
 * submit.ts (votes.ts for polls) gathers both and records what is decided.
 */

/** What a submission needs to know about the widget or form it answers. */
export interface SubmissionTarget extends Gate {
  kind: 'widget' | 'form';
  accountId: string;
  questions: FormQuestion[];
  /** Forms: copied into the consent record. */
  version?: number;
  /** The names a submission's `hidden` may hold; none when absent. */
  hiddenFields?: readonly string[];
  /** The language the object is written in (`en` when absent) and its translations: a response names one, a consent record keeps its text. */
  language?: string;
  translations?: Readonly<Record<string, { questions?: Readonly<Record<string, { text?: string | undefined }>> | undefined }>>;
  /** Pages, rules and endings; none when absent (one page of every question). */
  flow?: Pick<LogicForm, 'pages' | 'logic' | 'endings'>;
}

export interface SubmissionFacts extends AccessFacts {
  answers: Record<string, unknown>;
  hidden?: Record<string, unknown> | undefined;
}

/** A hidden field's value: text of at most this many characters. */
export const MAX_HIDDEN_VALUE = 500;

/**
 * The hidden values a submission carries, checked against the names the
 * object declares: an undeclared name or a value that is not text of at most
 * 500 characters is a detail at `hidden.<name>`; empty values are left out.
 */
export function checkHidden(declared: readonly string[], hidden: Record<string, unknown>): { hidden: Record<string, string>; details: ErrorDetail[] } {
  const details: ErrorDetail[] = [];
  const kept: Record<string, string> = {};
  const names = new Set(declared);
  for (const [name, value] of Object.entries(hidden)) {
    const path = `hidden.${name}`;
    if (!names.has(name)) details.push({ path, message: `is not a hidden field of this object${declared.length ? ` (${declared.join(', ')})` : ''}` });
    else if (value === null || value === undefined || value === '') continue;
    else if (typeof value !== 'string') details.push({ path, message: 'must be text' });
    else if (characters(value) > MAX_HIDDEN_VALUE) details.push({ path, message: `must be at most ${MAX_HIDDEN_VALUE} characters` });
    else kept[name] = value;
  }
  return { hidden: kept, details };
}

/**
 * The visitor's path through the object (src/embeddables/evaluate.ts, the module
 * the embed runs): the questions it shows, where it ends, and the answers
 * sent to questions off it (a skipped page, a hidden question), each a
 * detail. Blank answers off the path are dropped, as blank optional answers
 * are; the questions on it are the ones the answers are checked against.
 */
export function followPath(target: SubmissionTarget, sent: Record<string, unknown>): { questions: FormQuestion[]; answers: Record<string, unknown>; ending: string | null; details: ErrorDetail[] } {
  const form = { questions: target.questions, ...target.flow };
  const path = walk(form, sent);
  const shown = new Set(path.questions);
  const visited = new Set(path.pages);
  const pageOf = new Map(pagesOf(form).flatMap((page) => page.question_ids.map((id) => [id, page.id] as const)));
  const details: ErrorDetail[] = [];
  const answers: Record<string, unknown> = {};
  for (const [id, value] of Object.entries(sent)) {
    const page = pageOf.get(id);
    if (page === undefined || shown.has(id)) answers[id] = value;
    else if (!isBlank(value)) {
      details.push({
        path: `answers.${id}`,
        message: visited.has(page) ? 'is hidden by its condition (show_if) for these answers, so it takes no answer' : `is on page ${page}, which these answers skip, so it takes no answer`,
      });
    }
  }
  return { questions: target.questions.filter((q) => shown.has(q.id)), answers, ending: path.ending, details };
}

/** checkAccess, then the answers against the questions on the visitor's path. */
export function checkSubmission(
  target: SubmissionTarget,
  facts: SubmissionFacts,
): { answers: Answers; hidden: Record<string, string>; issuedAt: Date; ending: string | null } {
  const issuedAt = checkAccess(target, facts);
  const path = followPath(target, facts.answers);
  const { answers, details } = validateAnswers(path.questions, path.answers);
  // Unknown ids are named by validateAnswers; off the path by followPath, in the order the questions come.
  details.push(...path.details);
  const hidden = checkHidden(target.hiddenFields ?? [], facts.hidden ?? {});
  details.push(...hidden.details);
  if (details.length > 0) throw new AppError('validation_error', hidden.details.length === details.length ? 'Some hidden fields are invalid' : 'Some answers are invalid', details);
  return { answers, hidden: hidden.hidden, issuedAt, ending: path.ending };
}

/** Pro and Business: a filled honeypot is a bot, answered as a success with nothing kept. */
export const caughtByHoneypot = (settings: Settings, plan: Plan, honeypot: string | undefined): boolean =>
  plan !== 'free' && settings.honeypot && Boolean(honeypot);

/** `prevent_duplicates` takes one response per visitor on every plan (spec 5.7: fingerprinting is for all plans); polls take one vote always. */
export const guardsDuplicates = (settings: Settings): boolean => settings.prevent_duplicates;

/**
 * The second signal against duplicates, the object's own choice (off by
 * default): a network (one client address with one user agent) may make
 * `network_limit_per_hour` submissions to it within one clock hour (UTC),
 * whatever fingerprints it sends. Off by default because thousands of people
 * can share an address and a browser build (a carrier's NAT, an office).
 */
export const networkLimit = (settings: Settings): number | null => settings.network_limit_per_hour;
export const NETWORK_WINDOW_MS = 3_600_000;

export const duplicate = (kind: Kind) =>
  new AppError('duplicate_submission', kind === 'poll' ? 'This visitor has voted in this poll already' : `This visitor has answered this ${kind} already`);

export const networkSpent = (kind: Kind, limit: number) =>
  new AppError(
    'duplicate_submission',
    `This ${kind} has taken ${limit} ${kind === 'poll' ? (limit === 1 ? 'vote' : 'votes') : limit === 1 ? 'response' : 'responses'} from this address and browser this hour; try again next hour`,
  );

/** What the store holds of the visitor, read before the decision (the store enforces both again as they are recorded). */
export interface VisitorFacts {
  /** The visitor's own stream exists: they submitted already. */
  visited: boolean;
  /** Submissions counted from the visitor's network to this object in this hour. */
  fromNetwork: number;
}

/** Which of the two signals an object takes: the visitor's guard, and the network's limit (null: none). */
export interface Guards {
  visitor: boolean;
  network: number | null;
}

/** A visitor seen before (where guarded), or a network that reached the object's limit (where it has one), is a duplicate. */
export function checkVisitor(kind: Kind, facts: VisitorFacts, guards: Guards): void {
  if (guards.visitor && facts.visited) throw duplicate(kind);
  if (guards.network !== null && facts.fromNetwork >= guards.network) throw networkSpent(kind, guards.network);
}

export type SlotReserved = EventOf<typeof SubmissionSlotReserved>;
export type Guarded = EventOf<typeof SubmissionGuarded>;
export type NetworkCounted = EventOf<typeof NetworkSubmissionCounted>;

/**
 * The claims a guarded submission makes before it is recorded: the
 * visitor's guard, then its network's count, each where the object takes
 * it. They come before the slot, so a repeat is refused before it can use
 * one up.
 */
export const visitorClaims = (target: Gate, submissionId: string, guards: Guards): Array<Guarded | NetworkCounted> => [
  ...(guards.visitor ? [{ type: 'SubmissionGuarded', data: { target: target.kind, target_id: target.id, response_id: submissionId } } satisfies Guarded] : []),
  ...(guards.network !== null ? [{ type: 'NetworkSubmissionCounted', data: { target: target.kind, target_id: target.id } } satisfies NetworkCounted] : []),
];

/** With `max_responses`, a submission takes one of the object's numbered slots. */
export const slotFor = (target: Gate, submissionId: string): SlotReserved[] =>
  target.settings.max_responses === null ? [] : [{ type: 'SubmissionSlotReserved', data: { target: target.kind, target_id: target.id, response_id: submissionId } }];

/** A visitor's response, with what the shell learnt of the request. */
export interface SubmitResponse {
  responseId: string;
  /** The owner's plan now: the honeypot follows it (its metadata already did). */
  plan: Plan;
  answers: Record<string, unknown>;
  /** The hidden fields' values as sent. */
  hidden?: Record<string, unknown> | undefined;
  /** The honeypot field as sent. */
  honeypot?: string | undefined;
  now: Date;
  issuedAt: Date | null;
  host: string | null;
  /** Captured by the owner's plan at this moment; used only once every check passed. */
  metadata: ResponseMetadata;
  userAgent: string;
  /** The visitor's guard stream: given under `prevent_duplicates`. */
  guard?: string;
  /** The language the visitor saw, as sent; the object's own when absent. */
  language?: string | undefined;
}

/**
 * The language a response records: the object's own or one it has a
 * translation in (a tag matched whatever its letter case), else 400 at
 * `language`; the object's own when none is sent.
 */
export function responseLanguage(target: SubmissionTarget, sent: string | undefined): string {
  const own = target.language ?? 'en';
  if (sent === undefined) return own;
  const known = [own, ...Object.keys(target.translations ?? {})];
  const found = known.find((l) => l.toLowerCase() === sent.toLowerCase());
  if (found === undefined) {
    throw new AppError('validation_error', 'The submission is invalid', [{ path: 'language', message: `the ${target.kind} has no translation in ${sent} (it has ${known.join(', ')})` }]);
  }
  return found;
}

/** What the store holds that a response is decided on; the visitor facts count where the object guards against duplicates. */
export interface SubmissionState extends VisitorFacts {
  target: SubmissionTarget;
  /** Every `max_responses` slot is taken. */
  full: boolean;
}

export type SubmissionDecision = Array<Guarded | NetworkCounted | SlotReserved | EventOf<typeof ResponseSubmitted>>;

/** Spec 2.8: what the visitor agreed to, on which version of the form, from where. */
function consentRecord(target: SubmissionTarget, answers: Answers, command: SubmitResponse, language: string): ConsentRecord | undefined {
  const question = target.questions.find((q) => q.type === 'consent');
  if (!question || question.type !== 'consent') return undefined;
  // The text the visitor agreed to: in the language they saw it in.
  const translated = target.translations?.[language]?.questions?.[question.id]?.text;
  return {
    consent_given: answers[question.id] === true,
    timestamp: command.now.toISOString(),
    ip_hash: command.metadata.ip_hash,
    user_agent: command.userAgent,
    consent_text: translated ?? question.text,
    form_version: target.version ?? 1,
  };
}

/**
 * Published, not closed, token, domain, answers; then a honeypot catch
 * decides nothing, and under `prevent_duplicates` a visitor seen before (and
 * under `network_limit_per_hour` a network at its limit) is a duplicate.
 * Otherwise, in the order they are to be recorded: the visitor's claims
 * (where the object takes them), the slot (under `max_responses`), and the
 * response.
 */
export function decideSubmission(command: SubmitResponse, state: SubmissionState): SubmissionDecision {
  const { target } = state;
  const { answers, hidden, ending } = checkSubmission(target, {
    now: command.now,
    issuedAt: command.issuedAt,
    host: command.host,
    full: state.full,
    answers: command.answers,
    hidden: command.hidden,
  });
  const language = responseLanguage(target, command.language);
  if (caughtByHoneypot(target.settings, command.plan, command.honeypot)) return [];
  const guarded = guardsDuplicates(target.settings);
  const guards: Guards = { visitor: guarded, network: networkLimit(target.settings) };
  checkVisitor(target.kind, state, guards);
  const consent = consentRecord(target, answers, command, language);
  // Field by field rather than spread from optional parts: every submission is decided here.
  const data: EventOf<typeof ResponseSubmitted>['data'] = {
    response_id: command.responseId,
    account_id: target.accountId,
    answers,
    ...(Object.keys(hidden).length > 0 ? { hidden } : {}),
    ending,
    language,
    metadata: command.metadata,
    submitted_at: command.now.toISOString(),
  };
  if (target.kind === 'widget') data.widget_id = target.id;
  else data.form_id = target.id;
  if (consent) data.consent_record = consent;
  if (guarded && command.guard) data.duplicate_guard = command.guard;
  const decision: SubmissionDecision = visitorClaims(target, command.responseId, guards);
  if (target.settings.max_responses !== null) decision.push(...slotFor(target, command.responseId));
  decision.push({ type: 'ResponseSubmitted', data });
  return decision;
}
