import { UnreadableRecord, type FeedRecord } from '../infra/event-store/port.js';
import { besideModule, messagesOf, startThread } from '../infra/threads.js';
import { leafLatin1, SEAL_STREAM } from './chain.js';

/**
 * Events of the feed as a verify reads them: each one's position and leaf
 * (32 bytes each, in flat arrays), and whole only the events it looks into
 * (the seals and the erasure records), by their index in the page.
 */
export interface LeafPage {
  count: number;
  positions: BigUint64Array;
  /** Each event's revision in its stream, which seals from version 2 on hold beside the leaf. */
  revisions: BigUint64Array;
  leaves: Uint8Array;
  records: Array<[index: number, record: FeedRecord]>;
}

/** Whether a verify reads the event itself, not only its leaf. */
export const looksInto = (record: FeedRecord): boolean => record.streamId === SEAL_STREAM || record.type === 'ResponsesErased';

export function leafPage(records: readonly FeedRecord[]): LeafPage {
  const leaves = Buffer.alloc(records.length * 32);
  const page: LeafPage = { count: records.length, positions: new BigUint64Array(records.length), revisions: new BigUint64Array(records.length), leaves, records: [] };
  records.forEach((record, i) => {
    page.positions[i] = record.position;
    page.revisions[i] = record.revision;
    leaves.write(leafLatin1(record), i * 32, 32, 'latin1');
    if (looksInto(record)) page.records.push([i, record]);
  });
  return page;
}

/** The events after one position up to another, as pages in feed order. */
export type LeafFeed = (after: bigint, through: bigint) => AsyncIterable<LeafPage>;

/** What a leaves thread (leaves-worker.ts) is started with: it reads ranges `index`, `index + of`, … of `range` positions each. */
export interface LeavesWorkerData {
  dataDir: string;
  after: string;
  through: string;
  range: number;
  index: number;
  of: number;
  /** Ranges it may send before the first is taken. */
  ahead: number;
}

/** Thread to verify: one range's page, or what failed. */
export type LeavesMessage = { kind: 'page'; page: LeafPage } | { kind: 'failed'; message: string } | { kind: 'unreadable'; position: string; streamId: string; reason: string };

/**
 * The embedded store's feed read and hashed on `threads` threads, each with
 * its own connection to the file, taking turns by ranges of `range`
 * positions (the store's positions are whole numbers, one per event, so a
 * range holds at most that many events): reading and hashing are most of a
 * verify, and each thread does its share while the verify checks the
 * ranges in order.
 */
export function leavesInThreads(dataDir: string, { threads = 2, range = 1000, ahead = 16 } = {}): LeafFeed {
  return (after, through) => ({ [Symbol.asyncIterator]: () => fromThreads(dataDir, after, through, { threads, range, ahead }) });
}

async function* fromThreads(dataDir: string, after: bigint, through: bigint, options: { threads: number; range: number; ahead: number }): AsyncGenerator<LeafPage> {
  const ranges = Number((through - after + BigInt(options.range) - 1n) / BigInt(options.range));
  if (ranges <= 0) return;
  const of = Math.min(options.threads, ranges);
  const threads = Array.from({ length: of }, (_, index) => {
    const worker = startThread(besideModule(import.meta.url, 'leaves-worker'), {
      workerData: { dataDir, after: String(after), through: String(through), range: options.range, index, of, ahead: options.ahead } satisfies LeavesWorkerData,
    });
    return { worker, messages: messagesOf<LeavesMessage>(worker, 'a verify thread') };
  });
  try {
    for (let k = 0; k < ranges; k++) {
      const thread = threads[k % of]!;
      const message = await thread.messages.next();
      if (message.kind === 'failed') throw new Error(`a verify thread: ${message.message}`);
      if (message.kind === 'unreadable') throw new UnreadableRecord(BigInt(message.position), message.streamId, message.reason);
      thread.worker.postMessage('more');
      yield message.page;
    }
  } finally {
    await Promise.all(threads.map((thread) => thread.worker.terminate()));
  }
}
