import type { FastifyBaseLogger } from 'fastify';
import {
  DELETED_PARENTS,
  deletedParent,
  ERASURE_TARGETS,
  erasureState,
  parentKey,
  targetOf,
  type ErasureReads,
  type ErasureTarget,
  type Parent,
} from './state.js';
import { erasureStream } from './outcome.js';
import { checkpointKey, type FeedEvent } from '../kernel/feed/projection.js';
import { catchUpFeed, CheckpointMoved, followFeed, type FeedConsumer } from '../kernel/feed/follow.js';
import { Progress } from '../kernel/feed/progress.js';
import { haltMessage, type EventStoreChangedHalt, type Halt } from '../kernel/feed/halt.js';
import { checkStore } from '../kernel/feed/store-identity.js';
import { UnreadableEvent, type EventCatalog, type Recorded } from '../kernel/event-catalog.js';
import { WrongExpectedRevision, type EventStore, type EventSubscription, type StoredEvent } from '../infra/event-store/port.js';
import { FEED_REST_MS, lingering } from '../infra/event-store/linger.js';
import type { Clock } from '../infra/ids.js';
import type { Fence, ReadModelOp, ReadModelStore } from '../infra/read-models/port.js';
import type { HaltingFeedProcessor } from '../kernel/feed/processor.js';

/** Ids one `ResponsesErased` names at most, so an audit event stays a reasonable size. */
const CHUNK = 1000;
const CHECKPOINT = checkpointKey(erasureState);
/** Events read at once when catching up (the live feed comes in smaller batches). */

interface Job {
  stream: string;
  /** The revision the first `ResponsesErased` takes in that stream. */
  firstRevision: bigint;
  targets: ErasureTarget[];
  record: { account_id: string; parent: Parent; parent_id: string; reason: 'bulk_delete' | 'parent_deleted'; key_id: string | null };
  meta: { actor: string; request_id?: string };
  /** Record the outcome even when nothing was erased (a request's answer is that outcome). */
  always: boolean;
}

export interface ErasureOptions {
  batchSize?: number;
  retryMs?: number;
  /** How long the live feed rests after a batch that was not full (see lingering). */
  restMs?: number;
  /**
   * After streams were deleted and the erasure recorded at `position`: once
   * the read models dropped the rows too, make the bytes unrecoverable where
   * the store can.
   */
  afterErasure?: (position: bigint) => Promise<void>;
  /**
   * Before streams are deleted: seal what is not sealed yet, so that the
   * erased events' hashes are in the chain (and an auditor sees that they
   * were there) however soon after their submission they are erased.
   */
  beforeErasure?: () => Promise<void>;
  /**
   * Before anything else is erased: delete the keys of the responses and
   * votes, so that no copy of their events, anywhere, can be read from then
   * on (kernel/personal.ts). The streams are deleted after, for the bytes.
   */
  forgetKeys?: (subjects: string[]) => Promise<void>;
}

/** Keys are the only actors that are keys; `cli` and `service` are not. */
const keyOf = (actor: string): string | null => (actor.startsWith('key_') ? actor : null);

/**
 * Erasure as a process: it follows the event feed from its own checkpoint
 * and, for every parent deletion, erasure request and submission recorded
 * after its parent's deletion, records `ResponsesErased` (ids only) in the
 * erasure's stream and deletes the streams that hold the submissions; the
 * projections drop the rows when they apply that event.
 *
 * Every step can run twice: deleting a deleted stream changes nothing, and
 * each `ResponsesErased` is appended at a fixed revision of its stream, so a
 * second append is refused. The checkpoint moves only after the step, so a
 * crash anywhere means the step runs again on the next start, with nobody
 * asking.
 */
export class ErasureProcess implements HaltingFeedProcessor {
  private checkpoint = 0n;
  /** Keys of every deleted parent (few), asked about for every submission in the feed. */
  private deletedParents = new Set<string>();
  private readonly progress = new Progress(() => this.checkpoint, () => this.halted?.position);
  private subscription: EventSubscription | undefined;
  private loop: Promise<void> | undefined;
  private stopped = false;
  /** The lease the live loop works under (the server's), none when catching up on demand. */
  private fence: Fence | undefined;
  private readonly batchSize: number;
  private readonly retryMs: number;
  private readonly afterErasure: (position: bigint) => Promise<void>;
  private readonly beforeErasure: () => Promise<void>;
  private readonly forgetKeys: (subjects: string[]) => Promise<void>;
  private readonly consumer: FeedConsumer;
  /**
   * Set when the feed holds an event this code cannot read: the process stops
   * before it, as the projections do, rather than miss an erasure it names.
   */
  halted: Halt | undefined;
  private readonly catalog: EventCatalog<ErasureReads>;

  constructor(
    private readonly events: EventStore,
    private readonly readModels: ReadModelStore,
    catalog: EventCatalog<FeedEvent>,
    private readonly clock: Clock,
    private readonly logger: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>,
    options: ErasureOptions = {},
  ) {
    // Given the catalog of every feature's events; it reads those ErasureReads names, and passes the others by.
    this.catalog = catalog as EventCatalog<ErasureReads>;
    // One batch is one write: a store whose transactions have limits says how many events it takes at once.
    this.batchSize = Math.min(options.batchSize ?? 500, readModels.maxEventsPerWrite ?? Number.POSITIVE_INFINITY);
    this.retryMs = options.retryMs ?? 1000;
    this.afterErasure = options.afterErasure ?? (async () => undefined);
    this.beforeErasure = options.beforeErasure ?? (async () => undefined);
    this.forgetKeys = options.forgetKeys ?? (async () => undefined);
    this.consumer = {
      label: 'the erasure process',
      // Nobody's reply waits for this process: appends close together are handled, and written, as one batch.
      events: lingering(events, options.restMs ?? FEED_REST_MS),
      logger,
      batchSize: this.batchSize,
      maxEventsPerWrite: readModels.maxEventsPerWrite,
      retryMs: this.retryMs,
      position: () => this.checkpoint,
      halted: () => this.halted !== undefined,
      stopping: () => this.stopped,
      reload: () => this.reload(),
      handle: (batch) => this.handle(batch),
    };
  }

  async init(): Promise<void> {
    await this.readModels.ensureCollections(erasureState.collections);
    await this.reload();
    // Its state is of the store it followed: on another store it would miss erasures, or wait for ever.
    const otherStore = await checkStore(this.events, this.readModels, this.checkpoint);
    if (otherStore) {
      this.haltOn({ cause: 'event_store_changed', position: 0n, reason: otherStore });
    } else if (this.halted?.cause === 'event_store_changed') {
      this.halted = undefined;
      this.progress.changed();
    }
  }

  /** The feed position the process has handled. */
  get position(): bigint {
    return this.checkpoint;
  }

  /**
   * Follows the feed until stop() or, with a fence, until a write finds the
   * lease taken over, picking up whatever a crash left undone first. Starts
   * again after a stop, from the checkpoint as stored then.
   */
  start(fence?: Fence): void {
    if (this.loop && !this.stopped) return;
    this.stopped = false;
    this.fence = fence;
    this.loop = this.follow();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.subscription?.close();
    await this.loop;
    this.progress.settleAll();
  }

  /**
   * Resolves true once every erasure recorded up to the position is done,
   * false when the timeout comes first (the erasure goes on regardless).
   * Without a live loop (the admin CLI, tests) it does the work here.
   */
  async reach(position: bigint, timeoutMs: number): Promise<boolean> {
    if (this.halted && position >= this.halted.position) return false;
    if (!this.loop) {
      await this.catchUp();
      return this.checkpoint >= position;
    }
    return this.progress.wait(position, timeoutMs);
  }

  /** Handles everything stored now. */
  async catchUp(): Promise<void> {
    await catchUpFeed(this.consumer);
  }

  private follow(): Promise<void> {
    return followFeed(this.consumer, (subscription) => (this.subscription = subscription));
  }

  private async reload(): Promise<void> {
    this.checkpoint = (await this.readModels.checkpoints()).get(CHECKPOINT) ?? 0n;
    this.deletedParents = new Set((await this.readModels.find(DELETED_PARENTS, {})).map((doc) => doc.id));
    this.progress.changed();
  }

  private async handle(batch: StoredEvent[]): Promise<void> {
    let pending: ReadModelOp[] = [];
    let previous = this.checkpoint;
    const commit = async (position: bigint) => {
      if (position <= this.checkpoint && pending.length === 0) return;
      const ops = pending;
      pending = [];
      if (!(await this.readModels.write(ops, [{ name: CHECKPOINT, expected: this.checkpoint, next: position }], this.fence))) throw new CheckpointMoved();
      this.checkpoint = position;
      this.progress.changed();
    };

    for (const stored of batch) {
      if (stored.position <= this.checkpoint) continue;
      const read = this.read(stored);
      if (read instanceof UnreadableEvent) {
        await commit(previous);
        this.halt(read);
        return;
      }
      const event = read;
      const target = event && targetOf(event);
      const deleted = event && deletedParent(event);
      if (target) {
        if (this.deletedParents.has(parentKey(target.parent, target.parent_id))) {
          // Recorded after its parent's deletion (it passed its checks just before): erased like the rest.
          await commit(previous);
          await this.erase({
            stream: erasureStream.late(target.id),
            firstRevision: 0n,
            targets: [target],
            record: { account_id: target.account_id, parent: target.parent, parent_id: target.parent_id, reason: 'parent_deleted', key_id: null },
            meta: { actor: 'service' },
            always: false,
          });
        } else {
          pending.push({ op: 'put', collection: ERASURE_TARGETS, doc: target });
        }
      } else if (deleted) {
        // Committed first, so the targets read next include every submission before the deletion.
        await commit(previous);
        const targets = (await this.readModels.find(ERASURE_TARGETS, { parent_id: deleted.id })) as ErasureTarget[];
        await this.erase({
          stream: erasureStream.parent(deleted.parent, deleted.id),
          firstRevision: 0n,
          targets: targets.filter((t) => t.parent === deleted.parent && t.account_id === deleted.accountId),
          record: { account_id: deleted.accountId, parent: deleted.parent, parent_id: deleted.id, reason: 'parent_deleted', key_id: keyOf(event.metadata.actor) },
          meta: { actor: event.metadata.actor, ...(event.metadata.request_id ? { request_id: event.metadata.request_id } : {}) },
          always: false,
        });
        this.deletedParents.add(parentKey(deleted.parent, deleted.id));
        pending.push(
          { op: 'put', collection: DELETED_PARENTS, doc: { id: parentKey(deleted.parent, deleted.id) } },
          { op: 'delete', collection: ERASURE_TARGETS, where: { parent_id: deleted.id } },
        );
      } else if (event?.type === 'ErasureRequested') {
        await commit(previous);
        const { data } = event;
        const found = await Promise.all([...new Set(data.response_ids)].map((id) => this.readModels.get(ERASURE_TARGETS, id)));
        const targets = (found as Array<ErasureTarget | null>).filter(
          (t): t is ErasureTarget => t !== null && t.parent === data.parent && t.parent_id === data.parent_id && t.account_id === data.account_id,
        );
        await this.erase({
          stream: stored.streamId,
          firstRevision: stored.revision + 1n,
          targets,
          record: { account_id: data.account_id, parent: data.parent, parent_id: data.parent_id, reason: 'bulk_delete', key_id: data.key_id },
          meta: { actor: event.metadata.actor, ...(event.metadata.request_id ? { request_id: event.metadata.request_id } : {}) },
          always: true,
        });
        pending.push(...targets.map((t): ReadModelOp => ({ op: 'delete', collection: ERASURE_TARGETS, where: { id: t.id } })));
      } else if (event?.type === 'ResponsesErased') {
        // Erasures an older version ran inside the request leave the state here too.
        pending.push(...event.data.response_ids.map((id): ReadModelOp => ({ op: 'delete', collection: ERASURE_TARGETS, where: { id } })));
      }
      previous = stored.position;
      if (deleted || event?.type === 'ErasureRequested') await commit(previous);
    }
    await commit(previous);
  }

  /**
   * Deletes the keys of what it names (no copy can be read from then on),
   * records the erasure, then deletes the streams. In this order, a stop
   * between the two leaves a history whose every missing event a record
   * accounts for (`verify` passes) and the content still to delete, which
   * the next start deletes; in the other, the content went with no record
   * saying why, and `verify` reported a break until then.
   */
  private async erase(job: Job): Promise<void> {
    const streams = job.targets.flatMap((t) => t.streams);
    // Sealed first, so that the erased events' hashes are in the chain however soon after their submission they go.
    if (streams.length > 0) await this.beforeErasure();
    const ids = job.targets.map((t) => t.id).sort();
    await this.forgetKeys(ids);
    const chunks: string[][] = [];
    for (let i = 0; i < ids.length; i += CHUNK) chunks.push(ids.slice(i, i + CHUNK));
    if (chunks.length === 0 && job.always) chunks.push([]);
    const now = this.clock().toISOString();
    let recorded = 0n;
    for (const [i, response_ids] of chunks.entries()) {
      const revision = job.firstRevision + BigInt(i);
      const event = this.catalog.serialize(
        { type: 'ResponsesErased', data: { ...job.record, response_ids, erased_at: now } },
        { occurred_at: now, ...job.meta },
      );
      try {
        recorded = (await this.events.append(job.stream, [event], revision === 0n ? 'no_stream' : revision - 1n)).position;
      } catch (error) {
        // Recorded before a crash: the same targets in the same order make the same event.
        if (!(error instanceof WrongExpectedRevision)) throw error;
        recorded = (await this.events.readStream(job.stream, { fromRevision: revision, maxCount: 1 }))[0]?.position ?? recorded;
      }
    }
    if (streams.length === 0) return;
    await this.events.deleteStreams(streams);
    await this.afterErasure(recorded);
  }

  private read(stored: StoredEvent): Recorded<ErasureReads> | undefined | UnreadableEvent {
    try {
      return this.catalog.parse(stored);
    } catch (error) {
      if (error instanceof UnreadableEvent) return error;
      throw error;
    }
  }

  private halt(error: UnreadableEvent): void {
    this.halted = { cause: 'unreadable_event', position: error.position, streamId: error.streamId, type: error.type, reason: error.reason };
    this.logger.error(
      { position: String(error.position), stream: error.streamId, type: error.type, reason: error.reason },
      'erasure halted before an event this version of the service cannot read',
    );
    this.progress.changed();
  }

  private haltOn(halt: EventStoreChangedHalt): void {
    const known = this.halted?.cause === halt.cause && this.halted.reason === halt.reason;
    this.halted = halt;
    this.progress.changed();
    if (!known) this.logger.error({ cause: halt.cause, reason: halt.reason }, haltMessage(halt, 'erasure'));
  }
}
