import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { KEYS_FILE } from '../../src/infra/subject-keys/port.js';
import { SECRET_CHECK, WrongSecret } from '../../src/kernel/personal.js';
import { admin, freePort, json } from '../support/processes.js';
import { tempDir } from '../support/services.js';
import { publishedWidget } from '../support/app.js';
import { live, submit } from '../seals/support.js';

t.test('create-account, create-key, list-keys, set-plan, revoke-key', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business'], env));
  t.strictSame(Object.keys(opened).sort(), ['account_id', 'api_key', 'key_id', 'plan', 'scopes']);
  t.match(opened, { plan: 'business', scopes: ['forms:read', 'responses:read'] });
  t.match(opened.api_key, /^svc_[0-9A-Za-z]{43}$/);

  const key = json(await admin(['create-key', '--account', opened.account_id, '--name', 'CI deploys', '--scopes', 'forms:read,forms:write'], env));
  t.strictSame(Object.keys(key).sort(), ['api_key', 'key_id', 'prefix', 'scopes']);
  t.same(key.scopes, ['forms:read', 'forms:write']);
  t.equal(key.prefix, key.api_key.slice(0, 12));

  const run = await admin(['list-keys', '--account', opened.account_id], env);
  const keys = json(run);
  t.equal(keys.length, 2);
  t.notMatch(run.stdout, /svc_[0-9A-Za-z]{43}/, 'list-keys never shows a full key');
  t.notMatch(run.stdout, /[0-9a-f]{64}/, 'nor its hash');
  t.match(keys[1], { key_id: key.key_id, name: 'CI deploys', prefix: key.prefix, scopes: ['forms:read', 'forms:write'], created_at: String, last_used_at: null, revoked_at: null });

  t.same(json(await admin(['set-plan', '--account', opened.account_id, '--plan', 'pro'], env)), { account_id: opened.account_id, plan: 'pro' });
  t.same(json(await admin(['revoke-key', '--key', key.key_id], env)), { key_id: key.key_id, revoked: true });
  t.same(json(await admin(['revoke-key', '--key', key.key_id], env)), { key_id: key.key_id, revoked: true }, 'revoking twice is harmless');
  t.match(json(await admin(['list-keys', '--account', opened.account_id], env))[1], { revoked_at: String });
});

t.test('bad arguments: a message on stderr, exit 2, nothing changed', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business'], env));
  const before = (await admin(['events'], env)).stdout;
  const bad: Array<[string, string[], RegExp]> = [
    ['no command', [], /^admin: a command is required\n\nUsage: admin <command>/],
    ['unknown command', ['drop-everything'], /^admin: unknown command 'drop-everything'\n$/],
    ['mistyped command', ['creat-account', '--name', 'X'], /^admin: unknown command 'creat-account' — did you mean 'create-account'\?\n$/],
    ['missing name', ['create-account', '--plan', 'free'], /^admin: missing --name \(the account name\)\n$/],
    ['missing plan', ['create-account', '--name', 'X'], /^admin: missing --plan \(free, pro or business\)\n$/],
    ['bad plan', ['create-account', '--name', 'X', '--plan', 'gold'], /^admin: --plan must be free, pro or business\n$/],
    ['bad scope', ['create-account', '--name', 'X', '--plan', 'free', '--scopes', 'forms:read,admin'], /--scopes/],
    ['empty scopes', ['create-account', '--name', 'X', '--plan', 'free', '--scopes', ','], /--scopes/],
    ['unknown option', ['create-account', '--name', 'X', '--plan', 'free', '--root'], /^admin: unknown option '--root' for create-account\n$/],
    ['mistyped option', ['events', '--aftr', '3'], /^admin: unknown option '--aftr' for events — did you mean '--after'\?\n$/],
    ['a page that is no number', ['encrypt-existing', '--page', 'abc'], /^admin: --page must be a number\n$/],
    ['help for no command', ['help', 'bogus'], /^admin: unknown command 'bogus'\n$/],
    ['an option twice', ['create-account', '--name', 'X', '--plan', 'free', '--plan', 'pro'], /^admin: --plan is given twice: give it once\n$/],
    ['an option twice, once with =', ['create-account', '--name=X', '--name', 'Y', '--plan', 'free'], /^admin: --name is given twice: give it once\n$/],
    ['help for a mistyped command', ['creat-account', '--help'], /^admin: unknown command 'creat-account' — did you mean 'create-account'\?\n$/],
    ['an empty stream', ['events', '--stream', ''], /^admin: --stream must not be empty\n$/],
    ['a stream too long', ['events', '--stream', 'x'.repeat(400)], /^admin: --stream must be at most 300 characters\n$/],
    ['stray argument', ['list-keys', '--account', opened.account_id, 'extra'], /argument/i],
    ['option without value', ['list-keys', '--account'], /argument missing|requires|--account/i],
    ['unknown account', ['create-key', '--account', 'acc_nobody', '--name', 'x'], /^admin: no such account\n$/],
    ['unknown account for list', ['list-keys', '--account', 'acc_nobody'], /^admin: no such account\n$/],
    ['unknown account for plan', ['set-plan', '--account', 'acc_nobody', '--plan', 'pro'], /^admin: no such account\n$/],
    ['unknown key', ['revoke-key', '--key', 'key_nobody'], /^admin: no such key\n$/],
    ['malformed id', ['revoke-key', '--key', '../../etc'], /--key/],
    ['bad position', ['events', '--after', '-3'], /--after/],
    ['bad revision', ['events', '--stream', 'account-x', '--from', 'one'], /--from/],
    ['a revision without a stream', ['events', '--from', '3'], /--from is a revision of --stream; for the whole history, give --after POSITION/],
    ['a position with a stream', ['events', '--stream', 'account-x', '--after', '3'], /--after is a position in the whole history/],
    ['bad thread count', ['scavenge', '--threads', '0'], /--threads/],
  ];
  for (const [name, args, message] of bad) {
    const run = await admin(args, env);
    t.equal(run.code, 2, name);
    if (name !== 'no command') t.equal(run.stderr.trim().split('\n').length, 1, `${name}: one line, and no usage after it`);
    t.match(run.stderr, message, name);
    t.equal(run.stdout, '', `${name}: nothing on stdout`);
  }
  t.equal((await admin(['events'], env)).stdout, before, 'no event was written by any of them');
  for (const args of [['help'], ['--help']]) {
    const help = await admin(args, env);
    t.match(help, { code: 0, stdout: /^Usage: admin <command> \[options\][\s\S]*create-account[\s\S]*status/, stderr: '' }, `${args[0]} is not an error: the usage, on stdout`);
  }
  for (const args of [['create-account', '--help'], ['help', 'create-account']]) {
    const help = await admin(args, env);
    t.match(help, { code: 0, stdout: /^Usage: admin create-account \[options\][\s\S]*--plan <plan> +free, pro or business/, stderr: '' }, `${args.join(' ')}: that command's options`);
  }
  const config = await admin(['list-keys', '--account', opened.account_id], { ...env, LOG_LEVEL: 'loud' });
  t.equal(config.code, 1, 'bad configuration is exit 1');
  t.match(config.stderr.trim(), /^invalid configuration: LOG_LEVEL must be one of/);
});

t.test('events prints the history as NDJSON for auditors; rebuild rebuilds', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business'], env));
  json(await admin(['set-plan', '--account', opened.account_id, '--plan', 'pro'], env));
  const all = (await admin(['events'], env)).stdout.trim().split('\n').map((line) => JSON.parse(line));
  t.same(all.map((e) => e.type), ['AccountOpened', 'ApiKeyIssued', 'AccountPlanChanged']);
  t.match(all[1], { position: '2', stream: `account-${opened.account_id}`, revision: 1, id: String, recorded_at: String, data: { key_id: opened.key_id, prefix: String }, metadata: { schema_version: 2, actor: 'cli', occurred_at: String } });
  t.notMatch(JSON.stringify(all), new RegExp(opened.api_key), 'the history never holds a key');
  const lines = async (args: string[]) => (await admin(['events', ...args], env)).stdout.split('\n').filter(Boolean).map((line) => JSON.parse(line));
  t.same(await lines(['--after', all[0].position]), all.slice(1), '--after a printed position: the events after it');
  t.same(await lines(['--after', all[2].position]), [], 'nothing after the last');
  t.same(await lines(['--after', '0']), all, '0 is before the first event');
  const stream = (await admin(['events', '--stream', `account-${opened.account_id}`, '--from', '1'], env)).stdout.trim().split('\n');
  t.same(stream.map((line) => JSON.parse(line).revision), [1, 2]);
  t.equal((await admin(['events', '--stream', 'account-nobody'], env)).stdout, '');
  t.match(json(await admin(['rebuild'], env)), { rebuilt: true, events: 3, seconds: Number, margin_events_per_second: Number, fixed_seconds: Number, dropped_seconds: Number });
  t.equal(json(await admin(['list-keys', '--account', opened.account_id], env)).length, 1, 'read models are back after the rebuild');
});

t.test('the CLI does not need Redis, even when the server is told to use one that is down', async (t) => {
  const env = { DATA_DIR: tempDir(t), REDIS_URL: 'redis://127.0.0.1:1' };
  const run = await admin(['create-account', '--name', 'Acme', '--plan', 'free'], env);
  t.equal(run.code, 0, run.stderr);
  t.match(json(run), { plan: 'free' });
});

t.test('scavenge: on the embedded store there is nothing to scavenge, and it says so', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business'], env));
  const run = await admin(['scavenge'], env);
  t.equal(run.code, 0, run.stderr);
  t.equal(run.stdout.trim().split('\n').length, 1, 'one line');
  t.same(JSON.parse(run.stdout), { store: 'sqlite', scavenge_id: null, needed: false, reason: 'the embedded store overwrites erased events when it erases them' });
  t.equal(json(await admin(['list-keys', '--account', opened.account_id], env)).length, 1, 'and the store is as it was');
});

t.test('scavenge: with KurrentDB, a node that cannot be reached is exit 1 in one line', async (t) => {
  const env = { DATA_DIR: tempDir(t), SECRET: 's'.repeat(32) };
  const port = await freePort();
  const unreachable = await admin(['scavenge'], { ...env, EVENTSTORE_URL: `kurrentdb://admin:hunter22@127.0.0.1:${port}?tls=false` });
  t.equal(unreachable.code, 1);
  t.match(unreachable.stderr, new RegExp(`^admin: KurrentDB node 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED[^\\n]*\\n$`), 'one line naming the node, no stack');
  t.notMatch(unreachable.stderr, /hunter22/, 'never the password');
  t.equal(unreachable.stdout, '');
  const tls = await admin(['scavenge', '--threads', '2'], { ...env, EVENTSTORE_URL: `kurrentdb://127.0.0.1:${port}` });
  t.equal(tls.code, 1);
  t.match(tls.stderr, new RegExp(`^admin: KurrentDB node 127\\.0\\.0\\.1:${port}: connect ECONNREFUSED[^\\n]*\\n$`), 'over TLS, without a user, the same');
});

t.test('under another SECRET than the store was made under: the server and the CLI refuse as they open it; under its own it rebuilds', async (t) => {
  const dir = tempDir(t);
  const { app, who, close } = await live(t, dir, { SECRET: 'the-secret-it-was-sealed-under-0123456789' });
  await submit(app, await publishedWidget(app, who));
  await close();
  await t.rejects(live(t, dir, { SECRET: 'another-secret-altogether-0123456789abcdef' }), new WrongSecret(), 'the server does not start');
  const run = await admin(['rebuild'], { DATA_DIR: dir, SECRET: 'another-secret-altogether-0123456789abcdef' });
  t.equal(run.code, 1);
  t.equal(run.stderr, `admin: could not open the stores: ${new WrongSecret().message}\n`, 'the CLI says why in one line');
  t.equal(run.stdout, '');
  const again = await admin(['rebuild'], { DATA_DIR: dir, SECRET: 'the-secret-it-was-sealed-under-0123456789' });
  t.equal(again.code, 0, 'under its own SECRET the same store rebuilds');
});

t.test('a store sealed before it kept a check of SECRET: another SECRET stops at the first sealed event in one line, exit 1; its own rebuilds and from then on the check refuses another', async (t) => {
  const dir = tempDir(t);
  const { app, who, close } = await live(t, dir, { SECRET: 'the-secret-it-was-sealed-under-0123456789' });
  const { id } = await submit(app, await publishedWidget(app, who));
  await close();
  const keys = new Database(join(dir, KEYS_FILE));
  keys.prepare('DELETE FROM subject_keys WHERE subject = ?').run(SECRET_CHECK);
  keys.close();
  const run = await admin(['rebuild'], { DATA_DIR: dir, SECRET: 'another-secret-altogether-0123456789abcdef' });
  t.equal(run.code, 1);
  t.equal(run.stderr, `admin: the personal content sealed under ${id} does not open: SECRET is not the one it was sealed under, or the stored text was altered\n`);
  t.equal(run.stdout, '');
  const again = await admin(['rebuild'], { DATA_DIR: dir, SECRET: 'the-secret-it-was-sealed-under-0123456789' });
  t.equal(again.code, 0, 'under its own SECRET the same store rebuilds');
  const later = await admin(['rebuild'], { DATA_DIR: dir, SECRET: 'another-secret-altogether-0123456789abcdef' });
  t.equal(later.stderr, `admin: could not open the stores: ${new WrongSecret().message}\n`, 'the rebuild kept the check: another SECRET is refused as the stores open');
});

t.test('rebuild stops, exit 1, before an event of a type this version does not know (as a newer version wrote it), never passing over it', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business'], env));
  json(await admin(['set-plan', '--account', opened.account_id, '--plan', 'pro'], env));
  // As a newer version would have written it: a type this one has never heard of.
  const db = new Database(join(env.DATA_DIR, 'feedback.db'));
  t.equal(db.prepare("UPDATE events SET type = 'AccountPlanFrobbed' WHERE type = 'AccountPlanChanged'").run().changes, 1);
  db.close();
  const rebuilt = await admin(['rebuild'], env);
  t.equal(rebuilt.code, 1);
  t.match(rebuilt.stderr, /AccountPlanFrobbed.*its type AccountPlanFrobbed is not one this version of the service knows/);
});
