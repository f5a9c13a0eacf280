import { answerErrors, CODES, notFound, ParamsOf } from '../embeddables/kinds.js';
import { limitSubmissions, limitVisitor } from '../http/rate-limits.js';
import { ownEmbeddable, recentSummary, type Embeddable, type EmbeddableDoc } from '../embeddables/queries.js';
import { z } from 'zod';
import type { App } from '../http/instance.js';
import { callerOf, requireKey } from '../http/auth.js';
import type { Context } from '../kernel/context.js';
import { preflight } from '../http/cors.js';
import { titled } from '../http/operations.js';
import { gateOnSummary } from '../embeddables/access.js';
import { ClientMetadata } from './metadata.js';
import { listResponses, ResponseList, ResponsesQuery } from './responses.js';
import { submitResponse, type SubmissionTarget } from './submit.js';
import { awaitLateErasure, onObjectAsDecided, stillThere } from './visitors.js';
import { ProgressBody, recordProgress, Session } from './progress.js';
import type { Aggregate } from '../kernel/aggregate.js';

/** D6: every submission carries its embed token as `_token`. Unknown keys are dropped, not refused (embeds evolve). */
export const SubmitBody = z.object({
  answers: z
    .record(z.string().max(64), z.unknown())
    .refine((answers) => Object.keys(answers).length <= 200, 'at most 200 answers')
    .default({}),
  /** The object's hidden fields by name (a UTM tag, a user id); each name must be declared in its `hidden_fields`. */
  hidden: z
    .record(z.string().max(64), z.unknown())
    .refine((hidden) => Object.keys(hidden).length <= 20, 'at most 20 hidden fields')
    .optional(),
  language: z
    .string()
    .max(35)
    .optional()
    .describe("The language the visitor saw: the object's own or one it has a translation in (400 otherwise); the object's own when absent. The response records it."),
  _token: z.string().max(1000).optional(),
  /** Forms: the visit's session, as its pages were sent to `progress`; the response kept of them is completed, under its id. Ignored by widgets. */
  session: Session.optional(),
  /** The honeypot: a hidden input only bots fill. */
  _hp: z.string().max(1000).optional(),
  metadata: ClientMetadata.default({}),
});

/**
 * The body as each kind's submit route documents it: one shape, with an
 * example that answers the object its create example makes (an NPS widget,
 * the newsletter form).
 */
export const SubmitBodyOf = {
  widget: SubmitBody.meta({
    examples: [
      {
        answers: { score: 9, reason: 'Quick to set up.' },
        _token: 'v1.widget.wgt_01JD3Q5V8K2M4N6P8R0S2T4V6Z.m3u9x0a1.Xb8…',
        metadata: { pageUrl: 'https://example.com/pricing?utm_source=newsletter', pageTitle: 'Pricing', fingerprint: '5c1f9e0d2b7a4e63', screenWidth: 1440, screenHeight: 900 },
      },
    ],
  }),
  form: SubmitBody.meta({
    examples: [
      {
        answers: { email: 'ada@example.com', consent: true },
        hidden: { utm_source: 'newsletter' },
        _token: 'v1.form.frm_01JD3Q5V8K2M4N6P8R0S2T4V6Z.m3u9x0a1.Xb8…',
        metadata: { pageUrl: 'https://example.com/newsletter', pageTitle: 'Newsletter', fingerprint: '5c1f9e0d2b7a4e63' },
      },
    ],
  }),
};

/**
 * POST <path>/:id/submit for widgets and forms: `{success: true, id}` once
 * the response is readable. The decision is made and stored on the object
 * as it is at the append (see onObjectAsDecided).
 */
export function submitRoute<D extends EmbeddableDoc, State, Event extends { type: string; data: unknown }, Command>(
  app: App,
  services: Context,
  what: Embeddable<D>,
  aggregate: Aggregate<State, Event, Command>,
  targetOf: (state: State) => SubmissionTarget | null,
): void {
  app.post(
    `${what.path}/:id/submit`,
    {
      config: { publicCors: true, errors: answerErrors(what.kind) },
      schema: {
        tags: [`${what.kind}s`],
        operationId: `submit${titled(what.kind)}Response`,
        summary: `Submit a ${what.kind} response (embed token in \`_token\`)`,
        description: `A visitor's answers. Checked in this order: the ${what.kind} exists, is published and open, the token is its own and unexpired, the embedding site is allowed, the answers fit its questions, and (with \`prevent_duplicates\`) the visitor has not answered already. The reply comes once the response is readable in the responses list.`,
        params: ParamsOf[what.kind],
        body: SubmitBodyOf[what.kind === 'form' ? 'form' : 'widget'],
        response: { 200: z.object({ success: z.literal(true), id: z.string() }) },
      },
    },
    async (request, reply) => {
      const { _token, _hp, answers, hidden, language, metadata, session } = request.body;
      // Rate, publication and token on the summary first: the whole definition is loaded for a request that passed them.
      const summary = await recentSummary(services, what, request.params.id);
      const plan = await limitVisitor(services, request, reply, summary?.account_id ?? null);
      if (!summary) throw notFound(what.kind);
      await limitSubmissions(request, reply, what.kind, summary.id, summary.settings, plan);
      const tokenIssuedAt = gateOnSummary(services, what.kind, summary, { token: _token, headers: request.headers }, services.clock());
      const input = { plan, token: _token, tokenIssuedAt, honeypot: _hp, answers, hidden, language, session, request: { headers: request.headers, ip: request.ip, ips: request.ips, client: metadata } };
      const { result: submitted, conditioned } = await onObjectAsDecided(services, aggregate, summary.id, targetOf, () => notFound(what.kind), (target, unchanged) =>
        submitResponse(services, target, { ...input, ...(unchanged ? { unchanged } : {}) }, request.id),
      );
      // A honeypot catch kept nothing; one stored while the object was as decided is erased with the rest by a later deletion.
      if (!submitted.kept || conditioned) return { success: true as const, id: submitted.id };
      // Deleted while this submission passed its checks: the erasure process erases it with the rest.
      if (!(await stillThere(services, aggregate, summary.id, targetOf))) {
        await awaitLateErasure(services, submitted);
        throw notFound(what.kind);
      }
      return { success: true as const, id: submitted.id };
    },
  );
  preflight(app, `${what.path}/:id/submit`, ['POST']);
}

/**
 * POST /api/forms/:id/progress: a page of a form that keeps partial
 * responses, as the visitor leaves it; `{success: true}` once the partial
 * response is readable. The same gates and rate limits as a submission.
 */
export function progressRoute<D extends EmbeddableDoc, State, Event extends { type: string; data: unknown }, Command>(
  app: App,
  services: Context,
  what: Embeddable<D>,
  aggregate: Aggregate<State, Event, Command>,
  targetOf: (state: State) => SubmissionTarget | null,
): void {
  app.post(
    `${what.path}/:id/progress`,
    {
      config: { publicCors: true, errors: [...answerErrors(what.kind), 'partial_responses_off'] },
      schema: {
        tags: [`${what.kind}s`],
        operationId: `record${titled(what.kind)}Progress`,
        summary: `Keep a page of a ${what.kind} as a partial response (embed token in \`_token\`)`,
        description:
          `For a ${what.kind} with \`settings.keep_partial\`: the embed sends each page as the visitor leaves it. The first page sent with a \`session\` makes a response with \`status: "partial"\`; each later one replaces its answers and \`last_page\`; the submission with the same \`session\` completes it under the same id. ` +
          `Checked as a submission is (the ${what.kind} exists, is published and open, the token is its own and unexpired, the embedding site is allowed), then: the ${what.kind} keeps partial responses (else 403 \`partial_responses_off\`), the session's response was not sent or erased already (else 409 \`duplicate_submission\`), \`page\` is on the path the answers take, and only questions shown on that path up to \`page\` are answered (else 400 \`validation_error\` naming each; none is required yet). ` +
          'A partial response takes no `max_responses` place, gets no consent record, is counted in no summary and sends no webhook.',
        params: ParamsOf[what.kind],
        body: ProgressBody,
        response: { 200: z.object({ success: z.literal(true) }) },
      },
    },
    async (request, reply) => {
      const { _token, session, page, answers, hidden } = request.body;
      const summary = await recentSummary(services, what, request.params.id);
      const plan = await limitVisitor(services, request, reply, summary?.account_id ?? null);
      if (!summary) throw notFound(what.kind);
      await limitSubmissions(request, reply, what.kind, summary.id, summary.settings, plan);
      const tokenIssuedAt = gateOnSummary(services, what.kind, summary, { token: _token, headers: request.headers }, services.clock());
      const input = { token: _token, tokenIssuedAt, session, page, answers, hidden, headers: request.headers };
      const { conditioned } = await onObjectAsDecided(services, aggregate, summary.id, targetOf, () => notFound(what.kind), (target, unchanged) =>
        recordProgress(services, target, { ...input, ...(unchanged ? { unchanged } : {}) }, request.id),
      );
      // Deleted meanwhile: the erasure process erases the page with the rest (a response of a deleted parent).
      if (!conditioned && !(await stillThere(services, aggregate, summary.id, targetOf))) throw notFound(what.kind);
      return { success: true as const };
    },
  );
  preflight(app, `${what.path}/:id/progress`, ['POST']);
}

/** GET <path>/:id/responses: the owner's responses, newest first (D9). */
export function responsesRoute<D extends EmbeddableDoc>(app: App, services: Context, what: Embeddable<D>): void {
  app.get(
    `${what.path}/:id/responses`,
    {
      onRequest: requireKey(services, { scope: 'responses:read' }),
      config: { errors: [CODES[what.kind].notFound, 'validation_error'] },
      schema: {
        tags: ['responses'],
        operationId: `list${titled(what.kind)}Responses`,
        summary: `List a ${what.kind}'s responses, newest first`,
        description:
          'Newest first in the order the service recorded them (under concurrent submissions, `submitted_at` may be a millisecond out of that order). Every page costs the same, so paging through is the way to export. ' +
          '`since`/`until` keep the responses submitted in that span (both inclusive); `cursor` continues from `pagination.next_cursor` of the page before. With any of the three the list is ordered by `submitted_at`, then id, both descending, and a walk by `next_cursor` meets every response once, however many arrive meanwhile. A cursor that was altered is refused with 400 `validation_error`.',
        params: ParamsOf[what.kind],
        querystring: ResponsesQuery,
        response: { 200: ResponseList },
      },
    },
    async (request) => {
      const doc = await ownEmbeddable(services, what, request.params.id, callerOf(request).accountId);
      return listResponses(services, doc.id, request.query);
    },
  );
}
