import t from 'tap';
import { admin, json } from '../support/processes.js';
import { tempDir } from '../support/services.js';

t.test('account and key names with control characters are refused, as every other text is', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  const refused = await admin(['create-account', '--name', 'Acme\u001b[2J', '--plan', 'business'], env);
  t.not(refused.code, 0);
  t.match(refused.stderr, /account name contains a control character/);
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'business'], env));
  const key = await admin(['create-key', '--account', opened.account_id, '--name', 'ring\u0007', '--scopes', 'forms:read'], env);
  t.not(key.code, 0);
  t.match(key.stderr, /key name contains a control character/);
  t.equal(json(await admin(['list-keys', '--account', opened.account_id], env)).length, 1, 'no key was made');
});
