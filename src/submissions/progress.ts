import { z } from 'zod';
import { keyedHash } from '../infra/keys.js';
import type { Context } from '../kernel/context.js';
import { AppError, type ErrorDetail } from '../kernel/errors.js';
import type { EventOf } from '../kernel/event-catalog.js';
import { isBlank, pagesOf, shownOn, walk } from '../embeddables/evaluate.js';
import { validateAnswers, type Answers } from '../embeddables/questions.js';
import { checkAccess, type AccessFacts } from '../embeddables/access.js';
import { checkHidden, type SubmissionTarget } from './decide.js';
import type { ResponseProgressed } from './events.js';
import { accessFacts, record, visitorMeta, type ObjectAt } from './visitors.js';

/**
 * Partial responses: a form that keeps them (`settings.keep_partial`) is sent
 * each page as the visitor leaves it, and the submission with the same
 * `session` completes the same response. The response's id is fixed by the
 * session, so every page and the submission land in one stream.
 */

/** What the embed draws once per visit: 16 to 64 URL-safe characters. */
export const Session = z
  .string()
  .regex(/^[A-Za-z0-9_-]{16,64}$/, 'must be 16 to 64 letters, digits, - or _')
  .describe('A random id the embed draws once per visit (16 to 64 URL-safe characters): every page sent with it, and the submission, make one response.');

/**
 * The response a form's visit makes: its id a keyed hash of the form and
 * the session (so a session of one form names nothing in another, and the
 * id tells nothing of the session), in the shape of the service's ids.
 */
export function sessionResponseId(services: Pick<Context, 'keys'>, formId: string, session: string): string {
  return `rsp_${keyedHash(services.keys.hashes, `session:form:${formId}:${session}`).slice(0, 26).toUpperCase()}`;
}

/** Where a session's response stands: not begun, partial (its stream's last revision), or sent or erased already (`closed`). */
export type SessionResponse = { id: string; stream: string; at: 'no_stream' | bigint; closed: boolean };

export async function sessionResponse(services: Context, formId: string, session: string): Promise<SessionResponse> {
  const id = sessionResponseId(services, formId, session);
  const stream = `response-${id}`;
  const state = await services.events.streamState(stream);
  // An erased stream cannot be made again: the visit's response is over.
  if (state === 'deleted') return { id, stream, at: 'no_stream', closed: true };
  if (state === 'no_stream') return { id, stream, at: state, closed: false };
  const [last] = await services.events.readStream(stream, { fromRevision: state, maxCount: 1 });
  return { id, stream, at: state, closed: last?.type !== 'ResponseProgressed' };
}

export const sessionClosed = () => new AppError('duplicate_submission', "This session's response was sent (or erased) already");

export const partialsOff = () => new AppError('partial_responses_off', 'This form does not keep partial responses (settings.keep_partial is off)');

/** The body of POST /api/forms/:id/progress. */
export const ProgressBody = z
  .object({
    _token: z.string().max(1000).optional(),
    session: Session,
    page: z.string().max(64).describe('The id of the page the visitor is leaving (`page_1` for a form without pages).'),
    answers: z
      .record(z.string().max(64), z.unknown())
      .refine((answers) => Object.keys(answers).length <= 200, 'at most 200 answers')
      .default({})
      .describe('Every answer given so far, on the pages of the path up to and including `page`.'),
    hidden: z
      .record(z.string().max(64), z.unknown())
      .refine((hidden) => Object.keys(hidden).length <= 20, 'at most 20 hidden fields')
      .optional(),
  })
  .meta({ examples: [{ _token: 'v1.form.frm_01JD3Q5V8K2M4N6P8R0S2T4V6Z.m3u9x0a1.Xb8…', session: 'q1Zr8mX2aP9tK3v7WcL0yB4n', page: 'about', answers: { name: 'Ada', role: 'dev' }, hidden: { utm_source: 'newsletter' } }] });

export interface ProgressCommand {
  responseId: string;
  page: string;
  answers: Record<string, unknown>;
  hidden?: Record<string, unknown> | undefined;
  now: Date;
}

export interface ProgressState {
  target: SubmissionTarget;
  access: AccessFacts;
  /** The session's response was sent or erased already. */
  closed: boolean;
}

/**
 * The answers a page carries, as far as the visitor is: `page` must be on
 * the path the answers take, and only the questions shown on the path's
 * pages up to it take an answer (checked as a submission checks them, none
 * required: the visitor has not finished).
 */
export function checkProgress(target: SubmissionTarget, page: string, sent: Record<string, unknown>): { answers: Answers; details: ErrorDetail[] } {
  const form = { questions: target.questions, ...target.flow };
  const path = walk(form, sent).pages;
  const at = path.indexOf(page);
  if (at === -1) {
    const known = pagesOf(form).some((p) => p.id === page);
    return { answers: {}, details: [{ path: 'page', message: known ? 'is not on the path these answers take' : 'is not a page of this form' }] };
  }
  const shown = new Set(path.slice(0, at + 1).flatMap((p) => shownOn(form, p, sent)));
  const pageOf = new Map(pagesOf(form).flatMap((p) => p.question_ids.map((id) => [id, p.id] as const)));
  const details: ErrorDetail[] = [];
  const kept: Record<string, unknown> = {};
  for (const [id, value] of Object.entries(sent)) {
    const on = pageOf.get(id);
    if (on === undefined || shown.has(id)) kept[id] = value;
    else if (!isBlank(value)) {
      const where = path.indexOf(on);
      details.push({
        path: `answers.${id}`,
        message:
          where === -1 ? `is on page ${on}, which these answers skip, so it takes no answer` : where > at ? `is on page ${on}, after page ${page}, so it takes no answer yet` : 'is hidden by its condition (show_if) for these answers, so it takes no answer',
      });
    }
  }
  const questions = target.questions.filter((q) => shown.has(q.id)).map((q) => ({ ...q, required: false }));
  const checked = validateAnswers(questions, kept);
  return { answers: checked.answers, details: [...checked.details, ...details] };
}

/**
 * Published, open, token, domain; then the form must keep partial
 * responses, the session's response must not be sent (or erased) already,
 * and the answers must fit the path up to the page. No consent record, no
 * `max_responses` slot, no duplicate guard: those are the submission's.
 */
export function decideProgress(command: ProgressCommand, state: ProgressState): EventOf<typeof ResponseProgressed> {
  const { target } = state;
  checkAccess(target, state.access);
  if (target.kind !== 'form' || !(target.settings as { keep_partial?: boolean }).keep_partial) throw partialsOff();
  if (state.closed) throw sessionClosed();
  const { answers, details } = checkProgress(target, command.page, command.answers);
  const hidden = checkHidden(target.hiddenFields ?? [], command.hidden ?? {});
  details.push(...hidden.details);
  if (details.length > 0) throw new AppError('validation_error', hidden.details.length === details.length ? 'Some hidden fields are invalid' : 'Some answers are invalid', details);
  return {
    type: 'ResponseProgressed',
    data: {
      response_id: command.responseId,
      account_id: target.accountId,
      form_id: target.id,
      page: command.page,
      answers,
      ...(Object.keys(hidden.hidden).length > 0 ? { hidden: hidden.hidden } : {}),
      progressed_at: command.now.toISOString(),
    },
  };
}

export interface ProgressInput {
  token: unknown;
  tokenIssuedAt?: Date;
  session: string;
  page: string;
  answers: Record<string, unknown>;
  hidden?: Record<string, unknown> | undefined;
  headers: Parameters<typeof accessFacts>[3];
  unchanged?: ObjectAt;
}

/** Reads what the decision needs, decides, and appends the page to the response's stream at the revision it read. */
export async function recordProgress(services: Context, target: SubmissionTarget, input: ProgressInput, requestId?: string): Promise<{ id: string; position: bigint }> {
  const now = services.clock();
  const [access, response] = await Promise.all([
    accessFacts(services, target, input.token, input.headers, now, input.tokenIssuedAt),
    sessionResponse(services, target.id, input.session),
  ]);
  const event = decideProgress({ responseId: response.id, page: input.page, answers: input.answers, hidden: input.hidden, now }, { target, access, closed: response.closed });
  // A page sent at the same moment as another, or as the submission: the store refuses the second, which is then too late.
  const position = await record(services, [event], () => ({ stream: response.stream, expected: response.at, refused: sessionClosed() }), visitorMeta(now, requestId), input.unchanged);
  await services.commands.awaitProjections(position);
  return { id: response.id, position };
}
