import type { FastifyBaseLogger } from 'fastify';
import type { EventStore, EventSubscription, StoredEvent } from '../../infra/event-store/port.js';
import { LeaseLost } from '../../infra/read-models/port.js';
import { nextTurn } from './progress.js';

/** Events read at once while catching up. */
const CATCH_UP_BATCH = 5000;

/** Its checkpoint was not where it was read: another process moved it (the lease changed hands). */
export class CheckpointMoved extends Error {}

/**
 * A process beside the projections that follows the feed from a checkpoint
 * of its own, stored with its effects (the erasure process, webhooks).
 */
export interface FeedConsumer {
  /** Names it in the log lines. */
  readonly label: string;
  readonly events: EventStore;
  readonly logger: Pick<FastifyBaseLogger, 'error' | 'warn'>;
  readonly batchSize: number;
  /** The most events its store takes in one write (MongoDB's transactions have limits): a catch-up batch is no larger. */
  readonly maxEventsPerWrite?: number | undefined;
  readonly retryMs: number;
  /** Its checkpoint as it last read or wrote it. */
  position(): bigint;
  /** It met an event it cannot read and stops before it. */
  halted(): boolean;
  /** stop() was called. */
  stopping(): boolean;
  /** Reads its checkpoint and state afresh, as stored. */
  reload(): Promise<void>;
  /** Once, after the first reload of a follow (webhooks send what a stop or crash left queued). */
  loaded?(): void;
  /** Applies one batch, checkpoint with it; throws CheckpointMoved when the stored checkpoint was moved. */
  handle(batch: StoredEvent[]): Promise<void>;
}

/** Handles everything stored now, in batches, yielding between them. */
export async function catchUpFeed(consumer: FeedConsumer): Promise<void> {
  while (!consumer.halted()) {
    const batch = await consumer.events.readAll({ after: consumer.position(), limit: Math.min(CATCH_UP_BATCH, consumer.maxEventsPerWrite ?? CATCH_UP_BATCH) });
    if (batch.length === 0) return;
    try {
      await consumer.handle(batch);
    } catch (error) {
      if (!(error instanceof CheckpointMoved)) throw error;
      await consumer.reload();
    }
    if (consumer.halted()) return;
    await nextTurn();
  }
}

/**
 * Follows the feed until stopped, halted, or a write finds the lease taken
 * over; other failures are logged and tried again. `track` is told of each
 * subscription it opens and closes, so that stop() can close the live one.
 */
export async function followFeed(consumer: FeedConsumer, track: (subscription: EventSubscription | undefined) => void): Promise<void> {
  // Another process may have moved the checkpoint while this one was stopped.
  let loaded = false;
  const finished = () => consumer.stopping() || consumer.halted();
  while (!finished()) {
    let subscription: EventSubscription | undefined;
    try {
      if (!loaded) {
        await consumer.reload();
        consumer.loaded?.();
      }
      loaded = true;
      await catchUpFeed(consumer);
      // A stop() during the catch-up found no subscription to close: none may open after it.
      if (finished()) break;
      subscription = consumer.events.subscribe({ after: consumer.position(), batchSize: consumer.batchSize });
      track(subscription);
      for await (const batch of subscription) {
        await consumer.handle(batch);
        if (finished()) break;
      }
    } catch (error) {
      if (consumer.stopping()) break;
      if (error instanceof LeaseLost) {
        consumer.logger.warn({ lease: error.lease }, `another process took the projector lease over: ${consumer.label} stops here`);
        break;
      }
      if (error instanceof CheckpointMoved) {
        await consumer.reload();
        continue;
      }
      consumer.logger.error({ err: error, position: String(consumer.position()) }, `${consumer.label} stopped; trying again`);
      await new Promise((resolve) => setTimeout(resolve, consumer.retryMs));
    } finally {
      await subscription?.close().catch(() => undefined);
      track(undefined);
    }
  }
}
