import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { RouteOptions } from 'fastify';
import { jsonSchemaTransform } from 'fastify-type-provider-zod';
import type { Services } from '../services.js';
import type { App } from './instance.js';
import { needsKey } from './auth.js';

export interface RegisteredRoute {
  method: string;
  url: string;
  hidden: boolean;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Every route as registered, for the check that the OpenAPI document holds them all. */
    registeredRoutes: RegisteredRoute[];
  }
  interface FastifyContextConfig {
    /** Public when the object is published, the owner's key otherwise. */
    optionalKey?: boolean;
  }
}

/**
 * OpenAPI 3.1 from the routes' own zod schemas (the same ones that validate
 * requests and replies), served at GET /api/openapi.json, with an interactive
 * reference at /docs.
 */
export async function registerOpenApi(app: App, services: Services): Promise<void> {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Feedback collection service',
        version: '0.1.0',
        description:
          'Forms, polls and feedback widgets that site owners embed; visitors answer through public endpoints with an embed token. Errors: `{statusCode, code, error, message, details?}`. See docs/api.md for every rule and choice.',
      },
      ...(services.config.PUBLIC_BASE_URL ? { servers: [{ url: services.config.PUBLIC_BASE_URL }] } : {}),
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key, `svc_` and 43 characters, made with the admin CLI. Business plan only (D4).' },
        },
      },
      tags: [
        { name: 'widgets', description: 'Feedback widgets' },
        { name: 'forms', description: 'Forms, with consent records' },
        { name: 'polls', description: 'Polls and their aggregated results' },
        { name: 'responses', description: 'Responses: reading and erasure' },
        { name: 'webhooks', description: 'Signed webhooks from the event feed (Standard Webhooks), their delivery log and replay' },
      ],
    },
    transform: (input) => {
      const output = jsonSchemaTransform(input);
      const route = input.route as RouteOptions;
      if (needsKey(route)) return { ...output, schema: { ...output.schema, security: [{ apiKey: [] }] } };
      if (route.config?.optionalKey) return { ...output, schema: { ...output.schema, security: [{}, { apiKey: [] }] } };
      return output;
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', staticCSP: true });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
