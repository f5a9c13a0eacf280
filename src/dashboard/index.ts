import { fastifyCookie } from '@fastify/cookie';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import type { Context } from '../kernel/context.js';
import { SessionActivity } from './activity.js';
import { pageRoutes } from './pages.js';
import { apiRoutes } from './routes.js';
import { shareRoutes } from './share-routes.js';
import { signInRoutes } from './sign-in.js';
import { memberRoutes } from './member-routes.js';
import { notificationRoutes } from './notification-routes.js';
import { summaryRoutes } from './summary-routes.js';
import { analyticsRoutes } from './analytics-routes.js';

/**
 * The owner dashboard at /dashboard: sign-in by login link, its pages and
 * files, and its JSON endpoints. Not part of the public API (hidden from the
 * OpenAPI document); described in docs/api.md, "The dashboard".
 */
export const dashboardRoutes: FastifyPluginAsyncZod<{ services: Context }> = async (app, { services }) => {
  await services.readModels.ensureCollections(SessionActivity.collections);
  await app.register(fastifyCookie);
  // What the dashboard answers is the account's own (objects, responses, keys, the CSRF token), refusals
  // included: no shared or browser cache keeps it. Files that set their own policy (the front end's) keep it.
  app.addHook('onSend', async (_request, reply) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
  });
  await signInRoutes(app, services);
  await memberRoutes(app, services);
  await notificationRoutes(app, services);
  await pageRoutes(app, services);
  apiRoutes(app, services);
  shareRoutes(app, services);
  await app.register(summaryRoutes, { services });
  await app.register(analyticsRoutes, { services });
};
