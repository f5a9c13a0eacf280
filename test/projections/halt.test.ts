import { Writable } from 'node:stream';
import { pino } from 'pino';
import t from 'tap';
import { ACCOUNTS } from '../../projections/accounts.js';
import { checkpointKey } from '../../src/kernel/feed/projection.js';
import { projections } from '../../projections/index.js';
import { ProjectionRunner } from '../../src/kernel/feed/runner.js';
import { openAccount } from '../../src/accounts/commands.js';
import { catalog } from '../../src/domain-events.js';
import type { Services } from '../../src/services.js';
import { fixture } from '../support/fixtures.js';
import { testServices } from '../support/services.js';

/** A logger that keeps its lines for the test to read. */
function recorder() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(JSON.parse(String(chunk))), done()) });
  return { logger: pino({ level: 'info' }, sink), lines };
}

/** Accounts before, the event no version of this code can read, accounts after: where it sits. */
async function historyWithUnreadable(services: Services, unreadable: { type: string; data: Record<string, unknown>; metadata: Record<string, unknown> }) {
  const before = [await openAccount(services, { name: 'Before 1', plan: 'pro', scopes: ['forms:read'] }), await openAccount(services, { name: 'Before 2', plan: 'pro', scopes: ['forms:read'] })];
  const { position } = await services.events.append('widget-wgt_unreadable', [unreadable], 'any');
  const after = [await openAccount(services, { name: 'After', plan: 'pro', scopes: ['forms:read'] })];
  return { before, after, position };
}

const { data, metadata } = fixture('WidgetCreated');
const FUTURE = { type: 'WidgetCreated', data, metadata: { ...metadata, schema_version: 99 } };
const { title: _missing, ...withoutTitle } = data;
const BROKEN = { type: 'WidgetCreated', data: withoutTitle, metadata };

for (const [name, unreadable, reason] of [
  ['a version newer than the code', FUTURE, /version 99/],
  ['data missing a required field', BROKEN, /title/],
] as const) {
  t.test(`${name}: the projections stop before it, whatever the batch size`, async (t) => {
    const services = await testServices(t);
    const { before, after, position } = await historyWithUnreadable(services, unreadable);
    for (const batchSize of [1, 2, 3, 500]) {
      await services.readModels.reset(projections.flatMap((p) => p.collections.map((c) => c.name)), projections.map(checkpointKey));
      const { logger, lines } = recorder();
      const runner = new ProjectionRunner(services.events, services.readModels, catalog, projections, logger, { batchSize });
      await runner.init();
      await runner.catchUp();
      await runner.catchUp();
      t.match(runner.halted, { position, streamId: 'widget-wgt_unreadable', type: 'WidgetCreated', reason }, `batches of ${batchSize}: halted at it`);
      t.equal(runner.position, position - 1n, 'at the position before it');
      const checkpoints = await services.readModels.checkpoints();
      t.same(projections.map((p) => checkpoints.get(checkpointKey(p))), projections.map(() => position - 1n), 'no checkpoint passes it');
      for (const account of before) t.ok(await services.readModels.get(ACCOUNTS, account.account_id), 'what came before is projected');
      for (const account of after) t.equal(await services.readModels.get(ACCOUNTS, account.account_id), null, 'nothing after it is');
      const logged = lines.filter((line) => line.level === 50);
      t.equal(logged.length, 1, 'logged once, at error level');
      t.match(logged[0], { position: String(position), stream: 'widget-wgt_unreadable', type: 'WidgetCreated', reason });
    }
  });
}

t.test('a live runner meeting it in the feed stops there, answers waiters at once, and still stops', async (t) => {
  const services = await testServices(t);
  services.projections.start();
  const { before, after, position } = await historyWithUnreadable(services, FUTURE);
  const head = await services.events.headPosition();
  // No timeout to fall back on: only the halt can answer the first wait.
  const never = 2 ** 31 - 1;
  t.equal(await services.projections.waitFor(head, never), false, 'a wait past it is answered false');
  t.equal(await services.projections.waitFor(position - 1n, never), true, 'a wait before it is met');
  t.match(services.projections.halted, { position, type: 'WidgetCreated' });
  t.equal(services.projections.position, position - 1n);
  t.ok(await services.readModels.get(ACCOUNTS, before[1]!.account_id));
  t.equal(await services.readModels.get(ACCOUNTS, after[0]!.account_id), null);
  await openAccount(services, { name: 'Later still', plan: 'pro', scopes: ['forms:read'] });
  t.equal(services.projections.position, position - 1n, 'later writes do not move it');
  await services.projections.stop();
  t.pass('stop() returns');
});
