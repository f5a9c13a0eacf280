import { isbot } from 'isbot';
import { z } from 'zod';
import { CODES, notFound, ParamsOf } from '../embeddables/kinds.js';
import { limitVisitor } from '../http/rate-limits.js';
import { EMBEDDABLES, recentSummary } from '../embeddables/queries.js';
import { preflight } from '../http/cors.js';
import type { App } from '../http/instance.js';
import { titled } from '../http/operations.js';
import type { Context } from '../kernel/context.js';
import { gateOnSummary } from '../embeddables/access.js';
import { captureFacets, ClientMetadata } from '../submissions/metadata.js';
import { FLUSH_EVERY_MS, SignalCounter } from './counter.js';
import { answerSignalsFirst, replayBody, type CountVisit } from './fast-path.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** The display and start counts not yet written out. */
    signals: SignalCounter;
  }
}

/** A display or a start, as the embed reports it once per visit. */
export const SignalBody = z
  .object({
    _token: z.string().max(1000).optional(),
    type: z.enum(['display', 'start']).describe('`display`: the object was seen (a form or poll at least half in view for a second, a widget\'s panel opened); `start`: the first answer was given.'),
    session: z
      .string()
      .regex(/^[A-Za-z0-9_-]{8,64}$/)
      .describe('A random id the embed draws once per page visit (kept in sessionStorage): a visit counts once per type, reloads included. Never stored.'),
    /** Where the visit came from, for the breakdowns by source the plan records. */
    metadata: ClientMetadata.pick({ pageUrl: true, referrer: true }).default({}),
  })
  .meta({ examples: [{ _token: 'v1.form.frm_01JD3Q5V8K2M4N6P8R0S2T4V6Z.m3u9x0a1.Xb8…', type: 'display', session: 'k3v9QwZr2mX8aP1t', metadata: { pageUrl: 'https://example.com/?utm_source=newsletter' } }] });

/**
 * Telling a crawler's user agent tries one long pattern, and most visitors
 * send one of a few common agents: the answers for the latest are kept (a
 * bounded number, of agents of a common length), oldest out first.
 */
const crawlers = new Map<string, boolean>();
const AGENTS_KEPT = 1000;
const AGENT_KEPT_LENGTH = 512;

export function isCrawler(userAgent: string | undefined): boolean {
  if (userAgent === undefined) return isbot(userAgent);
  const known = crawlers.get(userAgent);
  if (known !== undefined) return known;
  const found = isbot(userAgent);
  if (userAgent.length <= AGENT_KEPT_LENGTH) {
    if (crawlers.size >= AGENTS_KEPT) crawlers.delete(crawlers.keys().next().value!);
    crawlers.set(userAgent, found);
  }
  return found;
}

/**
 * POST <path>/:id/events for widgets, forms and polls: 204 once counted in
 * memory. Crawlers get the same 204 and count nothing.
 */
export function signalRoutes(app: App, services: Context): void {
  const counter = new SignalCounter(services);
  if (!services.readOnly) counter.start();
  app.decorate('signals', counter);
  app.addHook('onClose', () => counter.stop());
  const countVisit: CountVisit = async (kind, summary, plan, body, visitor) => {
    if (isCrawler(visitor.headers['user-agent'])) return;
    // The breakdowns a response records by plan, with the same values; nothing else of the request is worked out.
    const facets = await captureFacets(plan, { headers: visitor.headers, ip: visitor.ip, client: body.metadata }, services.geo);
    counter.count({ target: kind, id: summary.id, account: summary.account_id, type: body.type, session: body.session, facets });
  };
  if (!services.readOnly) answerSignalsFirst(app, services, SignalBody, countVisit);
  for (const what of Object.values(EMBEDDABLES)) {
    const { kind } = what;
    app.post(
      `${what.path}/:id/events`,
      {
        // One a visit and type, whatever the traffic: two request-log lines each would grow the log with every page view.
        // Refusals and successes are not logged; failures (5xx) are, at error level.
        logLevel: 'warn',
        // A body the fast path read before handing the request over.
        preParsing: replayBody,
        config: { publicCors: true, errors: [CODES[kind].notFound, CODES[kind].notPublished, CODES[kind].closed, 'invalid_token', 'domain_not_allowed'] },
        schema: {
          tags: [`${kind}s`],
          operationId: `count${titled(kind)}Signal`,
          summary: `Count a display or start of a ${kind} (embed token in \`_token\`)`,
          description:
            `The embed reports each visit's display and first answer once. Counted in memory and written out per ${kind} and minute, once the minute has ended (within ${FLUSH_EVERY_MS / 1000} seconds) and on shutdown: a crash loses at most the minute under way and ${FLUSH_EVERY_MS / 1000} seconds, 65 seconds of counts. ` +
            'A session counts once per type; known crawlers are answered 204 and not counted. Nothing about the visitor is stored: no address, fingerprint or user agent, only counts by the breakdowns the plan records of a response (device; referring domain on Pro; country and UTM tags on Business). ' +
            'Checked as a submission is: published, open, its own token, an allowed site. Not written to the request log (one a visit and type would grow it with every page view); a failure (5xx) is.',
          params: ParamsOf[kind],
          body: SignalBody,
          response: { 204: z.null().describe('Counted (or a crawler, not counted).') },
        },
      },
      async (request, reply) => {
        const summary = await recentSummary(services, what, request.params.id);
        const plan = await limitVisitor(services, request, reply, summary?.account_id ?? null);
        if (!summary) throw notFound(kind);
        gateOnSummary(services, kind, summary, { token: request.body._token, headers: request.headers }, services.clock());
        await countVisit(kind, summary, plan, request.body, { headers: request.headers, ip: request.ip });
        return reply.code(204).send(null);
      },
    );
    preflight(app, `${what.path}/:id/events`, ['POST']);
  }
}
