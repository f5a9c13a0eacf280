import { EMBEDDABLES, ownEmbeddable } from '../embeddables/queries.js';
import { ID } from '../embeddables/kinds.js';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { callerOf, requireKey } from '../http/auth.js';
import type { Context } from '../kernel/context.js';
import { ErasureReplies, requestErasure } from '../erasure/outcome.js';

const Id = z.string().regex(ID, 'must be an id');

/** D9: exactly one parent key, at most 1000 ids (vote ids with `pollId`). */
export const BulkDeleteBody = z
  .strictObject({
    ids: z.array(Id).min(1).max(1000),
    widgetId: Id.optional(),
    formId: Id.optional(),
    pollId: Id.optional(),
  })
  .refine((body) => [body.widgetId, body.formId, body.pollId].filter((id) => id !== undefined).length === 1, {
    message: 'give exactly one of widgetId, formId or pollId',
    path: [],
  })
  .meta({ examples: [{ widgetId: 'wgt_01JD3Q5V8K2M4N6P8R0S2T4V6Z', ids: ['rsp_01JD3Q6A1B2C3D4E5F6G7H8J9K', 'rsp_01JD3Q6A1B2C3D4E5F6G7H8J9M'] }] });

/** Bulk erasure of responses and votes (DELETE /api/responses): a plugin the app registers with its services. */
export const erasureRoutes: FastifyPluginAsyncZod<{ services: Context }> = async (app, { services }) => {
  app.delete(
    '/api/responses',
    {
      onRequest: requireKey(services, { scope: 'responses:write' }),
      config: { errors: ['widget_not_found', 'form_not_found', 'poll_not_found'] },
      schema: {
        tags: ['responses'],
        operationId: 'eraseResponses',
        summary: 'Erase responses of one widget or form, or votes of one poll, for good',
        description:
          'The erasure request is recorded first, then carried out by the erasure process. The reply waits for it (up to 10 s): 200 with the count erased, or 202 when it is still running; it finishes regardless, across restarts.',
        body: BulkDeleteBody,
        response: ErasureReplies,
      },
    },
    async (request, reply) => {
      const { accountId, keyId } = callerOf(request);
      const body = request.body;
      const [parent, parentId] = body.widgetId
        ? (['widget', body.widgetId] as const)
        : body.formId
          ? (['form', body.formId] as const)
          : (['poll', body.pollId!] as const);
      await ownEmbeddable(services, EMBEDDABLES[parent], parentId, accountId);
      const answer = await requestErasure(services, { accountId, parent, parentId, ids: body.ids, keyId, actor: keyId, requestId: request.id });
      return reply.code(answer.status).send(answer.body);
    },
  );
};
