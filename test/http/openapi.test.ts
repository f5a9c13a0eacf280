import { Validator } from '@seriousme/openapi-schema-validator';
import SpectralCore, { type RulesetDefinition } from '@stoplight/spectral-core';
import Parsers from '@stoplight/spectral-parsers';
import Rulesets from '@stoplight/spectral-rulesets';
import t from 'tap';
import { z } from 'zod';
import { AppError } from '../../src/kernel/errors.js';
import { buildApp } from '../../src/app.js';
import { CreateFormBody, UpdateFormBody } from '../../src/forms/schemas.js';
import { CreatePollBody, UpdatePollBody } from '../../src/polls/schemas.js';
import { VoteBody } from '../../src/polls/votes.js';
import { BulkDeleteBody } from '../../src/submissions/erasure-routes.js';
import { SubmitBodyOf } from '../../src/submissions/routes.js';
import { CreateWidgetBody, UpdateWidgetBody } from '../../src/widgets/schemas.js';
import { QUESTION_TYPES } from '../../src/embeddables/questions.js';
import { manualClock, owner, testApp } from '../support/app.js';
import { testServices } from '../support/services.js';

type Responses = Record<string, { description: string; content: { 'application/json': { schema: { properties: { code: { enum: string[] } } } } } }>;

/** Each error status of an operation with the codes its document names. */
function codesOf(responses: Responses): Record<string, string[]> {
  return Object.fromEntries(
    Object.entries(responses)
      .filter(([status]) => Number(status) >= 400)
      .map(([status, reply]) => [status, reply.content['application/json'].schema.properties.code.enum]),
  );
}

t.test('the OpenAPI document is valid 3.1 and holds every route the server registers', async (t) => {
  const { app } = await testApp(t);
  await app.ready();
  const reply = await app.inject({ method: 'GET', url: '/api/openapi.json' });
  t.equal(reply.statusCode, 200);
  const document = reply.json();
  t.equal(document.openapi, '3.1.0');
  const result = await new Validator().validate(document);
  t.same(result.errors ?? [], [], 'the document validates');
  t.equal(result.valid, true);

  const documented = new Set<string>();
  for (const [path, operations] of Object.entries(document.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(operations)) documented.add(`${method.toUpperCase()} ${path.replace(/\{(\w+)\}/g, ':$1')}`);
  }
  const served = app.registeredRoutes.filter((r) => !r.hidden && r.method !== 'HEAD' && r.method !== 'OPTIONS');
  t.ok(served.length >= 25, `${served.length} routes`);
  for (const route of served) t.ok(documented.has(`${route.method} ${route.url}`), `${route.method} ${route.url} is documented`);
  for (const path of ['/api/widgets', '/api/forms/{id}/submit', '/api/polls/{id}/results', '/api/responses']) t.ok(document.paths[path], `${path} is there`);
  const listQuery = (document.paths['/api/widgets/{id}/responses'].get.parameters as Array<{ in: string; name: string }>).filter((p) => p.in === 'query').map((p) => p.name);
  t.same(listQuery.sort(), ['cursor', 'limit', 'page', 'since', 'status', 'until'], "a responses list's query parameters, its range checked as a whole");

  const list = document.paths['/api/widgets'].get;
  t.same(list.security, [{ apiKey: [] }], 'K routes name the bearer scheme');
  t.ok(list.responses['401'] && list.responses['429'], 'and their error replies');
  t.same(document.paths['/api/widgets/{id}'].get.security, [{}, { apiKey: [] }], 'public-if-published reads take an optional key');
  t.notOk(document.paths['/api/widgets/{id}/submit'].post.security, 'submissions take no key');
  t.ok(document.paths['/api/widgets'].post.requestBody, 'request bodies come from the zod schemas');
  t.equal(document.components.securitySchemes.apiKey.scheme, 'bearer');
});

t.test('each question type and the condition are one named component, which the operations refer to; none is left unused', async (t) => {
  const { app } = await testApp(t);
  const served = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).body;
  const document = JSON.parse(served);
  const schemas = document.components.schemas as Record<string, unknown>;
  for (const type of QUESTION_TYPES) {
    const name = `${type.split('_').map((part) => part[0]!.toUpperCase() + part.slice(1)).join('')}QuestionInput`;
    t.ok(schemas[name], `${name} is a component`);
    t.equal(served.split(`"$ref":"#/components/schemas/${name}"`).length - 1 >= 1, true, `and referred to`);
  }
  t.ok(schemas.ConditionInput && schemas.StoredCondition, 'the condition, as requests take it and as stored objects show it');
  const body = JSON.stringify(document.paths['/api/forms'].post.requestBody);
  t.match(body, '"$ref":"#/components/schemas/ConsentQuestionInput"', 'a form\'s body names its question types rather than spell them out');
  // Reached from the operations, through the components they name in turn.
  const reached = new Set<string>();
  const follow = (value: unknown): void => {
    for (const match of JSON.stringify(value).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) {
      if (reached.has(match[1]!)) continue;
      reached.add(match[1]!);
      follow(schemas[match[1]!]);
    }
  };
  follow(document.paths);
  t.same(Object.keys(schemas).filter((name) => !reached.has(name)), [], 'no component is unused: each is reached from an operation');
  t.ok(served.length < 600_000, `the document is ${Math.round(served.length / 1000)} kB (1.4 MB when every operation spelled out each type)`);
});

// CommonJS packages: their exports are properties of the default one.
const { Document, Spectral } = SpectralCore;
const { Json } = Parsers;
const { oas } = Rulesets;

type Operation = { operationId?: string; description?: string; parameters?: Array<{ in: string; name: string; description?: string }> };

/** What a client generator lacks in each operation of the document: its name, its description, its path parameters' descriptions. */
function generatorGaps(document: { paths: Record<string, Record<string, Operation>> }): string[] {
  const gaps: string[] = [];
  const named = new Map<string, string>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const route = `${method.toUpperCase()} ${path}`;
      const id = operation.operationId;
      if (!id) gaps.push(`${route} has no operationId`);
      else if (!/^[a-z][a-zA-Z0-9]*$/.test(id)) gaps.push(`${route}: operationId ${id} is not camelCase`);
      else if (named.has(id)) gaps.push(`${route}: operationId ${id} is ${named.get(id)}'s too`);
      else named.set(id, route);
      if (!operation.description?.trim()) gaps.push(`${route} has no description`);
      for (const parameter of operation.parameters ?? []) {
        if (parameter.in === 'path' && !parameter.description?.trim()) gaps.push(`${route}: path parameter ${parameter.name} has no description`);
      }
    }
  }
  return gaps;
}

t.test('every operation has a camelCase operationId of its own, a description and described path parameters', async (t) => {
  const { app } = await testApp(t);
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  t.same(generatorGaps(document), [], 'a route added without them is named here');
  const ids = Object.values(document.paths as Record<string, Record<string, Operation>>).flatMap((operations) => Object.values(operations).map((o) => o.operationId));
  t.ok(ids.length >= 34, `${ids.length} operations`);
  for (const id of ['listForms', 'createForm', 'getWidget', 'submitWidgetResponse', 'submitPollVote', 'listFormResponses', 'getPollResults', 'eraseResponses', 'rotateWebhookSecret']) t.ok(ids.includes(id), id);
  t.match(document.paths['/api/forms/{id}'].get.parameters.find((p: { in: string }) => p.in === 'path'), { name: 'id', description: /form's id/ });

  // The check itself: a route registered without them is caught.
  const services = await testServices(t);
  const bare = await buildApp(services);
  t.teardown(() => bare.close());
  bare.get('/api/things/:thing', { schema: { tags: ['service'], summary: 'A thing', params: z.object({ thing: z.string() }), response: { 200: z.object({ ok: z.boolean() }) } } }, async () => ({ ok: true }));
  const gaps = generatorGaps((await bare.inject({ method: 'GET', url: '/api/openapi.json' })).json());
  t.same(gaps, ['GET /api/things/{thing} has no operationId', 'GET /api/things/{thing} has no description', 'GET /api/things/{thing}: path parameter thing has no description']);
});

t.test("Spectral's OpenAPI ruleset finds nothing to report in the document", async (t) => {
  const { app } = await testApp(t);
  const served = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).body;
  const spectral = new Spectral();
  // `spectral:oas` as `extends: spectral:oas` reads it, plus the rules it leaves off that generators rely on.
  spectral.setRuleset({ extends: [[oas as RulesetDefinition, 'recommended']], rules: { 'info-license': 'warn', 'license-url': 'warn', 'oas3-parameter-description': 'warn' } });
  const results = await spectral.run(new Document(served, Json, 'openapi.json'));
  t.same(
    results.map((r) => `${r.code} at ${r.path.join('.')}: ${r.message}`),
    [],
    'no error, warning, information or hint',
  );
});

t.test('the document names where to send requests: PUBLIC_BASE_URL, else the origin it was read from', async (t) => {
  const { app } = await testApp(t);
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  t.same(document.servers.map((s: { url: string }) => s.url), ['/']);
  t.match(document.info.license, { name: 'MIT', url: /^https:\/\// });
  const behindProxy = await testApp(t, { env: { PUBLIC_BASE_URL: 'https://feedback.example.com/' } });
  const named = (await behindProxy.app.inject({ method: 'GET', url: '/api/openapi.json', headers: { host: 'attacker.example' } })).json();
  t.same(named.servers.map((s: { url: string }) => s.url), ['https://feedback.example.com'], 'without the trailing slash, and never the Host a client sent');
});

t.test('each operation names exactly the error codes it answers, with examples', async (t) => {
  const { app } = await testApp(t);
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  const paths = document.paths;
  t.same(codesOf(paths['/api/polls/{id}/vote'].post.responses), {
    400: ['validation_error'],
    403: ['poll_not_published', 'poll_closed', 'invalid_token', 'domain_not_allowed'],
    404: ['poll_not_found'],
    409: ['duplicate_submission'],
    413: ['payload_too_large'],
    415: ['unsupported_media_type'],
    429: ['rate_limited'],
    500: ['event_unreadable', 'internal_error'],
    503: ['store_unavailable'],
    507: ['storage_full'],
  }, 'a public vote: no key codes; the poll\'s events are replayed');
  t.same(codesOf(paths['/api/widgets'].get.responses), {
    400: ['validation_error'],
    401: ['unauthorized'],
    403: ['plan_required', 'insufficient_scope'],
    429: ['rate_limited'],
    500: ['internal_error'],
    503: ['store_unavailable'],
  }, 'a key route without a body or an id: no 404, 413 or 415');
  t.same(codesOf(paths['/api/forms/{id}'].get.responses)['403'], ['plan_required', 'insufficient_scope', 'form_not_published'], 'an optional key brings the key codes');
  t.same(codesOf(paths['/api/forms/{id}'].put.responses)['409'], ['conflict']);
  t.same(codesOf(paths['/api/responses'].delete.responses)['404'], ['widget_not_found', 'form_not_found', 'poll_not_found']);
  const forbidden = paths['/api/widgets/{id}/submit'].post.responses['403'];
  t.match(forbidden.description, /`widget_closed`/, 'the reply description lists the codes');
  const examples = Object.values(forbidden.content['application/json'].examples as Record<string, { value: { code: string; statusCode: number } }>).map((e) => e.value);
  t.same(examples.map((e) => e.code), ['widget_not_published', 'widget_closed', 'invalid_token', 'domain_not_allowed'], 'one example per code');
  t.ok(examples.every((e) => e.statusCode === 403));
});

/** The examples a body schema carries in its metadata. */
const examplesOf = (schema: z.ZodType): unknown[] => {
  const examples = z.globalRegistry.get(schema)?.examples;
  return Array.isArray(examples) ? examples : [];
};

t.test('every request body has an example that its own schema accepts, and the create examples work', async (t) => {
  const bodies = { CreateWidgetBody, UpdateWidgetBody, CreateFormBody, UpdateFormBody, CreatePollBody, UpdatePollBody, SubmitWidgetBody: SubmitBodyOf.widget, SubmitFormBody: SubmitBodyOf.form, VoteBody, BulkDeleteBody };
  for (const [name, schema] of Object.entries(bodies)) {
    const examples = examplesOf(schema);
    t.ok(examples.length > 0, `${name} has an example`);
    for (const example of examples) t.same((schema as z.ZodType).safeParse(example).error?.issues ?? [], [], `${name}'s example is valid`);
  }

  // A date before the example form's closes_at.
  const { app, services } = await testApp(t, { clock: manualClock('2026-11-22T10:00:00.000Z') });
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  const who = await owner(services);
  for (const [path, schema] of [['/api/widgets', CreateWidgetBody], ['/api/forms', CreateFormBody], ['/api/polls', CreatePollBody]] as const) {
    const shown = document.paths[path].post.requestBody.content['application/json'];
    const example = shown.example ?? Object.values(shown.examples as Record<string, { value: unknown }>)[0]!.value;
    t.same(example, examplesOf(schema)[0], `POST ${path} shows it`);
    const created = await app.inject({ method: 'POST', url: path, headers: who.headers, payload: example as object });
    t.equal(created.statusCode, 201, `POST ${path} with its example creates: ${created.body.slice(0, 200)}`);
  }

  // Each submit example answers the object its kind's create example makes, from a page of its allowed domain.
  for (const [kind, create] of [['widget', CreateWidgetBody], ['form', CreateFormBody]] as const) {
    const path = `/api/${kind}s`;
    const id = (await app.inject({ method: 'POST', url: path, headers: who.headers, payload: examplesOf(create)[0] as object })).json().id;
    await app.inject({ method: 'PUT', url: `${path}/${id}`, headers: who.headers, payload: { published: true } });
    const token = (await app.inject({ method: 'GET', url: `${path}/${id}/token` })).json().token;
    const shown = document.paths[`${path}/{id}/submit`].post.requestBody.content['application/json'];
    const example = shown.example ?? Object.values(shown.examples as Record<string, { value: unknown }>)[0]!.value;
    t.same(example, examplesOf(SubmitBodyOf[kind])[0], `POST ${path}/{id}/submit shows its own example`);
    const submitted = await app.inject({ method: 'POST', url: `${path}/${id}/submit`, headers: { origin: 'https://example.com' }, payload: { ...(example as object), _token: token } });
    t.equal(submitted.statusCode, 200, `the ${kind} submit example is accepted: ${submitted.body.slice(0, 200)}`);
  }
});

t.test('a code the document does not name is still answered, and logged and counted', async (t) => {
  const services = await testServices(t);
  const app = await buildApp(services);
  t.teardown(() => app.close());
  app.get('/api/undocumented', { schema: { response: { 200: z.object({ ok: z.boolean() }) } } }, async () => {
    throw new AppError('widget_not_found', 'Widget not found');
  });
  const reply = await app.inject({ method: 'GET', url: '/api/undocumented' });
  t.equal(reply.statusCode, 404, 'the client gets the real error, not a 500');
  t.equal(reply.json().code, 'widget_not_found');
  t.match(services.metrics.render(), /feedback_undocumented_errors_total\{route="GET \/api\/undocumented",code="widget_not_found"\} 1/);
});

t.test('/docs serves the interactive reference', async (t) => {
  const { app } = await testApp(t);
  const page = await app.inject({ method: 'GET', url: '/docs/' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /html/);
  t.match(page.body, /swagger/i);
});
