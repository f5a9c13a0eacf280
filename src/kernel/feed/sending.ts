import type { FastifyBaseLogger } from 'fastify';
import type { EventStore, EventSubscription, StoredEvent } from '../../infra/event-store/port.js';
import { FEED_REST_MS, lingering } from '../../infra/event-store/linger.js';
import type { Clock } from '../../infra/ids.js';
import { LeaseLost, type CollectionSpec, type Fence, type ReadModelOp, type ReadModelStore } from '../../infra/read-models/port.js';
import { UnreadableEvent, type EventCatalog, type Recorded } from '../event-catalog.js';
import { catchUpFeed, CheckpointMoved, followFeed, type FeedConsumer } from './follow.js';
import type { Halt } from './halt.js';
import type { FeedProcessor } from './processor.js';
import { checkpointKey } from './projection.js';
import { checkStore } from './store-identity.js';

/** The longest wait a timer takes: Node fires a longer one at once. */
const LONGEST_TIMER_MS = 2 ** 31 - 1;

export interface SendingProcessorSetup<E extends { type: string; data: unknown }> {
  /** Names it in the log lines ("the mail outbox"). */
  label: string;
  /** Its state: the collections it keeps, and the name its checkpoint is stored under. */
  state: { name: string; version: number; collections: CollectionSpec[] };
  events: EventStore;
  readModels: ReadModelStore;
  catalog: EventCatalog<E>;
  clock: Clock;
  logger: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>;
  /** Largest batch of the live feed (500); never above what the store takes in one write. */
  batchSize?: number | undefined;
  /** How long it waits before trying again after a failure, reading the feed or sending (1 s). */
  retryMs?: number | undefined;
  /** How long the live feed rests after a batch that was not full (see lingering). */
  restMs?: number | undefined;
  /** Halt at init when its state is of another event store (its queue would name events that are not there). */
  checksStore?: boolean;
}

/**
 * The lifecycle of a process that turns the event feed into something sent
 * (mail, notifications, webhooks), beside the projections under the
 * projector lease. It follows the feed from its own checkpoint, and records
 * what to send in the write that moves the checkpoint (`commit`), so a
 * crash loses nothing and records nothing twice. Then it sends what is due
 * by queue (`kick(queue)` runs `sendDue(queue)`, one run per queue at a
 * time; a queue can `wake` itself later), and a failed run is tried again
 * after `retryMs`. A subclass says how a batch becomes its queues
 * (`handle`), what it keeps in memory (`load`) and how a queue is sent
 * (`sendDue`); starting, stopping, catching up, halting before an
 * unreadable event and the timers are here once.
 */
export abstract class SendingProcessor<E extends { type: string; data: unknown }> implements FeedProcessor {
  protected checkpoint = 0n;
  /** True until start(), and from stop() on: nothing is kicked or woken. */
  protected stopped = true;
  /** The lease its writes carry while the server follows the feed (none when catching up on demand). */
  protected fence: Fence | undefined;
  /** Why it stopped before an event, skipping nothing, if it did. */
  halted: Halt | undefined;
  protected readonly events: EventStore;
  protected readonly readModels: ReadModelStore;
  protected readonly catalog: EventCatalog<E>;
  protected readonly clock: Clock;
  protected readonly logger: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>;
  protected readonly retryMs: number;
  private readonly setup: SendingProcessorSetup<E>;
  private readonly checkpointName: string;
  private readonly consumer: FeedConsumer;
  private subscription: EventSubscription | undefined;
  private loop: Promise<void> | undefined;
  /** Queues being sent, those to look at again once they are, their timers, and the runs under way. */
  private readonly busy = new Set<string>();
  private readonly again = new Set<string>();
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly sending = new Set<Promise<void>>();

  constructor(setup: SendingProcessorSetup<E>) {
    this.setup = setup;
    this.events = setup.events;
    this.readModels = setup.readModels;
    this.catalog = setup.catalog;
    this.clock = setup.clock;
    this.logger = setup.logger;
    this.retryMs = setup.retryMs ?? 1000;
    this.checkpointName = checkpointKey(setup.state);
    const maxEventsPerWrite = setup.readModels.maxEventsPerWrite;
    this.consumer = {
      label: setup.label,
      // Nobody's reply waits for these processes: appends close together are handled, and written, as one batch.
      events: lingering(setup.events, setup.restMs ?? FEED_REST_MS),
      logger: setup.logger,
      // One batch is one write: a store whose transactions have limits says how many events it takes at once.
      batchSize: Math.min(setup.batchSize ?? 500, maxEventsPerWrite ?? Number.POSITIVE_INFINITY),
      maxEventsPerWrite,
      retryMs: this.retryMs,
      position: () => this.checkpoint,
      halted: () => this.halted !== undefined,
      stopping: () => this.stopped,
      reload: () => this.reload(),
      // What a stop or a crash left to send goes out first.
      loaded: () => this.resume(),
      handle: (batch) => this.handle(batch),
    };
  }

  async init(): Promise<void> {
    await this.readModels.ensureCollections(this.setup.state.collections);
    await this.reload();
    if (!this.setup.checksStore) return;
    const otherStore = await checkStore(this.events, this.readModels, this.checkpoint);
    if (otherStore) {
      this.halted = { cause: 'event_store_changed', position: 0n, reason: otherStore };
      this.logger.error({ reason: otherStore }, `${this.setup.label} halted: its state is of another event store`);
    }
  }

  get position(): bigint {
    return this.checkpoint;
  }

  start(fence?: Fence): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.fence = fence;
    this.loop = followFeed(this.consumer, (subscription) => (this.subscription = subscription));
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await this.subscription?.close();
    await this.loop;
    await Promise.allSettled([...this.sending]);
  }

  /** Handles what the feed holds now (tests and the admin CLI; a server follows the feed instead). */
  async catchUp(): Promise<void> {
    await catchUpFeed(this.consumer);
  }

  /** Applies one batch of the feed: its effects go with the checkpoint in `commit`. */
  protected abstract handle(batch: StoredEvent[]): Promise<void>;

  /** Sends what is due in one queue; runs one at a time per queue. */
  protected abstract sendDue(queue: string): Promise<void>;

  /** Reads what it keeps in memory afresh, as stored (after the checkpoint). */
  protected async load(): Promise<void> {}

  /** After the first load of a follow: kicks what waited (the one queue, by default). */
  protected resume(): void {
    this.kick();
  }

  /** A stop() was called on the live follow: a send under way goes no further than the item it is at. */
  protected get stopping(): boolean {
    return this.stopped && this.loop !== undefined;
  }

  /**
   * The batch's events after the checkpoint, in order, each parsed (undefined:
   * an event the processor does not read). It ends before an event this
   * version cannot read, and halts there, skipping nothing.
   */
  protected *readable(batch: StoredEvent[]): Generator<{ stored: StoredEvent; event: Recorded<E> | undefined }> {
    for (const stored of batch) {
      if (stored.position <= this.checkpoint) continue;
      let event: Recorded<E> | undefined;
      try {
        event = this.catalog.parse(stored);
      } catch (error) {
        if (!(error instanceof UnreadableEvent)) throw error;
        this.halted = { cause: 'unreadable_event', position: error.position, streamId: error.streamId, type: error.type, reason: error.reason };
        this.logger.error({ position: String(error.position), type: error.type, reason: error.reason }, `${this.setup.label} halted before an event this version of the service cannot read`);
        return;
      }
      yield { stored, event };
    }
  }

  /** Writes the operations and moves the checkpoint to `next` in one write; throws CheckpointMoved when another process moved it. */
  protected async commit(ops: ReadModelOp[], next: bigint): Promise<void> {
    if (!(await this.readModels.write(ops, [{ name: this.checkpointName, expected: this.checkpoint, next }], this.fence))) throw new CheckpointMoved();
    this.checkpoint = next;
  }

  /** Sends what is due in the queue, unless stopped or a run of it is under way (which looks again when it ends). */
  protected kick(queue = ''): void {
    if (this.stopped) return;
    if (this.busy.has(queue)) {
      this.again.add(queue);
      return;
    }
    this.busy.add(queue);
    clearTimeout(this.timers.get(queue));
    this.timers.delete(queue);
    const run: Promise<void> = this.sendDue(queue)
      .catch((error: unknown) => {
        if (error instanceof LeaseLost) return;
        this.logger.error({ err: error, ...(queue === '' ? {} : { queue }) }, `${this.setup.label} stopped sending; trying again`);
        this.wake(this.clock().getTime() + this.retryMs, queue);
      })
      .finally(() => {
        this.busy.delete(queue);
        this.sending.delete(run);
        if (this.again.delete(queue)) this.kick(queue);
      });
    this.sending.add(run);
  }

  /** Kicks the queue at `at` (ms since the epoch), replacing the time it was to wake at. */
  protected wake(at: number, queue = ''): void {
    if (this.stopped) return;
    clearTimeout(this.timers.get(queue));
    const timer = setTimeout(
      () => {
        this.timers.delete(queue);
        this.kick(queue);
      },
      Math.min(LONGEST_TIMER_MS, Math.max(0, at - this.clock().getTime())),
    );
    timer.unref();
    this.timers.set(queue, timer);
  }

  private async reload(): Promise<void> {
    this.checkpoint = (await this.readModels.checkpoints()).get(this.checkpointName) ?? 0n;
    await this.load();
  }
}
