import t from 'tap';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { openSqliteReadModels } from '../../src/infra/read-models/sqlite.js';
import { PROJECTOR_LEASE } from '../../src/kernel/feed/lease.js';
import { fixture } from '../support/fixtures.js';
import { admin, json } from '../support/processes.js';
import { tempDir } from '../support/services.js';

const NAMES = ['accounts', 'widgets', 'forms', 'polls', 'responses', 'webhooks', 'webhook_replays', 'dashboard_sessions', 'analytics', 'members', 'notifications'];

t.test('status: the head, each projection\'s position, and no halt', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  json(await admin(['create-account', '--name', 'Acme', '--plan', 'business'], env));
  const run = await admin(['status'], env);
  t.equal(run.code, 0);
  t.equal(run.stdout.trim().split('\n').length, 1, 'one line');
  const status = JSON.parse(run.stdout);
  t.same(status.head, '2');
  t.same(status.projections.map((p: { name: string }) => p.name), NAMES);
  t.match(status.projections, NAMES.map((name) => ({ name, version: Number, checkpoint: '2' })));
  t.equal(status.halted, null);
  t.equal(status.projector, null, 'no process holds the projector lease');
  t.equal(status.last_seal, null, 'nothing sealed yet');
});

t.test('status names the last seal: its number, the position it covers to, its hash and when', async (t) => {
  const env = { DATA_DIR: tempDir(t) };
  json(await admin(['create-account', '--name', 'Acme', '--plan', 'business'], env));
  json(await admin(['seal'], env));
  const first = json(await admin(['status'], env)).last_seal;
  t.match(first, { seal: 0, through: '2', count: 2, hash: /^[0-9a-f]{64}$/, sealed_at: String });
  json(await admin(['create-account', '--name', 'Beta', '--plan', 'free'], env));
  json(await admin(['seal'], env));
  const second = json(await admin(['status'], env)).last_seal;
  t.match(second, { seal: 1, count: 3 }, 'the newest one, covering what came after the first: the first seal, and the new account and its key');
  t.ok(BigInt(second.through) > 2n);
  t.not(second.hash, first.hash);
});

t.test('status names the holder of the projector lease and until when', async (t) => {
  const dir = tempDir(t);
  // A store that holds no event yet: its event store made, a lease claimed in its read models.
  await openSqliteEventStore(dir).close();
  const readModels = openSqliteReadModels(dir);
  t.teardown(() => readModels.close());
  await readModels.claimLease({ name: PROJECTOR_LEASE, holder: 'host-a/pid:[1]/42/cafe', now: new Date('2026-11-23T10:00:00.000Z'), ttlMs: 5000 });
  const status = json(await admin(['status'], { DATA_DIR: dir }));
  t.same(status.projector, { holder: 'host-a/pid:[1]/42/cafe', expires_at: '2026-11-23T10:00:05.000Z' });
});

t.test('status shows where the projections halted and why; rebuild fails on it', async (t) => {
  const dir = tempDir(t);
  const env = { DATA_DIR: dir };
  json(await admin(['create-account', '--name', 'Acme', '--plan', 'business'], env));
  const store = openSqliteEventStore(dir);
  const { data, metadata } = fixture('PollCreated');
  const { question: _missing, ...withoutQuestion } = data;
  await store.append('poll-pol_bad', [{ type: 'PollCreated', data: withoutQuestion, metadata }], 'no_stream');
  await store.close();
  json(await admin(['create-account', '--name', 'Later', '--plan', 'pro'], env));

  const run = await admin(['status'], env);
  t.equal(run.code, 0, 'a halt is a state to report, not a failure of the command');
  t.match(JSON.parse(run.stdout), {
    head: '5',
    projections: NAMES.map((name) => ({ name, checkpoint: '2' })),
    halted: { position: '3', stream: 'poll-pol_bad', type: 'PollCreated', reason: /question/ },
  });
  t.match(run.stderr, /projections halted/, 'and logs it');

  const rebuild = await admin(['rebuild'], env);
  t.equal(rebuild.code, 1);
  t.match(rebuild.stderr, /admin: projections halted before event 3 \(PollCreated of poll-pol_bad\).*question/);
  t.equal(rebuild.stdout, '');
});
