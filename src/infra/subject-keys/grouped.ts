import type { SubjectKeyStore } from './port.js';

interface Waiting {
  keys: ReadonlyMap<string, Buffer>;
  resolve: (stored: Map<string, Buffer>) => void;
  reject: (error: unknown) => void;
}

/**
 * The key store with its adds grouped: the adds asked for in one turn of
 * the event loop are written as one `add` (on the embedded store, one
 * transaction and so one durable commit), as the embedded event store
 * groups its appends. Each caller is answered only once that write is
 * done, so a key is still durable before any event sealed under it is
 * appended; what grouping saves is a commit per submit under load.
 */
export function groupedAdds(store: SubjectKeyStore): SubjectKeyStore['add'] {
  let waiting: Waiting[] = [];
  const flush = async () => {
    const batch = waiting;
    waiting = [];
    const all = new Map<string, Buffer>();
    // The first asked for a subject wins within the batch, as the store keeps the first stored.
    for (const { keys } of batch) for (const [subject, key] of keys) if (!all.has(subject)) all.set(subject, key);
    try {
      const stored = await store.add(all);
      for (const { keys, resolve } of batch) {
        const mine = new Map<string, Buffer>();
        for (const subject of keys.keys()) {
          const key = stored.get(subject);
          if (key) mine.set(subject, key);
        }
        resolve(mine);
      }
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
  };
  return (keys) => {
    if (keys.size === 0) return Promise.resolve(new Map());
    return new Promise((resolve, reject) => {
      if (waiting.push({ keys, resolve, reject }) === 1) setImmediate(() => void flush());
    });
  };
}
