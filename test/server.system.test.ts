import t from 'tap';
import { eventually } from './support/eventually.js';
import { admin, json, startFailing, startServer } from './support/processes.js';
import { tempDir } from './support/services.js';

// How soon it sees them (D1: within 2 s) is a figure of `npm run bench`, not of this test.
t.test('the running server honours keys the CLI makes and revokes, and keeps data across restarts', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  let server = await startServer(env);
  t.teardown(() => server.stop('SIGKILL'));
  const anonymous = await fetch(`${server.url}/api/widgets`);
  t.equal(anonymous.status, 401);
  t.match(await anonymous.json(), { statusCode: 401, code: 'unauthorized', error: 'Unauthorized', message: String });

  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business', '--scopes', 'forms:read,forms:write,responses:read,responses:write'], env));
  const headers = { authorization: `Bearer ${opened.api_key}`, 'content-type': 'application/json' };
  // The server learns of the key from the shared store, by polling it.
  const status = async () => (await fetch(`${server.url}/api/widgets`, { headers })).status;
  t.ok(await eventually(async () => (await status()) === 200, { everyMs: 100 }), 'a key made by the CLI works on the running server');
  const created = await fetch(`${server.url}/api/widgets`, { method: 'POST', headers, body: JSON.stringify({ widget_type: 'nps', title: 'Survives' }) });
  t.equal(created.status, 201);

  const second = json(await admin(['create-key', '--account', opened.account_id, '--name', 'spare', '--scopes', 'forms:read'], env));
  json(await admin(['revoke-key', '--key', opened.key_id], env));
  t.ok(await eventually(async () => (await status()) === 401, { everyMs: 100 }), 'the revoked key is refused by the running server');

  const stopped = await server.stop('SIGTERM');
  t.equal(stopped.code, 0, 'SIGTERM shuts down cleanly');
  server = await startServer(env);
  const after = await fetch(`${server.url}/api/widgets`, { headers: { authorization: `Bearer ${second.api_key}` } });
  t.equal(after.status, 200);
  t.same(((await after.json()) as { widgets: Array<{ title: string }> }).widgets.map((w: { title: string }) => w.title), ['Survives'], 'data survives a restart');
  t.equal((await fetch(`${server.url}/api/widgets`, { headers })).status, 401, 'and so does the revocation');
});

t.test('bad configuration stops the start with one line naming the variable', async (t) => {
  const dir = tempDir(t);
  // Every value loadConfig refuses is in test/config.test.ts; here, the process: its exit, its one line, a listen's failure.
  const cases: Array<[Record<string, string>, RegExp]> = [
    [{ PORT: 'abc' }, /^invalid configuration: PORT must be a whole number from 1 to 65535 \(got "abc"\)$/],
    [{ EVENTSTORE_URL: 'http://user:pw@example' }, /^invalid configuration: EVENTSTORE_URL must be an esdb:\/\/ or kurrentdb:\/\/ connection string$/],
    // Well formed, but no address of this machine: the listen fails, and says why in the same one line.
    [{ HOST: '192.0.2.1' }, /^invalid configuration: HOST "192\.0\.2\.1" is not an address of this machine/],
    [{ MONGODB_URL: 'mongodb://user:pw@127.0.0.1:27017/feedback' }, /^invalid configuration: SECRET must be set with MONGODB_URL: /],
  ];
  for (const [env, line] of cases) {
    const run = await startFailing({ DATA_DIR: dir, ...env });
    t.equal(run.code, 1, Object.keys(env).join());
    t.match(run.stderr.trim(), line);
    t.equal(run.stderr.trim().split('\n').length, 1, 'one line');
    t.notMatch(run.stderr, /pw@/, 'credentials are never echoed');
  }
});
