/**
 * An account opened with its owner is one event in one append: the owner
 * is recorded in `AccountOpened` (version 2), which the members decider
 * and the members read model take as the owner's joining. A store that
 * fails after the first append therefore leaves no account without its
 * owner.
 */
import t from 'tap';
import { account } from '../../src/accounts/account.js';
import type { AccountEvent } from '../../src/accounts/events.js';
import { listMembers, openAccountWithOwner, changeRole } from '../../src/members/commands.js';
import { members } from '../../src/members/members.js';
import { ACCOUNTS } from '../../projections/accounts.js';
import { aggregateOf } from '../support/decider.js';
import { testServices } from '../support/services.js';

const at = '2026-12-01T10:00:00.000Z';
const key = { key_id: 'key_1', name: 'default', key_hash: 'a'.repeat(64), prefix: 'svc_abcdefgh', scopes: ['forms:read' as const] };
const owner = { member_id: 'mem_1', email: 'owner@example.com', via: 'sign_up' as const, link_id: 'sgn_1', by: 'public' };
const opened: AccountEvent = { type: 'AccountOpened', data: { account_id: 'acc_1', name: 'Acme', plan: 'free', opened_at: at, owner } };

t.test('opening an account with its owner decides one opening that carries the owner, and the first key', async (t) => {
  aggregateOf(t, account)
    .given([])
    .when({ type: 'OpenAccount', account_id: 'acc_1', name: 'Acme', plan: 'free', key, owner, at })
    .then([opened, { type: 'ApiKeyIssued', data: { account_id: 'acc_1', ...key, issued_at: at } }]);
});

t.test("the members decider starts from the owner the opening recorded", async (t) => {
  const spec = aggregateOf(t, members);
  const actor = { by: 'mem_1', role: 'owner' as const };
  spec.given([opened]).when({ type: 'Leave', member_id: 'mem_1', at }).thenThrows('last_owner', 'the owner is the last one');
  spec.given([opened]).when({ type: 'ChangeRole', member_id: 'mem_1', role: 'viewer', actor, at }).thenThrows('last_owner');
  spec.given([opened]).when({ type: 'Invite', account_id: 'acc_1', invitation_id: 'inv_1', email: 'owner@example.com', role: 'viewer', actor, expires_at: at, at }).thenThrows('member_exists', "the owner's address is a member's");
  spec
    .given([{ ...opened, data: { ...opened.data, owner: undefined } } as AccountEvent])
    .when({ type: 'Leave', member_id: 'mem_1', at })
    .thenThrows('member_not_found', 'an account opened without an owner has none');
});

t.test('a store that refuses every append after the first still opens the account with its owner', async (t) => {
  const services = await testServices(t);
  const store = services.commands.events;
  const append = store.append.bind(store);
  let appends = 0;
  store.append = (...args) => (++appends === 1 ? append(...args) : Promise.reject(new Error('the disk is full')));
  const made = await openAccountWithOwner(services, { name: 'Acme', plan: 'free', ownerEmail: 'owner@example.com', via: 'account_opened' });
  t.equal(appends, 1, 'one append');
  store.append = append;
  t.ok(await services.readModels.get(ACCOUNTS, made.account_id), 'the account is open');
  t.match(await listMembers(services, made.account_id), [{ member_id: made.owner.member_id, email: 'owner@example.com', role: 'owner' }], 'with its owner');
  t.equal(await store.streamState(`members-${made.account_id}`), 'no_stream', 'recorded in the opening, not in a second stream');
  const demoted = changeRole(services, { accountId: made.account_id, memberId: made.owner.member_id, role: 'viewer' }, { by: 'cli', role: 'owner' });
  await t.rejects(demoted, { code: 'last_owner' }, 'the decider knows the owner');
});
