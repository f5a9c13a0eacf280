import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync, realpathSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { Script } from 'node:vm';
import t from 'tap';
import { testApp } from './support/app.js';
import { admin, built, childEnv, json, startServer } from './support/processes.js';
import { tempDir } from './support/services.js';

const ROOT = new URL('../', import.meta.url).pathname;

/** `npm run build` into `dir`, never into the dist/ a developer may be running. */
function build(dir: string): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', ['run', '--silent', 'build', '--', join(dir, 'dist')], {
      cwd: ROOT,
      env: { ...childEnv({}, false), HOME: process.env.HOME ?? dir },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

t.test('the built output is the product: plain node serves the same API, the embed script as written, and the CLI', async (t) => {
  const dir = tempDir(t, 'build');
  const result = await build(dir);
  t.equal(result.code, 0, `the build succeeds ${result.output}`);
  // The image's layout: package.json (it declares ESM), the dependencies and dist/; no sources.
  copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'), 'dir');

  const env = { DATA_DIR: join(dir, 'data') };
  const server = await startServer(env, built(dir));
  t.teardown(() => server.stop('SIGKILL'));

  const embed = await fetch(`${server.url}/embed.js`);
  t.equal(embed.status, 200);
  t.match(embed.headers.get('content-type'), /^application\/javascript/);
  const served = Buffer.from(await embed.arrayBuffer());
  t.ok(served.equals(readFileSync(join(ROOT, 'src/embed/embed.js'))), '/embed.js is the source, byte for byte');
  // A classic script, as a browser runs <script src>: `export` or `import` in it would not parse.
  t.doesNotThrow(() => new Script(served.toString('utf8'), { filename: 'embed.js' }), 'it parses as a classic script');
  t.throws(() => new Script(`${served.toString('utf8')}\nexport {};`), 'which a module tail would not');

  const reference = await fetch(`${server.url}/docs/api.md`);
  t.equal(reference.status, 200, 'the API reference the docs link to is in the build');
  t.equal(await reference.text(), readFileSync(join(ROOT, 'docs/api.md'), 'utf8'));

  const { app } = await testApp(t);
  const openapi = await fetch(`${server.url}/api/openapi.json`);
  t.same(await openapi.json(), (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json(), 'the same API as the sources serve');

  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business', '--scopes', 'forms:read,forms:write,responses:read'], env, built(dir)));
  const headers = { authorization: `Bearer ${opened.api_key}`, 'content-type': 'application/json' };
  const call = async (method: string, path: string, body?: object) => {
    const reply = await fetch(`${server.url}${path}`, { method, headers, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: reply.status, body: (await reply.json()) as Record<string, any> };
  };
  // The server learns of keys made by the CLI by polling the store (D1: within 2 s).
  let created;
  for (const deadline = Date.now() + 60_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    created = await call('POST', '/api/widgets', { widget_type: 'nps', title: 'Built' });
    if (created.status !== 401) break;
  }
  t.equal(created!.status, 201, 'a key made by the built CLI works on the built server');
  const id = created!.body.id as string;
  t.equal((await call('PUT', `/api/widgets/${id}`, { published: true })).status, 200);
  const token = (await (await fetch(`${server.url}/api/widgets/${id}/token`)).json()) as { token: string };
  const submitted = await fetch(`${server.url}/api/widgets/${id}/submit`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ answers: { score: 9 }, _token: token.token }),
  });
  t.equal(submitted.status, 200, (await submitted.text()).slice(0, 200));
  t.match(await call('GET', `/api/widgets/${id}/responses`), { status: 200, body: { pagination: { total: 1 } } });

  t.equal((await server.stop('SIGTERM')).code, 0, 'SIGTERM shuts the built server down cleanly');
});
