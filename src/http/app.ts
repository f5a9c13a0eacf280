import Fastify, { type FastifyReply } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Services } from '../services.js';
import { errorBody } from './error-body.js';
import { BODY_LIMIT } from './body-limit.js';
import { registerErrorHandling } from './errors.js';
import { healthRoutes } from './health.js';
import { publicCors } from './cors.js';
import { registerOpenApi, type RegisteredRoute } from './openapi.js';
import { documentErrors } from './error-schemas.js';
import { metricsRoute } from './metrics.js';
import { embedRoute } from '../embed/route.js';
import { registerRateLimits } from './rate-limits.js';
import { widgetRoutes } from '../widgets/index.js';
import { formRoutes } from '../forms/index.js';
import { pollRoutes } from '../polls/index.js';
import { erasureRoutes } from '../erasure/index.js';
import { webhookRoutes } from '../webhooks/index.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

import type { App } from './instance.js';

export type { App };

/** TRUST_PROXY as fastify takes it; a hop count trusts that many proxies nearest to us. */
function trustProxy(setting: boolean | number | string | undefined): boolean | string | ((address: string, hop: number) => boolean) {
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return setting ?? false;
}

/**
 * The whole HTTP API over the given services; tests drive it with `app.inject`.
 * A `projector` process serves only `/healthz`, `/readyz` and `/metrics`.
 */
export async function buildApp(services: Services): Promise<App> {
  const app = Fastify({
    loggerInstance: services.logger,
    trustProxy: trustProxy(services.config.TRUST_PROXY),
    bodyLimit: BODY_LIMIT,
    // A well-formed incoming X-Request-Id is kept so logs correlate across hops.
    requestIdHeader: false,
    genReqId: (request) => {
      const incoming = request.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : services.ids('req');
    },
    routerOptions: { ignoreTrailingSlash: true },
    // The router's own refusals (a malformed URL, a path segment over its length limit) in the D3 shape too.
    frameworkErrors: (error, _request, reply) => {
      (reply as FastifyReply).code(400).send(errorBody('validation_error', 'The URL is malformed', [{ path: 'url', message: error.message.replace(/^'.*' /, 'the path ') }]));
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.setValidatorCompiler(validatorCompiler);
  // Error bodies are built in one place (errors.ts), typed by their code; the
  // handler checks the code against the route's document instead of a 500.
  app.setSerializerCompiler<Parameters<typeof serializerCompiler>[0]['schema']>((route) =>
    Number(route.httpStatus) >= 400 ? (data: unknown) => JSON.stringify(data) : serializerCompiler(route),
  );
  const routes: RegisteredRoute[] = [];
  app.addHook('onRoute', documentErrors);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, hidden: Boolean((route.schema as { hide?: boolean } | undefined)?.hide) || route.prefix === '/docs' });
  });
  app.decorate('registeredRoutes', routes);
  const operationsOnly = services.config.ROLE === 'projector';
  if (!operationsOnly) await registerOpenApi(app, services);
  registerErrorHandling(app, services.metrics);
  // Every body is JSON: anything else is 415 rather than a string handed to the schemas.
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
  });

  app.addHook('onSend', async (request, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    reply.header('x-frame-options', 'DENY');
    // JSON needs no sources; pages the service serves (docs, embed) set their own policy.
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', "default-src 'none'; frame-ancestors 'none'");
    // Public replies are read cross-origin by embeds; management replies are the owner's only.
    reply.header('cross-origin-resource-policy', request.routeOptions.config?.publicCors ? 'cross-origin' : 'same-origin');
  });
  if (operationsOnly) {
    healthRoutes(app, services);
    metricsRoute(app, services.metrics);
    return app;
  }
  await registerRateLimits(app, services);
  publicCors(app);
  healthRoutes(app, services);
  metricsRoute(app, services.metrics);
  embedRoute(app);
  await app.register(widgetRoutes, { services });
  await app.register(formRoutes, { services });
  await app.register(pollRoutes, { services });
  await app.register(erasureRoutes, { services });
  await app.register(webhookRoutes, { services });
  return app;
}
