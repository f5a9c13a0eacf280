import { spawn } from 'node:child_process';
import { copyFileSync, readFileSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { Script } from 'node:vm';
import t from 'tap';
import { testApp } from './support/app.js';
import { admin, built, childEnv, compiledBuild, json, startServer } from './support/processes.js';
import { tempDir } from './support/services.js';

const ROOT = new URL('../', import.meta.url).pathname;

/** Runs a command to its end, its output and errors together. */
function run(command: string, args: string[], cwd: string, env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...childEnv({}, false), HOME: process.env.HOME ?? cwd, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.stderr.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

/** The typed call the README shows, as it is there: the indented block that starts by importing openapi-fetch. */
function readmeTypedCall(): string {
  const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').split('\n');
  const start = lines.indexOf("    import createClient from 'openapi-fetch';");
  if (start < 0) throw new Error('the README shows no typed call');
  const block: string[] = [];
  for (const line of lines.slice(start)) {
    if (line !== '' && !line.startsWith('    ')) break;
    block.push(line.slice(4));
  }
  return block.join('\n');
}

t.test('the built output is the product: plain node serves the same API, the embed script with its evaluator, and the CLI', async (t) => {
  // `npm run build -- <dir>/dist --no-check` as the system tier makes it once for its servers (its type check
  // runs beside the suite), in the image's layout: package.json (it declares ESM), the dependencies and dist/; no sources.
  const dir = compiledBuild();
  const work = tempDir(t, 'build');
  const env = { DATA_DIR: join(work, 'data') };
  const server = await startServer(env, built(dir));
  t.teardown(() => server.stop('SIGKILL'));

  const embed = await fetch(`${server.url}/embed.js`);
  t.equal(embed.status, 200);
  t.match(embed.headers.get('content-type'), /^application\/javascript/);
  const served = Buffer.from(await embed.arrayBuffer());
  t.ok(served.equals(readFileSync(join(dir, 'dist/src/embed/served.js'))), '/embed.js is the script the build made');
  t.ok(served.length < readFileSync(join(ROOT, 'src/embed/embed.js')).length, 'the embed, minified');
  t.match(served.toString('utf8'), /logicProblems/, 'with the form evaluator');
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

  // The published client: the served document and its types are in the build; the README's typed call compiles against them and runs.
  t.same(JSON.parse(readFileSync(join(dir, 'dist/client/openapi.json'), 'utf8')), (await app.inject({ method: 'GET', url: '/api/openapi.json' })).json(), 'the build holds the document a server serves');
  // The client's project: the published types, and the dependencies it imports.
  copyFileSync(join(dir, 'dist/client/api.d.ts'), join(work, 'api.d.ts'));
  symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(work, 'node_modules'), 'dir');
  const example = readmeTypedCall().replace('wgt_01JD3Q5V8K2M4N6P8R0S2T4V6Z', id);
  // Calls the types refuse, so a loose type (any) would fail the check: each expected error must occur.
  const refused = [
    "// @ts-expect-error: a path the API does not have\nawait api.GET('/api/widget/{id}', { params: { path: { id } } });",
    "// @ts-expect-error: the path parameter is `id`\nawait api.GET('/api/widgets/{id}/responses', { params: { path: { widgetId: 'x' } } });",
    "// @ts-expect-error: a response has no `score` of its own\ndata.responses[0]?.score;",
    "// @ts-expect-error: a new form needs a title\nawait api.POST('/api/forms', { body: { questions: [] } });",
  ];
  writeFileSync(join(work, 'typed-call.mts'), `${example}\nconst id = '${id}';\n${refused.join('\n')}\n`);
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const checked = await run(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--types', 'node', 'typed-call.mts'], work);
  t.equal(checked.code, 0, `the README's typed call type-checks against the built types ${checked.output}`);
  const ran = await run(process.execPath, ['--import', 'tsx', 'typed-call.mts'], work, { FEEDBACK_URL: server.url, FEEDBACK_API_KEY: opened.api_key });
  t.equal(ran.code, 0, ran.output);
  t.match(ran.output, /score: 9/, 'and reads the response through the API');

  t.equal((await server.stop('SIGTERM')).code, 0, 'SIGTERM shuts the built server down cleanly');
});
