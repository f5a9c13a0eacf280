import type { EventStore, EventSubscription, StoredEvent, SubscribeOptions } from './port.js';

/** The rest of a consumer no reply waits for: what it adds to an erasure's or a webhook's delay at most. */
export const FEED_REST_MS = 20;

/**
 * The store as a consumer sees it that no reply waits for (erasure,
 * webhooks): its live subscription rests `ms` after each batch that was not
 * full, so the appends of that time come as one batch and the consumer
 * writes its state and checkpoint once for them rather than once per append.
 * Everything else is the store's own.
 */
export function lingering(store: EventStore, ms: number): EventStore {
  return {
    kind: store.kind,
    append: (streamId, events, expected) => store.append(streamId, events, expected),
    appendToStreams: (parts) => store.appendToStreams(parts),
    atomicAcrossStreams: store.atomicAcrossStreams,
    readStream: (streamId, options) => store.readStream(streamId, options),
    streamState: (streamId) => store.streamState(streamId),
    readAll: (options) => store.readAll(options),
    readFeed: (options) => store.readFeed(options),
    readAccount: (accountId, options) => store.readAccount(accountId, options),
    subscribe: (options) => resting(store.subscribe(options), options, ms),
    deleteStreams: (streamIds) => store.deleteStreams(streamIds),
    ...(store.hasRoom ? { hasRoom: () => store.hasRoom!() } : {}),
    expunge: () => store.expunge(),
    headPosition: () => store.headPosition(),
    endPosition: () => store.endPosition(),
    close: () => store.close(),
  };
}

/** A wait of `ms` that `wake` cuts short: how a live feed sleeps until its next look or an append. */
export function pause(ms: number): { done: Promise<void>; wake: () => void } {
  let wake = () => {};
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  return { done, wake };
}

function resting(live: EventSubscription, { batchSize }: SubscribeOptions, ms: number): EventSubscription {
  let closed = false;
  let wake: (() => void) | undefined;
  async function* batches(): AsyncGenerator<StoredEvent[]> {
    for await (const batch of live) {
      yield batch;
      // A full batch means more is waiting: read on at once.
      if (closed || batch.length >= batchSize) continue;
      const rest = pause(ms);
      wake = rest.wake;
      await rest.done;
      wake = undefined;
      if (closed) return;
    }
  }
  const iterator = batches();
  return {
    [Symbol.asyncIterator]: () => iterator,
    close: async () => {
      closed = true;
      wake?.();
      await live.close();
    },
  };
}
