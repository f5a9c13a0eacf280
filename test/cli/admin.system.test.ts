import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { openAccount } from '../../src/accounts/commands.js';
import { publishedWidget } from '../support/app.js';
import { admin, adminProcess, childEnv, json, LAUNCHED, startServer } from '../support/processes.js';
import { tempDir, testServices } from '../support/services.js';
import { live, submit } from '../seals/support.js';

// The other CLI tests call it in the test's process; these start it as `npm run admin` does, once per command.
t.test('every command, run as its own process through npm run admin', async (t) => {
  const { dir, app, who, close } = await live(t);
  const widget = await publishedWidget(app, who);
  await submit(app, widget);
  await close();
  const env = { DATA_DIR: dir, PUBLIC_BASE_URL: 'https://feedback.example.com' };
  const cli = (args: string[]) => adminProcess(args, env, LAUNCHED);

  t.match(await cli(['--help']), { code: 0, stdout: /^Usage: admin <command> \[options\][\s\S]*create-account[\s\S]*status/ }, '--help');
  const opened = json(await cli(['create-account', '--name', 'Acme', '--plan', 'business']));
  t.match(opened, { account_id: /^acc_/, api_key: /^svc_/ }, 'create-account');
  const key = json(await cli(['create-key', '--account', opened.account_id, '--name', 'spare']));
  t.match(key, { key_id: /^key_/ }, 'create-key');
  t.equal(json(await cli(['list-keys', '--account', opened.account_id])).length, 2, 'list-keys');
  t.same(json(await cli(['set-plan', '--account', opened.account_id, '--plan', 'pro'])), { account_id: opened.account_id, plan: 'pro' }, 'set-plan');
  t.same(json(await cli(['revoke-key', '--key', key.key_id])), { key_id: key.key_id, revoked: true }, 'revoke-key');
  t.match(json(await cli(['login-link', '--account', opened.account_id])), { url: /^https:\/\/feedback\.example\.com\/dashboard\/login\?t=/ }, 'login-link');
  const events = await cli(['events']);
  t.equal(events.code, 0, 'events');
  t.match(JSON.parse(events.stdout.split('\n')[0]!), { position: '1' });
  t.match(json(await cli(['seal'])), { seals: Number }, 'seal');
  t.match(await cli(['verify']), { code: 0, stderr: '' }, 'verify');
  t.match(await cli(['audit', '--object', widget]), { code: 0, stdout: /"type":"WidgetCreated"/ }, 'audit');
  t.match(json(await cli(['scavenge'])), { store: 'sqlite', needed: false }, 'scavenge');
  t.match(json(await cli(['status'])), { head: String, halted: null }, 'status');
  t.match(json(await cli(['rebuild'])), { rebuilt: true }, 'rebuild');
  t.match(await cli(['rebuild', '--until', 'yesterday', '--out', join(dir, 'x')]), { code: 2, stdout: '', stderr: /^admin: --until must be an ISO 8601 time/ }, 'bad arguments: exit 2');
});

t.test('a reader that stops early (admin events | head) ends the CLI quietly', async (t) => {
  const dir = tempDir(t);
  {
    // More history than a pipe holds, so the CLI is still writing when head has gone.
    const services = await testServices(t, { dataDir: dir });
    for (let i = 0; i < 300; i++) await openAccount(services, { name: `Account ${i}`, plan: 'free', scopes: ['forms:read'] });
    await services.close();
  }
  const run = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const child = spawn('bash', ['-o', 'pipefail', '-c', `"${process.execPath}" "${LAUNCHED.admin}" events | head -n 1`], { env: childEnv({ DATA_DIR: dir }, false), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  // The launcher may have compiled first (and said so): nothing else on stderr.
  t.equal(run.stderr.replace(/^admin: compiling the sources into dist\/ \(once after each change\)\n/, ''), '', 'no stack trace, nothing at all on stderr');
  t.equal(run.code, 0, 'and a success, even under pipefail');
  t.match(JSON.parse(run.stdout), { position: '1', type: 'AccountOpened' }, 'head got its line');
});

t.test("login-link names the running server's address, which the CLI's environment need not know", async (t) => {
  const dir = tempDir(t);
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'pro'], { DATA_DIR: dir }));
  // The server listens on a port of its own (not 3000); the CLI below is given DATA_DIR only.
  const server = await startServer({ DATA_DIR: dir });
  t.teardown(() => server.stop('SIGKILL'));
  const link = json(await admin(['login-link', '--account', opened.account_id], { DATA_DIR: dir }));
  t.equal(link.url.slice(0, link.url.indexOf('/dashboard/')), server.url, 'where the server listens');
  const page = await fetch(link.url);
  t.equal(page.status, 200, 'and the link opens the sign-in page there');
  t.match(await page.text(), /<form id="sign-in" method="post" action="\/dashboard\/login">/);
  const public_ = json(await admin(['login-link', '--account', opened.account_id], { DATA_DIR: dir, PUBLIC_BASE_URL: 'https://feedback.example.com/' }));
  t.match(public_.url, /^https:\/\/feedback\.example\.com\/dashboard\/login\?t=/, 'PUBLIC_BASE_URL wins');
  const given = json(await admin(['login-link', '--account', opened.account_id, '--base', 'http://10.0.0.5:8080'], { DATA_DIR: dir }));
  t.match(given.url, /^http:\/\/10\.0\.0\.5:8080\/dashboard\/login\?t=/, '--base wins over both');
  t.equal((await server.stop('SIGTERM')).code, 0);
  const after = json(await admin(['login-link', '--account', opened.account_id], { DATA_DIR: dir, PORT: '4100' }));
  t.match(after.url, /^http:\/\/127\.0\.0\.1:4100\/dashboard\/login\?t=/, 'a server that stopped leaves no address: the configuration says where one would listen');
});

t.test('output that cannot be written (a full disk) is said in one line, exit 1, no stack', { skip: existsSync('/dev/full') ? false : 'no /dev/full here to stand for a full disk' }, async (t) => {
  const dir = tempDir(t);
  const run = await new Promise<{ code: number | null; stderr: string }>((resolve, reject) => {
    const child = spawn('bash', ['-c', `"${process.execPath}" "${LAUNCHED.admin}" create-account --name Full --plan free > /dev/full`], { env: childEnv({ DATA_DIR: dir }, false), stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stderr }));
  });
  t.equal(run.code, 1);
  t.equal(run.stderr.replace(/^admin: compiling the sources into dist\/ \(once after each change\)\n/, ''), 'admin: could not write the output (ENOSPC): the command ran, and what it printed is lost\n');
});
