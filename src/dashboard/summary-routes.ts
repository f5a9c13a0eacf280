import { Readable } from 'node:stream';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { EMBEDDABLES, findEmbeddable, ownEmbeddable } from '../embeddables/queries.js';
import { notFound } from '../embeddables/kinds.js';
import type { Context } from '../kernel/context.js';
import { requireSession, sessionOf } from './auth.js';
import { csvChunks, DownloadQuery, ndjsonChunks } from './downloads.js';
import { objectSummary, ObjectSummary, overview, Overview } from './summaries.js';

const KINDS = { widgets: 'widget', forms: 'form', polls: 'poll' } as const;
const Params = z.object({ id: z.string() });

/**
 * The dashboard's figures and downloads: the overview, an object's summary,
 * and its responses as CSV or NDJSON. Session required; another account's
 * object is a 404 as in the API (D5). Hidden from the OpenAPI document: they
 * are the dashboard's, not the public API.
 */
export const summaryRoutes: FastifyPluginAsyncZod<{ services: Context }> = async (app, { services }) => {
  const preHandler = requireSession(services);

  app.get('/dashboard/api/overview', { preHandler, schema: { hide: true, response: { 200: Overview } } }, async (request) => {
    return overview(services.readModels, sessionOf(request).accountId, services.clock());
  });

  for (const [path, kind] of Object.entries(KINDS)) {
    const what = EMBEDDABLES[kind];
    app.get(`/dashboard/api/${path}/:id/summary`, { preHandler, schema: { hide: true, params: Params, response: { 200: ObjectSummary } } }, async (request) => {
      await ownEmbeddable(services, what, request.params.id, sessionOf(request).accountId);
      const object = await findEmbeddable(services, what, request.params.id);
      // Deleted between the two reads.
      if (!object) throw notFound(kind);
      return objectSummary(services.readModels, kind, object, services.clock());
    });
  }

  for (const [path, kind] of [['widgets', 'widget'], ['forms', 'form']] as const) {
    const what = EMBEDDABLES[kind];
    for (const format of ['csv', 'ndjson'] as const) {
      app.get(
        `/dashboard/api/${path}/:id/responses.${format}`,
        { preHandler, schema: { hide: true, params: Params, querystring: DownloadQuery } },
        async (request, reply) => {
          const { id } = request.params;
          const { accountId, account } = sessionOf(request);
          await ownEmbeddable(services, what, id, accountId);
          const object = await findEmbeddable(services, what, id);
          if (!object) throw notFound(kind);
          const chunks =
            format === 'csv'
              ? csvChunks(services.readModels, (docs) => services.personal.reveal(docs), id, (object.questions ?? []) as Array<{ id: string; title: string }>, request.query, account.plan, {
                  hiddenFields: (object.hidden_fields ?? []) as string[],
                  endings: ((object.endings ?? []) as unknown[]).length > 0,
                  languages: Object.keys(object.translations ?? {}).length > 0,
                })
              : ndjsonChunks(services.readModels, (docs) => services.personal.reveal(docs), id, request.query);
          // Streamed with chunked encoding and no length: when a read fails midway the
          // connection is cut before the final chunk, which every HTTP client reports
          // as an incomplete transfer, never as a complete but shorter file.
          return reply
            .header('content-type', format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson')
            .header('content-disposition', `attachment; filename="${kind}-${id}-responses.${format}"`)
            .send(Readable.from(chunks, { objectMode: false }));
        },
      );
    }
  }
};
