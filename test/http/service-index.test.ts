import { readFileSync } from 'node:fs';
import t from 'tap';
import { testApp } from '../support/app.js';

const ROOT = new URL('../../', import.meta.url).pathname;
const PACKAGE = JSON.parse(readFileSync(`${ROOT}package.json`, 'utf8')) as { version: string };

t.test('GET / answers a program with the index of the service, and every link in it answers', async (t) => {
  const { app } = await testApp(t);
  for (const accept of [undefined, 'application/json', '*/*']) {
    const reply = await app.inject({ method: 'GET', url: '/', headers: accept ? { accept } : {} });
    t.equal(reply.statusCode, 200, `Accept: ${accept}`);
    t.match(reply.headers['content-type'], /^application\/json/);
    t.strictSame(reply.json(), {
      name: 'Feedback collection service',
      version: PACKAGE.version,
      links: { docs: '/docs', api_reference: '/docs/api.md', openapi: '/api/openapi.json', embed_script: '/embed.js', dashboard: '/dashboard', health: '/healthz', ready: '/readyz' },
    });
  }
  const links = (await app.inject({ method: 'GET', url: '/' })).json().links as Record<string, string>;
  for (const [name, path] of Object.entries(links)) {
    const reply = await app.inject({ method: 'GET', url: path });
    // The dashboard sends a browser without a session to its signed-out page (303).
    t.ok([200, 302, 303].includes(reply.statusCode), `${name} (${path}) answers: ${reply.statusCode}`);
  }
});

t.test('GET / sends a browser to /docs', async (t) => {
  const { app } = await testApp(t);
  const reply = await app.inject({ method: 'GET', url: '/', headers: { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' } });
  t.equal(reply.statusCode, 302);
  t.equal(reply.headers.location, '/docs');
});

t.test('with PUBLIC_BASE_URL the index names full addresses', async (t) => {
  const { app } = await testApp(t, { env: { PUBLIC_BASE_URL: 'https://feedback.example/' } });
  t.match((await app.inject({ method: 'GET', url: '/' })).json().links, { docs: 'https://feedback.example/docs', embed_script: 'https://feedback.example/embed.js' });
});

t.test('the OpenAPI document describes GET /, links the API reference, and types page and limit as integers', async (t) => {
  const { app } = await testApp(t);
  const document = (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json();
  t.equal(document.info.title, 'Feedback collection service');
  t.equal(document.info.version, PACKAGE.version, 'the version is the package version');
  t.match(document.info.description, /\[API reference\]\(\/docs\/api\.md\)/, 'the description links the reference the server serves');
  const index = document.paths['/'].get;
  t.ok(index.responses['200'] && index.responses['302'], 'GET / and its redirect are documented');
  for (const path of ['/api/widgets', '/api/forms', '/api/polls', '/api/widgets/{id}/responses', '/api/forms/{id}/responses']) {
    const query = (document.paths[path].get.parameters as Array<{ in: string; name: string; schema: { type: string; minimum: number; pattern?: string } }>).filter((p) => p.in === 'query' && (p.name === 'page' || p.name === 'limit'));
    t.same(query.map((p) => [p.name, p.schema.type, p.schema.minimum]), [['page', 'integer', 1], ['limit', 'integer', 1]], `${path}: page and limit are integers from 1`);
    t.notOk(query.some((p) => p.schema.pattern), 'with no string pattern left on them');
  }
  const reference = await app.inject({ method: 'GET', url: '/docs/api.md' });
  t.equal(reference.statusCode, 200);
  t.match(reference.headers['content-type'], /^text\/markdown; charset=utf-8/);
  t.equal(reference.body, readFileSync(`${ROOT}docs/api.md`, 'utf8'), 'docs/api.md, as it is in the repository');
});

t.test('/docs: titled with the service name, without a logo or inline code, under a policy that needs nothing from elsewhere', async (t) => {
  const { app } = await testApp(t);
  const page = await app.inject({ method: 'GET', url: '/docs/' });
  t.equal(page.statusCode, 200);
  t.match(page.body, /<title>Feedback collection service: API<\/title>/);
  const policy = page.headers['content-security-policy'] as string;
  t.notMatch(policy, /unsafe-inline|upgrade-insecure-requests|https:/, 'no inline code, no upgrade that would break plain http on a LAN, nothing from elsewhere');
  const initializer = await app.inject({ method: 'GET', url: '/docs/static/swagger-initializer.js' });
  t.match(initializer.body, /"layout":"BaseLayout"/, 'the layout without the top bar and its logo');
});

