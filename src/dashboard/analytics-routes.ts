import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { notFound } from '../embeddables/kinds.js';
import { EMBEDDABLES, findEmbeddable, ownEmbeddable } from '../embeddables/queries.js';
import type { Context } from '../kernel/context.js';
import { AccountAnalytics, accountAnalytics, AnalyticsQuery, ObjectAnalytics, objectAnalytics } from './analytics.js';
import { requireSession, sessionOf } from './auth.js';

const KINDS = { widgets: 'widget', forms: 'form', polls: 'poll' } as const;
const Params = z.object({ id: z.string() });

/**
 * The dashboard's analytics: the account's funnel and its objects ranked,
 * and one object's funnel, splits and trends. The dashboard's own (hidden
 * from the OpenAPI document): the public API has no analytics.
 */
export const analyticsRoutes: FastifyPluginAsyncZod<{ services: Context }> = async (app, { services }) => {
  const preHandler = requireSession(services);
  app.get('/dashboard/api/analytics', { preHandler, schema: { hide: true, querystring: AnalyticsQuery, response: { 200: AccountAnalytics } } }, async (request) =>
    accountAnalytics(services.readModels, sessionOf(request).accountId, request.query, services.clock()),
  );
  for (const [path, kind] of Object.entries(KINDS)) {
    const what = EMBEDDABLES[kind];
    app.get(`/dashboard/api/${path}/:id/analytics`, { preHandler, schema: { hide: true, params: Params, querystring: AnalyticsQuery, response: { 200: ObjectAnalytics } } }, async (request) => {
      await ownEmbeddable(services, what, request.params.id, sessionOf(request).accountId);
      const object = await findEmbeddable(services, what, request.params.id);
      if (!object) throw notFound(kind);
      return objectAnalytics(services.readModels, kind, object, request.query, services.clock());
    });
  }
};
