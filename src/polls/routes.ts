import { answerErrors, notFound, ParamsOf } from '../embeddables/kinds.js';
import { limitSubmissions, limitVisitor } from '../http/rate-limits.js';
import { POLL, recentSummary } from '../embeddables/queries.js';
import { deleteRoute, listRoute, publicRead, tokenRoute } from '../embeddables/routes.js';
import { isClosed, gateOnSummary } from '../embeddables/access.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { POLL_CHOICES, type PollDoc } from '../../projections/polls.js';
import { createPoll, deletePoll, updatePoll } from './commands.js';
import { callerOf, requireKey } from '../http/auth.js';
import { preflight } from '../http/cors.js';
import type { Context } from '../kernel/context.js';
import { shownSettings } from '../embeddables/settings.js';
import { PollCreated } from './events.js';
import { poll, type PollState } from './poll.js';
import { CreatePollBody, PollCreatedReply, PollUpdatedReply, UpdatePollBody } from './schemas.js';
import { castVote, VoteBody } from './votes.js';
import { awaitLateErasure, onObjectAsDecided, stillThere } from '../submissions/visitors.js';


/** The poll a vote answers: none unless it is there (not deleted). */
const activePoll = (state: PollState) => (state.status === 'active' ? state.poll : null);

export const PollListItem = z.object({ id: z.string(), question: z.string(), published: z.boolean(), created_at: z.string(), updated_at: z.string() });

/** A poll shows what is stored, which met the limits of its day: those of today may be tighter. */
const stored = PollCreated.schema.shape;

export const PollView = z.object({
  id: z.string(),
  question: stored.question,
  options: stored.options,
  allow_multiple: stored.allow_multiple,
  theme: stored.theme,
  language: stored.language,
  translations: stored.translations,
  published: z.boolean(),
  closed: z.boolean(),
  settings: stored.settings.optional(),
  created_at: z.string().optional().describe('To the owner only, as `settings`'),
  updated_at: z.string().optional().describe('To the owner only, as `settings`'),
});

/**
 * An option's share of the votes counted, in percent with one decimal. Only
 * the poll's options count, each chosen option of a ballot one vote: the
 * shares add up to 100 (give or take the rounding) whatever options were
 * removed since, and whether or not the poll allowed several choices.
 */
export const percentageOf = (votes: number, total: number): number => (total === 0 ? 0 : Math.round((votes / total) * 1000) / 10);

/** D8: aggregated results, never a voter's data. */
export const Results = z.object({
  poll_id: z.string(),
  question: z.string(),
  total_votes: z.number().int(),
  options: z.array(z.object({ id: z.string(), text: z.string(), votes: z.number().int(), percentage: z.number() })),
});

/** A poll as GET shows it: to its owner with its settings. */
export const pollView = (doc: PollDoc, owner: boolean, now: Date): z.output<typeof PollView> => ({
  id: doc.id,
  question: doc.question,
  options: doc.options,
  allow_multiple: doc.allow_multiple,
  theme: doc.theme,
  // Polls stored before languages were written in English, untranslated.
  language: doc.language ?? 'en',
  translations: doc.translations ?? {},
  published: doc.published,
  closed: isClosed(doc, now),
  ...(owner ? { settings: shownSettings(doc.settings), created_at: doc.created_at, updated_at: doc.updated_at } : {}),
});

/** A poll's results: the count of each of its options now. */
export async function pollResults(services: Context, doc: PollDoc): Promise<z.output<typeof Results>> {
  const counts = await Promise.all(doc.options.map((option) => services.readModels.count(POLL_CHOICES, { poll_id: doc.id, option_id: option.id })));
  const total = counts.reduce((sum, votes) => sum + votes, 0);
  return {
    poll_id: doc.id,
    question: doc.question,
    total_votes: total,
    options: doc.options.map((option, i) => ({ id: option.id, text: option.text, votes: counts[i]!, percentage: percentageOf(counts[i]!, total) })),
  };
}

/** Polls: a plugin the app registers with its services. */
export const pollRoutes: FastifyPluginAsyncZod<{ services: Context }> = async (app, { services }) => {
  const writeDefinitions = requireKey(services, { scope: 'forms:write' });

  listRoute(app, services, POLL, PollListItem);

  app.post(
    '/api/polls',
    {
      onRequest: writeDefinitions,
      config: { errors: ['conflict'] },
      schema: {
        tags: ['polls'],
        operationId: 'createPoll',
        summary: 'Create a poll',
        description: 'A question with 2 to 20 options, each given an id; one option per vote unless `allow_multiple`. The poll starts unpublished.',
        body: CreatePollBody,
        response: { 201: PollCreatedReply },
      },
    },
    async (request, reply) => {
      const { accountId, keyId } = callerOf(request);
      return reply.code(201).send(await createPoll(services, { accountId, actor: keyId, requestId: request.id }, request.body));
    },
  );

  publicRead(app, services, POLL, { schema: PollView, render: (doc, owner) => pollView(doc, owner, services.clock()) });

  publicRead(app, services, POLL, {
    suffix: '/results',
    operationId: 'getPollResults',
    summary: 'Get the aggregated results of a poll (public when published)',
    description:
      "Each option's votes and its share of all votes, counted as the poll's options are now. Anyone reads a published poll's results; an unpublished poll's need the owner's key with `responses:read` (they are a read of its votes).",
    scope: 'responses:read',
    schema: Results,
    render: (doc) => pollResults(services, doc),
  });

  app.put(
    '/api/polls/:id',
    {
      onRequest: writeDefinitions,
      config: { errors: ['poll_not_found', 'conflict', 'event_unreadable'] },
      schema: {
        tags: ['polls'],
        operationId: 'updatePoll',
        summary: 'Update a poll (any subset; options sent with their id keep it)',
        description: 'Options sent again with their `id` keep it and their votes, one without an id is new, one left out is removed (its votes stay stored and are no longer counted). Read-only fields may be sent back unchanged.',
        params: ParamsOf.poll,
        body: UpdatePollBody,
        response: { 200: PollUpdatedReply },
      },
    },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      return updatePoll(services, { accountId, actor: keyId, requestId: request.id }, request.params.id, request.body);
    },
  );

  deleteRoute(app, services, POLL, (id, author, at) => deletePoll(services, id, author, at));

  tokenRoute(app, services, POLL);

  app.post(
    '/api/polls/:id/vote',
    {
      config: { publicCors: true, errors: answerErrors('poll') },
      schema: {
        tags: ['polls'],
        operationId: 'submitPollVote',
        summary: 'Vote (embed token in `_token`); one vote per visitor',
        description:
          'Checked as a submission is: the poll exists, is published and open, the token is its own and unexpired, the embedding site is allowed; then exactly one option unless `allow_multiple`, each an option of the poll. A second vote of one visitor is 409 `duplicate_submission`.',
        params: ParamsOf.poll,
        body: VoteBody,
        response: { 200: z.object({ success: z.literal(true) }) },
      },
    },
    async (request, reply) => {
      // Rate, publication and token on the summary first, as for submissions.
      const summary = await recentSummary(services, POLL, request.params.id);
      const plan = await limitVisitor(services, request, reply, summary?.account_id ?? null);
      if (!summary) throw notFound('poll');
      await limitSubmissions(request, reply, 'poll', summary.id, summary.settings, plan);
      gateOnSummary(services, 'poll', summary, { token: request.body._token, headers: request.headers }, services.clock());
      const { result: vote, conditioned } = await onObjectAsDecided(services, poll, summary.id, activePoll, () => notFound('poll'), (found, unchanged) =>
        castVote(services, found, plan, request.body, { headers: request.headers, ip: request.ip }, request.id, unchanged),
      );
      // A honeypot catch kept nothing; one stored while the poll was as decided is erased with the rest by a later deletion.
      if (vote === undefined || conditioned) return { success: true as const };
      // Deleted while this vote passed its checks: the erasure process erases it with the rest.
      if (!(await stillThere(services, poll, summary.id, activePoll))) {
        await awaitLateErasure(services, vote);
        throw notFound('poll');
      }
      return { success: true as const };
    },
  );
  preflight(app, '/api/polls/:id/vote', ['POST']);
};
