/**
 * The projector lease as its holders live it: one process of several applies,
 * a clean stop hands over at once, a lease run out or taken over stops the
 * old holder, a holder that exited on this host is replaced without waiting.
 * The work is a stand-in that records when it runs; the lease is the SQLite
 * adapter's, and time is a clock the test moves.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import t, { type Test } from 'tap';
import type { Halt } from '../../src/kernel/feed/runner.js';
import { LeaseLost, type Fence, type ReadModelStore } from '../../src/infra/read-models/port.js';
import { openSqliteReadModels } from '../../src/infra/read-models/sqlite.js';
import { exited, holderId, PROJECTOR_LEASE, Projector } from '../../src/kernel/feed/lease.js';
import { manualClock } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { silent, tempDir } from '../support/services.js';

const TIMING = { ttlMs: 5000, everyMs: 10 };

/** What the holder runs, as a record of it: running under which fence, and how often it was prepared. */
function work() {
  const state = { running: undefined as Fence | undefined, inits: 0, halted: undefined as Halt | undefined };
  const part = {
    start: (fence?: Fence) => void (state.running = fence),
    stop: async () => void (state.running = undefined),
    get halted() {
      return state.halted;
    },
  };
  return { state, runner: { ...part, init: async () => void state.inits++, get halted() { return state.halted; } }, erasure: part };
}

function store(t: Test, dir: string): ReadModelStore {
  const opened = openSqliteReadModels(dir);
  t.teardown(() => opened.close());
  return opened;
}

function projector(t: Test, readModels: ReadModelStore, options: ConstructorParameters<typeof Projector>[4] = {}) {
  const w = work();
  const p = new Projector(readModels, w.runner, w.erasure, silent, { timing: TIMING, ...options });
  t.teardown(() => p.stop());
  return { projector: p, work: w.state };
}

t.test('of two projectors one holds the lease and works; a clean stop hands it to the other at its next claim', async (t) => {
  const dir = tempDir(t);
  const reader = store(t, dir);
  const first = projector(t, store(t, dir));
  const second = projector(t, store(t, dir));
  await first.projector.start();
  await second.projector.start();
  t.equal(first.projector.holding, true, 'the first to claim holds it');
  t.same(first.work, { running: { name: PROJECTOR_LEASE, holder: first.projector.holder, consumer: 'erasure' }, inits: 1, halted: undefined }, 'prepared, then running under its fence');
  t.equal(second.projector.holding, false, 'the other stands by');
  t.equal(second.work.running, undefined, 'and runs nothing');
  t.ok(await eventually(async () => (await reader.lease(PROJECTOR_LEASE))!.expiresAt.getTime() > Date.now() + TIMING.ttlMs - 1000, { everyMs: 5 }), 'the holder renews');
  t.equal(second.projector.holding, false, 'the standby still stands by while it does');

  await first.projector.stop();
  t.equal(first.work.running, undefined, 'a stop stops the work');
  t.equal(await reader.lease(PROJECTOR_LEASE), null, 'and releases the lease');
  t.ok(await eventually(() => second.projector.holding, { everyMs: 5 }), 'the standby takes it over at its next claim');
  t.same(second.work.running, { name: PROJECTOR_LEASE, holder: second.projector.holder, consumer: 'erasure' }, 'its fence: the last started names itself');
});

t.test('the holder renews the lease while it prepares the projections, however long that takes', async (t) => {
  const dir = tempDir(t);
  const clock = manualClock();
  const reader = store(t, dir);
  const w = work();
  let prepared: (() => void) | undefined;
  const slow = { ...w.runner, init: () => new Promise<void>((resolve) => (prepared = resolve)), halted: undefined };
  const holder = new Projector(store(t, dir), slow, w.erasure, silent, { timing: TIMING, clock });
  t.teardown(() => holder.stop());
  const started = holder.start();
  t.ok(await eventually(() => prepared !== undefined, { everyMs: 5 }), 'the claim is won and the preparing under way');
  clock.advance(TIMING.ttlMs - 1);
  t.ok(await eventually(async () => (await reader.lease(PROJECTOR_LEASE))!.expiresAt.getTime() === clock().getTime() + TIMING.ttlMs, { everyMs: 5 }), 'renewed meanwhile, so it does not run out under a slow start');
  t.equal(holder.holding, false, 'not holding before the work runs');
  t.equal(w.state.running, undefined);
  prepared!();
  await started;
  t.equal(holder.holding, true);
  t.same(w.state.running, { name: PROJECTOR_LEASE, holder: holder.holder, consumer: 'erasure' });
});

t.test('a lease that runs out goes to a standby, by the clock the projectors are given', async (t) => {
  const dir = tempDir(t);
  const clock = manualClock();
  const readModels = store(t, dir);
  // A holder elsewhere that stopped renewing: only its expiry frees the lease.
  t.ok(await readModels.claimLease({ name: PROJECTOR_LEASE, holder: 'other-host/-/1/frozen', now: clock(), ttlMs: TIMING.ttlMs }));
  const standby = projector(t, readModels, { clock });
  await standby.projector.start();
  t.equal(standby.projector.holding, false);
  clock.advance(TIMING.ttlMs - 1);
  await new Promise((resolve) => setTimeout(resolve, 5 * TIMING.everyMs));
  t.equal(standby.projector.holding, false, 'not before the expiry, however many claims');
  clock.advance(1);
  t.ok(await eventually(() => standby.projector.holding, { everyMs: 5 }), 'at the expiry');
});

t.test('a holder whose lease another took over stops working at its next claim, and stands by', async (t) => {
  const dir = tempDir(t);
  const readModels = store(t, dir);
  const held = projector(t, readModels);
  await held.projector.start();
  t.ok(held.projector.holding);
  // What a standby does when it takes the lease of a holder it found gone.
  t.ok(await store(t, dir).claimLease({ name: PROJECTOR_LEASE, holder: 'intruder', now: new Date(), ttlMs: 60_000, replacing: held.projector.holder }));
  await t.rejects(readModels.write([], [], { name: PROJECTOR_LEASE, holder: held.projector.holder }), LeaseLost, "the old holder's writes are refused at once");
  t.ok(await eventually(() => !held.projector.holding, { everyMs: 5 }), 'it learns it at its next claim');
  t.equal(held.work.running, undefined, 'and stops working');
  await store(t, dir).releaseLease(PROJECTOR_LEASE, 'intruder');
  t.ok(await eventually(() => held.projector.holding, { everyMs: 5 }), 'it takes the lease again once free');
  t.equal(held.work.inits, 2, 'preparing the projections again under it');
});

t.test('a holder that cannot reach the store keeps working until its lease runs out by its own clock', async (t) => {
  const dir = tempDir(t);
  const clock = manualClock();
  const readModels = store(t, dir);
  let reachable = true;
  const flaky = new Proxy(readModels, {
    get(target, property, receiver) {
      const value = Reflect.get(target, property, receiver);
      if (property !== 'claimLease') return value;
      return async (...args: Parameters<ReadModelStore['claimLease']>) => {
        if (!reachable) throw new Error('connection refused');
        return target.claimLease(...args);
      };
    },
  });
  const held = projector(t, flaky, { clock });
  await held.projector.start();
  t.ok(held.projector.holding);
  reachable = false;
  clock.advance(TIMING.ttlMs - 1);
  await new Promise((resolve) => setTimeout(resolve, 5 * TIMING.everyMs));
  t.equal(held.projector.holding, true, 'within the lease of its last claim it goes on');
  clock.advance(1);
  t.ok(await eventually(() => !held.projector.holding, { everyMs: 5 }), 'past it, it stops: another may hold the lease by now');
  t.equal(held.work.running, undefined);
  reachable = true;
  t.ok(await eventually(() => held.projector.holding, { everyMs: 5 }), 'and claims again once the store answers');
});

t.test('a projector halted before an event it cannot read gives the lease up and claims it no more', async (t) => {
  const dir = tempDir(t);
  const halted = projector(t, store(t, dir));
  const newer = projector(t, store(t, dir));
  await halted.projector.start();
  await newer.projector.start();
  t.ok(halted.projector.holding);
  halted.work.halted = { cause: 'unreadable_event', position: 7n, streamId: 'widget-w', type: 'WidgetUpdated', reason: 'version 9 is newer than this service knows' };
  t.ok(await eventually(() => newer.projector.holding, { everyMs: 5 }), 'a projector that reads it takes over');
  t.equal(halted.projector.holding, false);
  await newer.projector.stop();
  await new Promise((resolve) => setTimeout(resolve, 5 * TIMING.everyMs));
  t.equal(halted.projector.holding, false, 'the halted one does not take it back');
});

/** The PID of a process that has just exited. */
async function exitedPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await once(child, 'exit');
  return child.pid!;
}

t.test('a holder that exited on this host is replaced at once; one that runs, or ran elsewhere, is waited for', async (t) => {
  const namespace = readlinkSync('/proc/self/ns/pid');
  const gone = `${hostname()}/${namespace}/${await exitedPid()}/ffffffff`;
  t.equal(exited(gone), true, 'a process of this host that exited');
  t.equal(exited(`${hostname()}/${namespace}/${process.ppid}/ffffffff`), false, 'one that runs');
  t.equal(exited(`${hostname()}/${namespace}/${process.pid}/ffffffff`), false, 'this one');
  t.equal(exited(`elsewhere/${namespace}/${await exitedPid()}/ffffffff`), false, 'a process of another host');
  t.equal(exited(`${hostname()}/pid:[1]/${await exitedPid()}/ffffffff`), false, 'of another PID namespace (another container)');
  t.equal(exited(`${hostname()}/-/${await exitedPid()}/ffffffff`), false, 'of a system without PID namespaces to compare');
  t.equal(exited('not a holder id'), false);
  t.match(holderId(), new RegExp(`^${hostname()}/pid:\\[\\d+\\]/${process.pid}/[0-9a-f]{8}$`), 'a holder names its host, PID namespace and PID');

  const dir = tempDir(t);
  const readModels = store(t, dir);
  t.ok(await readModels.claimLease({ name: PROJECTOR_LEASE, holder: gone, now: new Date(), ttlMs: 60_000 }));
  const next = projector(t, readModels);
  await next.projector.start();
  t.equal(next.projector.holding, true, 'the lease of the exited holder is taken at the first claim, a minute before its expiry');

  const other = tempDir(t);
  const running = store(t, other);
  t.ok(await running.claimLease({ name: PROJECTOR_LEASE, holder: `${hostname()}/${namespace}/${process.ppid}/ffffffff`, now: new Date(), ttlMs: 60_000 }));
  const waiting = projector(t, running);
  await waiting.projector.start();
  t.equal(waiting.projector.holding, false, 'the lease of a running holder is not');
});
