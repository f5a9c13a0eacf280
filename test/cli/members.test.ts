import t from 'tap';
import { admin, json } from '../support/processes.js';
import { tempDir } from '../support/services.js';

t.test('create-account --owner-email, add-member, list-members', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  const opened = json(await admin(['create-account', '--name', 'Acme', '--plan', 'pro', '--owner-email', 'Ada@Example.com'], env));
  t.match(opened, { plan: 'pro', owner_email: 'ada@example.com', owner_member_id: /^mem_/ });
  const added = json(await admin(['add-member', '--account', opened.account_id, '--email', 'bob@example.com', '--role', 'viewer'], env));
  t.match(added, { account_id: opened.account_id, email: 'bob@example.com', role: 'viewer', member_id: /^mem_/ });
  const listed = json(await admin(['list-members', '--account', opened.account_id], env));
  t.same(listed.map((m: { email: string; role: string }) => [m.email, m.role]), [['ada@example.com', 'owner'], ['bob@example.com', 'viewer']]);

  const twice = await admin(['add-member', '--account', opened.account_id, '--email', 'BOB@example.com', '--role', 'admin'], env);
  t.equal(twice.code, 2);
  t.match(twice.stderr, /bob@example.com is a member of this account already/);
  const badRole = await admin(['add-member', '--account', opened.account_id, '--email', 'c@example.com', '--role', 'boss'], env);
  t.equal(badRole.code, 2);
  t.match(badRole.stderr, /--role must be owner, admin, editor or viewer/);
  const badEmail = await admin(['create-account', '--name', 'X', '--plan', 'free', '--owner-email', 'nope'], env);
  t.equal(badEmail.code, 2);
  t.match(badEmail.stderr, /--owner-email must be an email address/);
  const unknown = await admin(['list-members', '--account', 'acc_01M82YMAXMQAPXXC00S78T8AVK'], env);
  t.equal(unknown.code, 2);
  t.match(unknown.stderr, /no such account/);
});
