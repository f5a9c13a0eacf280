import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { loadOrCreateSecret } from '../../src/infra/secret.js';
import { admin } from '../support/processes.js';
import { tempDir } from '../support/services.js';

t.test('the secret a data directory keeps: made once, whole, and never taken shorter than SECRET may be', async (t) => {
  const dir = tempDir(t);
  const made = loadOrCreateSecret(dir);
  t.ok(made.length >= 32, 'made long enough');
  t.equal(loadOrCreateSecret(dir), made, 'kept');
  t.same(readdirSync(dir), ['secret'], 'and nothing beside it');
  t.equal(readFileSync(join(dir, 'secret'), 'utf8'), made);
  for (const [name, text] of [['empty', ''], ['short', 'abc'], ['blank', '   \n']] as const) {
    const other = tempDir(t, name);
    writeFileSync(join(other, 'secret'), text);
    t.throws(() => loadOrCreateSecret(other), { message: /holds a secret of \d+ characters, fewer than the 32 SECRET must have/ }, `${name}: refused`);
    const run = await admin(['create-account', '--name', 'X', '--plan', 'free'], { DATA_DIR: other });
    t.equal(run.code, 1, `${name}: the CLI refuses`);
    t.match(run.stderr, /^admin: .*fewer than the 32 SECRET must have/, `${name}: in one line`);
  }
});

t.test('a command that only reads, run without the secret, teaches the key store no secret of its own', async (t) => {
  const dir = tempDir(t);
  const SECRET = 'the-right-secret-the-right-secret-0123';
  t.equal((await admin(['create-account', '--name', 'X', '--plan', 'free'], { DATA_DIR: dir, SECRET })).code, 0);
  // The events kept without their key store (a backup of feedback.db alone), and no secret file.
  for (const name of readdirSync(dir)) if (name.startsWith('keys.db')) rmSync(join(dir, name));
  const read = await admin(['events'], { DATA_DIR: dir });
  t.equal(read.code, 0, read.stderr);
  t.notOk(existsSync(join(dir, 'secret')), 'no secret file made');
  const status = await admin(['status'], { DATA_DIR: dir, SECRET });
  t.equal(status.code, 0, `the right SECRET is still taken: ${status.stderr}`);
});
