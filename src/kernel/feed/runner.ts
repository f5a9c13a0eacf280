import type { FastifyBaseLogger } from 'fastify';
import { UnreadableEvent, type EventCatalog, type Recorded } from '../event-catalog.js';
import type { EventStore, EventSubscription, StoredEvent } from '../../infra/event-store/port.js';
import { LeaseLost, type CheckpointMove, type Fence, type ReadModelOp, type ReadModelStore, type ShadowReadModels } from '../../infra/read-models/port.js';
import { haltMessage, type EventStoreChangedHalt, type Halt } from './halt.js';
import { nextTurn, Progress } from './progress.js';
import { checkpointKey, type FeedEvent, type Projection } from './projection.js';
import type { Prepared, PreparedFeed, PreparedHalt } from './replay.js';
import { checkStore, rebindStore, type ProcessState } from './store-identity.js';
import type { HaltingFeedProcessor } from './processor.js';

export type { Halt } from './halt.js';

export interface RunnerOptions {
  /** Largest batch of the live feed (small: low latency per write); never above the store's `maxEventsPerWrite`. */
  batchSize?: number;
  /** Largest batch when catching up or rebuilding (large: fewer transactions); never above the store's `maxEventsPerWrite`. */
  catchUpBatchSize?: number;
  /**
   * Called with each batch of the live feed once it is applied (for the
   * projection-lag metric); catch-up and rebuild batches are old events, not lag.
   */
  onApplied?: (batch: StoredEvent[]) => void;
  /** Told what each write of the live read models changed once it is stored ('all': a reset or a rebuild's swap), before any reader is told the write happened. */
  onWritten?: (ops: readonly ReadModelOp[] | 'all') => void;
  /** Wait before resubscribing after the feed failed. */
  retryMs?: number;
  /**
   * How a rebuild reads a long history: prepared on another thread while
   * this one writes (see replay.ts). Used when at least `preparedFrom`
   * events are to be replayed; shorter ones, and what is appended during a
   * rebuild, are read here.
   */
  prepared?: PreparedFeed;
  preparedFrom?: number;
  /**
   * The positions a prepared rebuild reads and writes on this thread while
   * the other one starts (loading the read side is most of a rebuild's
   * fixed cost), the other thread starting after them. 0: none.
   */
  preparedHeadStart?: number;
  /**
   * The states other consumers of the feed keep in the read-model store
   * (the erasure process's), which a rebuild does not make: emptied after a
   * rebuild when they came from another store (see rebindStore).
   */
  processStates?: ProcessState[];
}

/**
 * What the last rebuild cost, split as a line: a fixed cost (opening the
 * shadows, starting the other thread, the swap) and a cost per event at the
 * margin, measured between the first and the last batch written.
 */
export interface RebuildCost {
  events: number;
  seconds: number;
  marginEventsPerSecond: number;
  fixedSeconds: number;
  /** After the rebuild, not in its time: dropping the read models it replaced. */
  droppedSeconds: number;
}

/** When the first and the last batch of a replay were written, and the events written after the first. */
interface ReplayTiming {
  first?: number;
  last?: number;
  between: number;
}

/** Another process moved a checkpoint back (a new projection's reset, a rebuild's swap forced behind): the feed must be read again from there. */
/** A checkpoint moved back under the runner (another rebuild of the same read models): its batch no longer follows it. */
class FeedRewound extends Error {
  constructor() {
    super('the read models were rebuilt under this one (another rebuild ran at the same time): run it again once that one is done');
    this.name = 'FeedRewound';
  }
}

const WRITE_ATTEMPTS = 10;
/** Events to replay from which a rebuild prepares them on another thread: below, starting it costs more than it saves. */
const PREPARED_FROM = 20_000;
/** Swaps refused because live runners were ahead, before a rebuild swaps anyway and lets them replay. */
const SWAP_ATTEMPTS = 20;

/**
 * Feeds the global event feed to every projection. Each projection keeps its
 * own checkpoint, moved compare-and-set in the same transaction as its
 * operations, so an event is applied once even when it is delivered twice or
 * when the server and the admin CLI run projections at the same time.
 */
export class ProjectionRunner implements HaltingFeedProcessor {
  private readonly checkpoints = new Map<string, bigint>();
  private readonly progress = new Progress(() => this.position, () => this.halted?.position);
  private subscription: EventSubscription | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  private initialised = false;
  /** The lease the live loop applies under (the server's), none when catching up on demand. */
  private fence: Fence | undefined;
  private readonly batchSize: number;
  private readonly catchUpBatchSize: number;
  private readonly retryMs: number;
  private readonly onApplied: ((batch: StoredEvent[]) => void) | undefined;
  private readonly onWritten: ((ops: readonly ReadModelOp[] | 'all') => void) | undefined;
  private readonly prepared: PreparedFeed | undefined;
  private readonly preparedFrom: number;
  private readonly preparedHeadStart: number;
  /** True once the runner has applied everything stored when it started. */
  caughtUp = false;
  /**
   * Set when the feed holds an event this code cannot read: every projection
   * stays at the position before it rather than skip it (a read model missing
   * an event is wrong for good, a stopped one only late) until a version of
   * the service that reads it runs. Set too when the read models were built
   * from another event store (see store-identity.ts): nothing is applied
   * until `admin rebuild`.
   */
  halted: Halt | undefined;
  private readonly processStates: ProcessState[];
  /** Set by rebuild(). */
  lastRebuild: RebuildCost | undefined;
  /** A rebuild's shadow runner: when its batches were written (see timed). */
  private batches: ReplayTiming | undefined;

  constructor(
    private readonly events: EventStore,
    private readonly readModels: ReadModelStore,
    private readonly catalog: EventCatalog<FeedEvent>,
    private readonly projections: Projection[],
    private readonly logger: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>,
    options: RunnerOptions = {},
  ) {
    // One batch is one write, and so one transaction: a store whose transactions have limits says how many events it takes at most.
    const limit = readModels.maxEventsPerWrite ?? Number.POSITIVE_INFINITY;
    this.batchSize = Math.min(options.batchSize ?? 500, limit);
    // Not larger: a batch's events, parsed events and documents then outlive the collector's young generation, and copying them out of it cost a rebuild a tenth of its time.
    this.catchUpBatchSize = Math.min(options.catchUpBatchSize ?? options.batchSize ?? 1000, limit);
    this.retryMs = options.retryMs ?? 1000;
    this.onApplied = options.onApplied;
    this.onWritten = options.onWritten;
    this.prepared = options.prepared;
    this.preparedFrom = options.preparedFrom ?? PREPARED_FROM;
    this.preparedHeadStart = options.preparedHeadStart ?? 0;
    this.processStates = options.processStates ?? [];
  }

  async init(): Promise<void> {
    await this.readModels.ensureCollections(this.projections.flatMap((p) => p.collections));
    // A projection without a checkpoint (new, or renamed because its shape changed)
    // replays from zero, into collections emptied of what an older version left.
    // Its checkpoint goes with them: a runner that applied a batch since we looked
    // then fails its next compare-and-set and replays too, instead of skipping
    // the rows emptied under it.
    const stored = await this.readModels.checkpoints();
    const fresh = this.projections.filter((p) => !stored.has(checkpointKey(p)));
    if (fresh.length > 0) {
      await this.readModels.reset(
        fresh.flatMap((p) => p.collections.map((c) => c.name)),
        fresh.map(checkpointKey),
      );
      this.onWritten?.('all');
    }
    this.useCheckpoints(stored);
    const furthest = [...this.checkpoints.values()].reduce((a, b) => (b > a ? b : a), 0n);
    const otherStore = await checkStore(this.events, this.readModels, furthest);
    if (otherStore) {
      this.haltOn({ cause: 'event_store_changed', position: 0n, reason: otherStore });
    } else if (this.halted?.cause === 'event_store_changed') {
      // Started again after a rebuild elsewhere bound the read models to this store.
      this.halted = undefined;
      this.progress.changed();
    }
    this.initialised = true;
  }

  /** The feed position every projection has reached. */
  get position(): bigint {
    let min: bigint | undefined;
    for (const projection of this.projections) {
      const checkpoint = this.checkpoints.get(checkpointKey(projection)) ?? 0n;
      if (min === undefined || checkpoint < min) min = checkpoint;
    }
    return min ?? 0n;
  }

  /** Applies everything stored now, then returns (the admin CLI's way of running projections). */
  async catchUp(): Promise<number> {
    if (!this.initialised) await this.init();
    let applied = 0;
    while (!this.halted) {
      const after = this.position;
      const batch = await this.events.readAll({ after, limit: this.catchUpBatchSize });
      if (batch.length === 0) break;
      try {
        applied += (await this.apply(batch, after)).length;
      } catch (error) {
        if (!(error instanceof FeedRewound)) throw error;
        applied += batch.length;
      }
      await nextTurn();
    }
    if (this.halted) return applied;
    this.caughtUp = true;
    this.progress.changed();
    return applied;
  }

  /**
   * Catches up, then follows the feed live until stop() or, with a fence,
   * until a write finds the lease taken over. Starts again after a stop.
   */
  start(fence?: Fence): void {
    if (this.loop && !this.stopped) return;
    this.stopped = false;
    this.fence = fence;
    this.loop = this.follow();
  }

  private async follow(): Promise<void> {
    try {
      await this.catchUp();
    } catch (error) {
      if (error instanceof LeaseLost) return this.leaseLost(error);
      this.logger.error({ err: error }, 'projection catch-up failed');
    }
    while (!this.stopped && !this.halted) {
      let after = this.position;
      this.subscription = this.events.subscribe({ after, batchSize: this.batchSize });
      try {
        for await (const batch of this.subscription) {
          const applied = await this.apply(batch, after);
          if (applied.length > 0) this.onApplied?.(applied);
          after = batch[batch.length - 1]!.position;
          if (this.stopped || this.halted) break;
        }
      } catch (error) {
        if (this.stopped) break;
        if (error instanceof LeaseLost) return this.leaseLost(error);
        if (!(error instanceof FeedRewound)) {
          this.logger.error({ err: error }, 'projection feed failed; resubscribing');
          await new Promise((resolve) => setTimeout(resolve, this.retryMs));
        }
      } finally {
        await this.subscription.close().catch(() => undefined);
      }
    }
  }

  private leaseLost(error: LeaseLost): void {
    this.logger.warn({ lease: error.lease }, 'another process took the projector lease over: the projections stop here');
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    await this.loop;
    this.progress.settleAll();
  }

  /**
   * Resolves once every projection has reached the position, or after the
   * timeout (the answer then says false): a command's reply waits here so
   * that its caller reads its own writes.
   */
  waitFor(position: bigint, timeoutMs: number): Promise<boolean> {
    return this.progress.wait(position, timeoutMs);
  }

  /**
   * Brings the read models to the position: by waiting for the live loop when
   * it runs (the server), else by catching up here (the admin CLI).
   */
  async reach(position: bigint, timeoutMs: number): Promise<boolean> {
    if (this.loop) return this.waitFor(position, timeoutMs);
    await this.catchUp();
    return this.position >= position;
  }

  /**
   * Replays the whole feed into shadow copies of the read models and swaps
   * them in, answering how many events the shadows took. The live read
   * models answer, and live runners (the server's) keep them current, until
   * the swap; it waits until the shadows have at least everything the live
   * ones have, so no reader sees the read models go back. A live runner then
   * finds its next compare-and-set refused, reads the swapped-in checkpoints
   * and applies only what follows them (or, after a swap forced behind,
   * reads the feed again from there). The rebuilt read models are then bound
   * to this event store (store-identity.ts), which ends a halt on read models
   * of another one.
   */
  async rebuild(): Promise<number> {
    const started = performance.now();
    const batches: ReplayTiming = { between: 0 };
    const swapped: { shadow?: ShadowReadModels } = {};
    let replayed: number;
    let serving = 0;
    let dropped = 0;
    try {
      replayed = await this.rebuildWith(batches, swapped);
    } finally {
      // Timed apart: the rebuilt read models serve already, and what the swap replaced is only dropped here.
      serving = performance.now();
      await swapped.shadow?.close();
      dropped = (performance.now() - serving) / 1000;
    }
    const seconds = (serving - started) / 1000;
    const { first, last, between } = batches;
    // Too short a replay to tell the margin from the rest: all of it counted at the margin.
    const streaming = first !== undefined && last !== undefined && last > first && between > 0 ? { events: between, seconds: (last - first) / 1000 } : { events: replayed, seconds };
    const margin = streaming.seconds > 0 ? streaming.events / streaming.seconds : 0;
    this.lastRebuild = { events: replayed, seconds, marginEventsPerSecond: Math.round(margin), fixedSeconds: Math.max(0, margin > 0 ? seconds - replayed / margin : seconds), droppedSeconds: dropped };
    return replayed;
  }

  private async rebuildWith(batches: ReplayTiming, swapped: { shadow?: ShadowReadModels }): Promise<number> {
    if (!this.initialised) await this.init();
    // Read models of another store are replaced whatever their checkpoints say.
    const otherStore = this.halted?.cause === 'event_store_changed';
    // The replay meets the unreadable event again, if it is still there.
    this.halted = undefined;
    const shadow = await this.readModels.shadow(
      this.projections.flatMap((p) => p.collections),
      this.projections.map(checkpointKey),
    );
    let replayed = 0;
    try {
      const builder = new ProjectionRunner(this.events, shadow, this.catalog, this.projections, this.logger, { catchUpBatchSize: this.catchUpBatchSize });
      builder.batches = batches;
      // The shadows start empty, from no checkpoint, and are bound to this store after the swap: nothing to start up.
      builder.initialised = true;
      // A long history is read on another thread; what follows its end as it was then, here.
      const head = this.prepared ? await this.events.headPosition() : 0n;
      if (this.prepared && head >= BigInt(this.preparedFrom)) replayed += await builder.replayPrepared(this.prepared, head, this.preparedHeadStart);
      // A live runner that applied the events appended since the last catch-up makes the swap wait for one more.
      for (let attempt = 1; ; attempt++) {
        if (!builder.halted) replayed += await builder.catchUp();
        if (builder.halted) {
          // Half a history swapped in would hide what the live read models show: keep them.
          this.halted = builder.halted;
          return replayed;
        }
        const behind = otherStore || attempt >= SWAP_ATTEMPTS;
        if (behind && !otherStore) this.logger.warn({ attempts: attempt }, 'live runners keep ahead of the rebuild; swapping anyway, they replay what it lacks');
        if (await shadow.swap({ behind })) {
          this.onWritten?.('all');
          // Closed by rebuild(), which drops what the swap replaced once the rebuild is timed.
          swapped.shadow = shadow;
          break;
        }
      }
    } finally {
      if (swapped.shadow === undefined) await shadow.close();
    }
    // The events appended after the shadows' last catch-up, which no live runner may be there to apply.
    await this.loadCheckpoints();
    await this.catchUp();
    // Only now: bound before the swap, a crash in between would pass read models of another store as this one's.
    await rebindStore(this.events, this.readModels, this.processStates);
    return replayed;
  }

  /** Marks a batch of a replay written: the first one's time, and the events and time of every one after it. */
  private timed(events: number): void {
    const batches = this.batches;
    if (batches === undefined) return;
    const now = performance.now();
    if (batches.first === undefined) batches.first = now;
    else batches.between += events;
    batches.last = now;
  }

  /**
   * Writes a prepared feed, batch by batch, each moving every projection's
   * checkpoint from where the batch was read after to its last event. Only
   * for a rebuild's shadows, which start together at zero and which no one
   * else writes: a checkpoint elsewhere than the batch expects is an error.
   */
  private async catchUpPrepared(feed: AsyncIterator<Prepared>, next: Promise<IteratorResult<Prepared>>): Promise<number> {
    let applied = 0;
    try {
      for (let result = await next; !result.done; result = await feed.next()) {
        if (!(await this.writePrepared(result.value))) break;
        applied += result.value.kind === 'batch' ? result.value.events : 0;
      }
    } finally {
      await feed.return?.();
    }
    return applied;
  }

  /**
   * Replays the history up to `head` from a prepared feed, the first
   * `headStart` positions read and written here while the other thread
   * starts after them: that thread's start then costs no waiting.
   */
  private async replayPrepared(prepared: PreparedFeed, head: bigint, headStart: number): Promise<number> {
    const until = [this.position + BigInt(headStart), head].reduce((a, b) => (a < b ? a : b));
    const feed = prepared(until)[Symbol.asyncIterator]();
    // Asked for now, so the thread starts now; what it answers is taken below.
    const next = feed.next();
    next.catch(() => undefined);
    let applied = 0;
    // Timed as the rest of the fixed cost: the margin is the prepared feed's rate.
    const timing = this.batches;
    this.batches = undefined;
    try {
      while (!this.halted && this.position < until) {
        const after = this.position;
        const page = (await this.events.readAll({ after, limit: this.catchUpBatchSize })).filter((event) => event.position <= until);
        if (page.length === 0) {
          // No event between here and `until` (the rest erased): the checkpoints go there, where the prepared feed starts.
          const moves = this.projections.map((projection): CheckpointMove => ({ name: checkpointKey(projection), expected: after, next: until }));
          if (!(await this.readModels.write([], moves, this.fence))) throw new Error('the checkpoints moved under a rebuild');
          for (const move of moves) this.checkpoints.set(move.name, move.next);
          break;
        }
        applied += (await this.apply(page, after)).length;
      }
    } catch (error) {
      await feed.return?.();
      throw error;
    } finally {
      this.batches = timing;
    }
    if (this.halted) {
      await feed.return?.();
      return applied;
    }
    return applied + (await this.catchUpPrepared(feed, next));
  }

  /** Writes one prepared batch, answering false at a halt. */
  private async writePrepared(prepared: Prepared): Promise<boolean> {
    if (prepared.kind === 'halt') {
      this.haltAt(prepared);
      return false;
    }
    const moves = this.projections.map((projection): CheckpointMove => ({ name: checkpointKey(projection), expected: this.checkpoints.get(checkpointKey(projection)) ?? 0n, next: prepared.last }));
    if (moves.some((move) => move.expected !== prepared.after)) throw new Error('a prepared batch does not follow the checkpoints it is written over');
    if (!(await this.readModels.write(prepared.ops, moves, this.fence))) throw new Error('the checkpoints moved under a rebuild');
    for (const move of moves) this.checkpoints.set(move.name, move.next);
    this.timed(prepared.events);
    this.progress.changed();
    return true;
  }

  private async loadCheckpoints(): Promise<void> {
    this.useCheckpoints(await this.readModels.checkpoints());
  }

  private useCheckpoints(stored: Map<string, bigint>): void {
    this.checkpoints.clear();
    for (const projection of this.projections) {
      this.checkpoints.set(checkpointKey(projection), stored.get(checkpointKey(projection)) ?? 0n);
    }
  }

  /**
   * Applies the batch up to the first event this code cannot read, which halts
   * the runner, and answers the events applied. `after` is the position the
   * batch was read after: a checkpoint behind it means events are missing here.
   */
  private async apply(batch: StoredEvent[], after: bigint): Promise<StoredEvent[]> {
    const parsed: Array<Recorded<FeedEvent> | undefined> = [];
    for (const event of batch) {
      try {
        parsed.push(this.catalog.parse(event));
      } catch (error) {
        if (!(error instanceof UnreadableEvent)) throw error;
        this.haltAt(error);
        break;
      }
    }
    const readable = batch.slice(0, parsed.length);
    if (readable.length > 0) await this.write(readable, parsed, after);
    this.progress.changed();
    return readable;
  }

  private async write(batch: StoredEvent[], parsed: Array<Recorded<FeedEvent> | undefined>, after: bigint): Promise<void> {
    const last = batch[batch.length - 1]!.position;
    for (let attempt = 1; ; attempt++) {
      const ops: ReadModelOp[] = [];
      const moves: CheckpointMove[] = [];
      for (const projection of this.projections) {
        const checkpoint = this.checkpoints.get(checkpointKey(projection)) ?? 0n;
        if (checkpoint >= last) continue;
        if (checkpoint < after) throw new FeedRewound();
        for (const event of parsed) {
          if (event && event.position > checkpoint) ops.push(...projection.project(event));
        }
        moves.push({ name: checkpointKey(projection), expected: checkpoint, next: last });
      }
      if (moves.length === 0) break;
      if (await this.readModels.write(ops, moves, this.fence)) {
        this.onWritten?.(ops);
        for (const move of moves) this.checkpoints.set(move.name, move.next);
        this.timed(batch.length);
        break;
      }
      // Someone else moved a checkpoint: read them again and apply only what is still missing.
      if (attempt >= WRITE_ATTEMPTS) throw new Error('projection checkpoints keep moving under this runner');
      await this.loadCheckpoints();
    }
  }

  private haltAt(event: Pick<PreparedHalt, 'position' | 'streamId' | 'type' | 'reason'>): void {
    if (this.halted) return;
    this.halted = { cause: 'unreadable_event', position: event.position, streamId: event.streamId, type: event.type, reason: event.reason };
    this.logger.error(
      { position: String(event.position), stream: event.streamId, type: event.type, reason: event.reason },
      'projections halted before an event this version of the service cannot read',
    );
  }

  /** Stops before the whole feed: logged once, however often start-up finds it again. */
  private haltOn(halt: EventStoreChangedHalt): void {
    const known = this.halted?.cause === halt.cause && this.halted.reason === halt.reason;
    this.halted = halt;
    this.progress.changed();
    if (!known) this.logger.error({ cause: halt.cause, reason: halt.reason }, haltMessage(halt));
  }
}
