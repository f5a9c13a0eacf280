import Fastify, { type FastifyReply } from 'fastify';
import { serializerCompiler, validatorCompiler, type ZodTypeProvider } from 'fastify-type-provider-zod';
import type { Services } from './services.js';
import { errorBody, malformedUrl, MAX_PATH_SEGMENT } from './http/error-body.js';
import { BODY_LIMIT } from './http/body-limit.js';
import { AppError } from './kernel/errors.js';
import { registerErrorHandling } from './http/errors.js';
import { clientErrorHandler, connectHandler } from './http/client-errors.js';
import { EVERY_REPLY } from './http/reply-headers.js';
import { headerCount } from './http/raw-headers.js';
import { trustProxy } from './http/client-address.js';

/** Listed once: every reply goes through them. */
const EVERY_REPLY_ENTRIES = Object.entries(EVERY_REPLY);
import { readJsonAsUtf8, refuseControlCharacters, refuseOtherCharsets } from './http/request-text.js';
import { CLIENT_REQUEST_ID, RequestLog, rememberErrorCodes } from './http/request-log.js';
import { healthRoutes } from './http/health.js';
import { publicCors } from './http/cors.js';
import { registerOpenApi, type RegisteredRoute } from './http/openapi.js';
import { documentErrors } from './http/error-schemas.js';
import { metricsRoute } from './http/metrics.js';
import { embedRoute } from './embed/route.js';
import { serviceIndexRoute } from './http/service-index.js';
import { registerRateLimits } from './http/rate-limits.js';
import { widgetRoutes } from './widgets/index.js';
import { formRoutes } from './forms/index.js';
import { pollRoutes } from './polls/index.js';
import { erasureRoutes } from './submissions/erasure-routes.js';
import { webhookRoutes } from './webhooks/index.js';
import { dashboardRoutes } from './dashboard/index.js';
import { hostedRoutes } from './hosted/index.js';
import { signalRoutes } from './signals/index.js';

import type { App } from './http/instance.js';

export type { App };

/**
 * The whole HTTP API over the given services; tests drive it with `app.inject`.
 * A `projector` process serves only `/healthz`, `/readyz` and `/metrics`.
 */
export async function buildApp(services: Services): Promise<App> {
  const app = Fastify({
    loggerInstance: services.logger,
    trustProxy: trustProxy(services.config.TRUST_PROXY),
    bodyLimit: BODY_LIMIT,
    // fastify gives a plugin 10 s to load; on a machine busy with other work the
    // OpenAPI page's plugin alone took longer, and the server then never started.
    pluginTimeout: 60_000,
    // fastify leaves a request's time to arrive unbounded, so a body that never
    // finishes held its connection open for ever: past this, 408 request_timeout.
    // Given to Node's server as it is made too: Node 20 keeps the value it was made with.
    requestTimeout: services.config.REQUEST_TIMEOUT_SECONDS * 1000,
    http: {
      requestTimeout: services.config.REQUEST_TIMEOUT_SECONDS * 1000,
      // Node's limit for the headers alone, 60 s by default, may not exceed the whole request's.
      headersTimeout: Math.min(60_000, services.config.REQUEST_TIMEOUT_SECONDS * 1000),
      // How often Node looks for requests past their time (30 s by default).
      connectionsCheckingInterval: 5_000,
      // Node answers an HTTP/1.1 request without Host with a bare 400 and no
      // body; the hook below answers it in the documented error shape.
      requireHostHeader: false,
    },
    // Our own id always: it goes into event metadata, where a caller's could
    // join events to other systems' records or make two requests share one.
    // A well-formed X-Request-Id of the caller is logged beside it only.
    requestIdHeader: false,
    genReqId: () => services.ids('req'),
    childLoggerFactory: (logger, bindings, options, raw) => {
      const incoming = raw.headers['x-request-id'];
      const client = typeof incoming === 'string' && CLIENT_REQUEST_ID.test(incoming) ? { client_request_id: incoming } : {};
      return logger.child({ ...bindings, ...client }, options);
    },
    logController: new RequestLog(services.keys.hashes),
    clientErrorHandler: clientErrorHandler(services.logger, () => services.ids('req')),
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PATH_SEGMENT },
    // The router's own refusals (a malformed URL, a path segment over its length limit) in the D3 shape too.
    frameworkErrors: (error, _request, reply) => {
      (reply as FastifyReply).code(400).send(malformedUrl(error.message.replace(/^'.*' /, 'the path ')));
    },
  }).withTypeProvider<ZodTypeProvider>();

  app.server.on('connect', connectHandler(services.logger, () => services.ids('req')));
  if (services.config.TRUST_PROXY === true) {
    services.logger.warn(
      'TRUST_PROXY=true believes every X-Forwarded-For a client sends: client addresses (rate limits, IP hashes) can be forged. Set the number of proxies in front of the service or their addresses instead',
    );
  }
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
  registerErrorHandling(app, services.metrics, services.storage);
  // Every body is JSON: anything else is 415 rather than a string handed to the schemas.
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', async (request, reply) => {
    reply.header('x-request-id', request.id);
    // RFC 9112 §3.2: an HTTP/1.1 request names its host (Node's own refusal of one that does not had no body).
    if (request.headers.host === undefined && request.raw.httpVersion === '1.1') throw new AppError('validation_error', 'The request is not valid HTTP: an HTTP/1.1 request needs a Host header');
    // And names one: Node keeps the first of several, where a proxy in front may have read another.
    if (headerCount(request.raw.rawHeaders, 'host') > 1) throw new AppError('validation_error', 'The request is not valid HTTP: it has several Host headers');
  });
  if (services.readOnly) {
    const { until } = services.readOnly;
    // A point-in-time store: a command would fork the history there, so only reads are served.
    app.addHook('onRequest', async (request, reply) => {
      if (request.method === 'GET' || request.method === 'HEAD' || request.method === 'OPTIONS') return;
      return reply.code(405).header('allow', 'GET, HEAD, OPTIONS').send(errorBody('read_only', `This store shows the history as of ${until} and is read-only`));
    });
  }
  rememberErrorCodes(app);
  refuseOtherCharsets(app);
  readJsonAsUtf8(app);
  refuseControlCharacters(app);

  app.addHook('onSend', async (request, reply) => {
    for (const [name, value] of EVERY_REPLY_ENTRIES) if (!reply.hasHeader(name)) reply.header(name, value);
    // Public replies are read cross-origin by embeds; management replies are the owner's only.
    reply.header('cross-origin-resource-policy', request.routeOptions.config?.publicCors ? 'cross-origin' : 'same-origin');
  });
  if (operationsOnly) {
    healthRoutes(app, services);
    metricsRoute(app, services.metrics, services.config.METRICS_TOKEN);
    return app;
  }
  await registerRateLimits(app, services);
  publicCors(app);
  healthRoutes(app, services);
  metricsRoute(app, services.metrics, services.config.METRICS_TOKEN);
  embedRoute(app);
  hostedRoutes(app, services);
  serviceIndexRoute(app, services.config.PUBLIC_BASE_URL);
  await app.register(widgetRoutes, { services });
  await app.register(formRoutes, { services });
  await app.register(pollRoutes, { services });
  await app.register(erasureRoutes, { services });
  signalRoutes(app, services);
  await app.register(webhookRoutes, { services });
  await app.register(dashboardRoutes, { services });
  return app;
}
