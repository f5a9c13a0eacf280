import { readFileSync } from 'node:fs';
import t from 'tap';
import { catalog } from '../../src/domain-events.js';
import { ErasureProcess } from '../../src/erasure/process.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { openSqliteReadModels } from '../../src/infra/read-models/sqlite.js';
import type { CheckpointMove, ReadModelStore } from '../../src/infra/read-models/port.js';
import { WebhookDispatcher } from '../../src/webhooks/dispatcher.js';
import { silent, tempDir } from '../support/services.js';
import { systemClock } from '../../src/infra/ids.js';

/** A store whose writes take at most `most` events, as MongoDB's transactions do, and that records each checkpoint move. */
function limited(store: ReadModelStore, most: number, moves: CheckpointMove[]): ReadModelStore {
  return new Proxy(store, {
    get(target, property) {
      if (property === 'maxEventsPerWrite') return most;
      if (property === 'write') {
        return (ops: Parameters<ReadModelStore['write']>[0], checkpoints: CheckpointMove[] = [], fence?: Parameters<ReadModelStore['write']>[2]) => {
          moves.push(...checkpoints);
          return target.write(ops, checkpoints, fence);
        };
      }
      const value = Reflect.get(target, property, target) as unknown;
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

t.test('the erasure process and the webhook dispatcher catch up in batches no larger than the store\'s write takes', async (t) => {
  const dir = tempDir(t);
  const events = openSqliteEventStore(dir, silent);
  t.teardown(() => events.close());
  const store = openSqliteReadModels(dir, silent);
  t.teardown(() => store.close());
  // A feed of twelve events any process reads past: accounts opened.
  const fixture = JSON.parse(readFileSync(new URL('../fixtures/events/AccountOpened.v1.json', import.meta.url), 'utf8')) as { type: string; data: { account_id: string }; metadata: Record<string, unknown> };
  for (let i = 0; i < 12; i++) {
    const account_id = `${fixture.data.account_id.slice(0, -2)}${String(i).padStart(2, '0')}`;
    await events.append(`account-${account_id}`, [{ type: fixture.type, data: { ...fixture.data, account_id }, metadata: fixture.metadata as never }], 'no_stream');
  }
  const head = await events.headPosition();
  const moves: CheckpointMove[] = [];
  const erasure = new ErasureProcess(events, limited(store, 5, moves), catalog, systemClock, silent);
  await erasure.init();
  await erasure.catchUp();
  const dispatcher = new WebhookDispatcher(events, limited(store, 5, moves), catalog, undefined as never, Buffer.alloc(32), systemClock, silent);
  await dispatcher.init();
  await dispatcher.catchUp();
  for (const name of new Set(moves.map((move) => move.name))) {
    const mine = moves.filter((move) => move.name === name);
    t.equal(mine.at(-1)?.next, head, `${name}: caught up to the head`);
    t.ok(mine.length >= 3, `${name}: in several writes (${mine.length})`);
    for (const move of mine) t.ok(move.next - move.expected <= 5n, `${name}: ${move.expected}..${move.next} spans five events at most`);
  }
  t.equal(new Set(moves.map((move) => move.name)).size, 2, 'both moved their checkpoint');
});
