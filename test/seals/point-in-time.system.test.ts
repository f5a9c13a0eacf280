import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { admin, startAdmin, startServer } from '../support/processes.js';
import { eventually } from '../support/eventually.js';
import { tempDir } from '../support/services.js';

async function source(t: Test): Promise<string> {
  const dir = tempDir(t);
  t.equal((await admin(['create-account', '--name', 'Source', '--plan', 'free'], { DATA_DIR: dir })).code, 0);
  return dir;
}

t.test('a copy served says at start that it is a read-only copy, and of which moment', async (t) => {
  const dir = await source(t);
  const until = new Date().toISOString();
  const out = join(tempDir(t, 'served'), 'store');
  t.equal((await admin(['rebuild', '--until', until, '--out', out], { DATA_DIR: dir })).code, 0);
  const server = await startServer({ DATA_DIR: out, LOG_LEVEL: 'info' });
  t.teardown(() => server.stop());
  const readyLine = () => server.log().split('\n').filter(Boolean).map((line) => JSON.parse(line)).find((line) => /^feedback service ready/.test(line.msg));
  t.ok(await eventually(() => readyLine() !== undefined));
  t.match(readyLine(), { msg: `feedback service ready at ${server.url}: a read-only copy as of ${until}, API docs ${server.url}/docs, OpenAPI ${server.url}/api/openapi.json, embed script ${server.url}/embed.js, dashboard ${server.url}/dashboard, health ${server.url}/healthz; mail: SMTP_URL is unset, so sign-in links and other mail are written to this log`, read_only_as_of: until });
});

t.test('rebuild --until stopped by Ctrl-C (SIGINT) leaves no copy behind', async (t) => {
  const dir = await source(t);
  const out = join(tempDir(t, 'interrupted'), 'store');
  const { child, finished } = startAdmin(['rebuild', '--until', new Date().toISOString(), '--out', out], { DATA_DIR: dir });
  // The copy's directory is made after the arguments are checked, and building its read models takes a second more.
  t.ok(await eventually(() => existsSync(out), { everyMs: 5 }), 'the copy is under way');
  child.kill('SIGINT');
  const run = await finished;
  t.equal(run.code, 130, run.stderr);
  t.notOk(existsSync(out), 'and nothing of it stays');
});
