import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { RouteOptions } from 'fastify';
import { jsonSchemaTransform, jsonSchemaTransformObject } from 'fastify-type-provider-zod';
import { ADDRESSES, SERVICE, LICENSE } from './about.js';
import type { Context } from '../kernel/context.js';
import type { App } from './instance.js';
import { needsKey } from './auth.js';
import { DIGITS } from '../kernel/pagination.js';

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

type JsonSchema = { type?: unknown; pattern?: unknown; properties?: Record<string, JsonSchema> } & Record<string, unknown>;

/**
 * Query values arrive as text, so their schemas take digits and turn them into
 * numbers, and zod documents the text; the document names the integer a
 * client sends instead (a `minimum` from the schema's metadata stays).
 */
export function integerQuery(querystring: JsonSchema | undefined): JsonSchema | undefined {
  if (!querystring?.properties) return querystring;
  const properties = Object.fromEntries(
    Object.entries(querystring.properties).map(([name, schema]) => {
      if (schema.type !== 'string' || schema.pattern !== DIGITS.source) return [name, schema];
      const { pattern: _digits, ...rest } = schema;
      return [name, { minimum: 0, ...rest, type: 'integer' }];
    }),
  );
  return { ...querystring, properties };
}

/** The reference page of the API, served beside the interactive one (copied into builds). */
const API_REFERENCE = new URL('../../docs/api.md', import.meta.url);

/**
 * The page needs nothing from elsewhere and runs no inline code. The top bar
 * of swagger-ui's standalone layout is left out: its logo carries an inline
 * style a strict policy refuses, and its address box would only load other
 * documents. `connect-src` lets "Try it out" reach `PUBLIC_BASE_URL`.
 */
function docsPolicy(publicBaseUrl: string | undefined): string {
  const connect = ["'self'", ...(publicBaseUrl ? [new URL(publicBaseUrl).origin] : [])].join(' ');
  return `default-src 'none'; base-uri 'self'; connect-src ${connect}; font-src 'self' data:; form-action 'self'; frame-ancestors 'none'; img-src 'self' data:; script-src 'self'; script-src-attr 'none'; style-src 'self'`;
}

/** Swagger-ui's layout reads on a phone: long paths and tables wrap or scroll inside their box, not the page. */
const MOBILE_CSS = `
body { margin: 0; }
.swagger-ui .wrapper { padding: 0 12px; box-sizing: border-box; }
.swagger-ui .info { margin: 24px 0; }
.swagger-ui .info .title { font-size: 28px; }
.swagger-ui .opblock .opblock-summary { flex-wrap: wrap; }
.swagger-ui .opblock .opblock-summary-path { word-break: break-all; max-width: 100%; }
.swagger-ui .opblock-body, .swagger-ui .table-container, .swagger-ui .responses-inner, .swagger-ui .model-box, .swagger-ui .highlight-code { overflow-x: auto; max-width: 100%; }
.swagger-ui table { display: block; overflow-x: auto; }
.swagger-ui .servers > label { margin-right: 0; max-width: 100%; }
.swagger-ui .servers select { max-width: 100%; text-overflow: ellipsis; }
.swagger-ui .markdown code, .swagger-ui .renderedMarkdown code { word-break: break-word; white-space: normal; }
@media (max-width: 600px) {
  .swagger-ui .response-col_links, .swagger-ui .responses-header .col_header.response-col_links { display: none; }
  .swagger-ui .opblock-tag { flex-wrap: wrap; }
  .swagger-ui .opblock .opblock-summary-method { min-width: 56px; }
  .swagger-ui .scheme-container .schemes { flex-wrap: wrap; }
}
`;

/**
 * Swagger-ui's page has no viewport tag, so phones lay it out 980 px wide and
 * shrink it; this file, loaded before the page renders, adds one.
 */
const VIEWPORT_JS = `document.head.insertAdjacentHTML('beforeend', '<meta name="viewport" content="width=device-width, initial-scale=1">');\n`;

/**
 * Where clients send requests: `PUBLIC_BASE_URL` when it is set, else `/`,
 * which OpenAPI reads as the origin the document was fetched from. Not the
 * request's `Host`: a client names that, so a document built from it could
 * point the next reader (through a cache) at another server, and behind a
 * proxy it is not the address clients use anyway.
 */
export function serversOf(publicBaseUrl: string | undefined): Array<{ url: string; description: string }> {
  if (publicBaseUrl) return [{ url: publicBaseUrl.replace(/\/$/, ''), description: 'This service, at its public address' }];
  return [{ url: '/', description: 'This service, at the address this document was read from' }];
}

/**
 * The document with only the schema components it refers to: a schema
 * named once (a question type, a condition) becomes a component in both
 * directions, as a request takes it and as a reply gives it, and most are
 * used in one direction only.
 */
function withUsedSchemas<D extends object>(document: D): D {
  const { paths, components } = document as { paths?: unknown; components?: { schemas?: Record<string, unknown> } };
  const schemas = components?.schemas;
  if (!schemas) return document;
  const used = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) value.forEach(visit);
    else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        if (key === '$ref' && typeof child === 'string' && child.startsWith('#/components/schemas/')) {
          const name = child.slice('#/components/schemas/'.length);
          if (!used.has(name)) {
            used.add(name);
            visit(schemas[name]);
          }
        } else visit(child);
      }
    }
  };
  visit(paths);
  return { ...document, components: { ...components, schemas: Object.fromEntries(Object.entries(schemas).filter(([name]) => used.has(name))) } };
}

/**
 * OpenAPI 3.1 from the routes' own zod schemas (the same ones that validate
 * requests and replies), served at GET /api/openapi.json, with an interactive
 * reference at /docs and the written one at /docs/api.md. Every operation
 * has an `operationId`, which generated clients name their methods by.
 */
export async function registerOpenApi(app: App, services: Context): Promise<void> {
  const base = services.config.PUBLIC_BASE_URL?.replace(/\/$/, '') ?? '';
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: SERVICE.name,
        version: SERVICE.version,
        description:
          `Forms, polls and feedback widgets that site owners embed; visitors answer through public endpoints with an embed token. Errors: \`{statusCode, code, error, message, details?}\`. Every rule and choice is in the [API reference](${base}${ADDRESSES.api_reference}); site owners paste the [embed script](${base}${ADDRESSES.embed_script}).`,
        // The deployment's operator is the contact; the service knows no more of them than where it runs.
        contact: { name: SERVICE.name, ...(base ? { url: base } : {}) },
        license: LICENSE,
      },
      servers: serversOf(services.config.PUBLIC_BASE_URL),
      components: {
        securitySchemes: {
          apiKey: { type: 'http', scheme: 'bearer', description: 'An API key, `svc_` and 43 characters, made with the admin command line or in the dashboard. Business plan only. Send one `Authorization` header: a request with several is 401 `unauthorized`.' },
        },
      },
      tags: [
        { name: 'widgets', description: 'Feedback widgets' },
        { name: 'forms', description: 'Forms, with consent records' },
        { name: 'polls', description: 'Polls and their aggregated results' },
        { name: 'responses', description: 'Responses: reading and erasure' },
        { name: 'service', description: 'The service itself' },
        { name: 'webhooks', description: 'Signed webhooks from the event feed (Standard Webhooks), their delivery log and replay' },
      ],
    },
    transform: (input) => {
      const transformed = jsonSchemaTransform(input);
      const output = { ...transformed, schema: { ...transformed.schema, querystring: integerQuery(transformed.schema.querystring as JsonSchema | undefined) } };
      const route = input.route as RouteOptions;
      if (needsKey(route)) return { ...output, schema: { ...output.schema, security: [{ apiKey: [] }] } };
      if (route.config?.optionalKey) return { ...output, schema: { ...output.schema, security: [{}, { apiKey: [] }] } };
      return output;
    },
    transformObject: (document) => withUsedSchemas(jsonSchemaTransformObject(document)),
  });
  await app.register(swaggerUi, {
    routePrefix: ADDRESSES.docs,
    staticCSP: docsPolicy(services.config.PUBLIC_BASE_URL),
    theme: { title: `${SERVICE.name}: API`, css: [{ filename: 'mobile.css', content: MOBILE_CSS }], js: [{ filename: 'viewport.js', content: VIEWPORT_JS }] },
    uiConfig: { layout: 'BaseLayout', deepLinking: true },
  });
  app.get('/api/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  const reference = readFileSync(API_REFERENCE, 'utf8');
  app.get(ADDRESSES.api_reference, { schema: { hide: true } }, async (_request, reply) =>
    reply.type('text/markdown; charset=utf-8').header('cache-control', 'public, max-age=300').send(reference),
  );
}
