import { z } from 'zod';
import { WIDGETS } from '../../projections/widgets.js';
import { AppError } from '../errors.js';
import type { App } from '../http/app.js';
import { callerOf, requireKey } from '../http/auth.js';
import { ErrorResponses } from '../http/error-schemas.js';
import type { Services } from '../services.js';
import { eraseResponses } from './erasure.js';

const Id = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be an id');

/** D9: exactly one parent key, at most 1000 ids. */
export const BulkDeleteBody = z
  .strictObject({
    ids: z.array(Id).min(1).max(1000),
    widgetId: Id.optional(),
    formId: Id.optional(),
  })
  .refine((body) => [body.widgetId, body.formId].filter(Boolean).length === 1, {
    message: 'give exactly one of widgetId or formId',
    path: [],
  });

export function responseRoutes(app: App, services: Services): void {
  app.delete(
    '/api/responses',
    {
      preHandler: requireKey(services, { scope: 'responses:write' }),
      schema: {
        tags: ['responses'],
        summary: 'Erase responses of one widget or form for good',
        body: BulkDeleteBody,
        response: { 200: z.object({ success: z.literal(true), deleted: z.number().int() }), ...ErrorResponses },
      },
    },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      const body = request.body;
      const [parent, parentId, collection, missing] = body.widgetId
        ? (['widget', body.widgetId, WIDGETS, 'widget_not_found'] as const)
        : (['form', body.formId!, 'forms', 'form_not_found'] as const);
      const doc = await services.readModels.get(collection, parentId);
      if (!doc || doc.account_id !== accountId) throw new AppError(missing, `${parent === 'widget' ? 'Widget' : 'Form'} not found`);
      const deleted = await eraseResponses(services, { accountId, parent, parentId, responseIds: body.ids, reason: 'bulk_delete', keyId, requestId: request.id });
      return { success: true as const, deleted };
    },
  );
}
