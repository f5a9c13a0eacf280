import type { IncomingHttpHeaders } from 'node:http';
import type { EmbeddableSummary } from '../embeddables/queries.js';
import type { Context } from '../kernel/context.js';
import { checkAccess } from './decide.js';
import { embeddingHost } from '../embeddables/domains.js';
import { verifyEmbedToken, type EmbedTarget } from '../embeddables/embed-token.js';

/**
 * The access rules of a public submission (published, not closed, token,
 * domain, in that order) checked on the object's summary, before its whole
 * state is loaded: a tokenless request never costs a definition's load, nor
 * a place in the state cache. The decision checks them again on the loaded
 * state and the quota stream, which are exact; the summary's count of slots
 * may lag a moment behind, which only lets a request through to that check.
 * Answers the token's issue time, so that the decision need not check its
 * signature again (only its lifetime, at its own moment).
 */
export function gateOnSummary(
  services: Pick<Context, 'keys' | 'config'>,
  kind: EmbedTarget,
  summary: EmbeddableSummary,
  request: { token: unknown; headers: IncomingHttpHeaders },
  now: Date,
): Date {
  const max = summary.settings.max_responses;
  return checkAccess(
    { kind, id: summary.id, published: summary.published, settings: summary.settings },
    {
      now,
      issuedAt: verifyEmbedToken(services.keys.embedTokens, request.token, kind, summary.id, now),
      host: embeddingHost(request.headers, services.config.PUBLIC_BASE_URL),
      full: max !== null && (summary.slots_taken ?? 0) >= max,
    },
  );
}
