import { Validator } from '@seriousme/openapi-schema-validator';
import t from 'tap';
import { testApp } from '../support/app.js';

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

  const list = document.paths['/api/widgets'].get;
  t.same(list.security, [{ apiKey: [] }], 'K routes name the bearer scheme');
  t.ok(list.responses['401'] && list.responses['429'], 'and their error replies');
  t.same(document.paths['/api/widgets/{id}'].get.security, [{}, { apiKey: [] }], 'public-if-published reads take an optional key');
  t.notOk(document.paths['/api/widgets/{id}/submit'].post.security, 'submissions take no key');
  t.ok(document.paths['/api/widgets'].post.requestBody, 'request bodies come from the zod schemas');
  t.equal(document.components.securitySchemes.apiKey.scheme, 'bearer');
});

t.test('/docs serves the interactive reference', async (t) => {
  const { app } = await testApp(t);
  const page = await app.inject({ method: 'GET', url: '/docs/' });
  t.equal(page.statusCode, 200);
  t.match(page.headers['content-type'], /html/);
  t.match(page.body, /swagger/i);
});
