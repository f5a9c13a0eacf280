/**
 * A verify's reading thread (see leaves.ts): reads its ranges of the
 * embedded store's feed on a connection of its own and hashes each event,
 * at most `ahead` ranges before the verify has taken them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { UnreadableRecord } from '../infra/event-store/port.js';
import { openSqliteEventStore, type SqliteEventStore } from '../infra/event-store/sqlite.js';
import { creditedSender, reasonOf } from '../infra/threads.js';
import { leafPage, type LeavesMessage, type LeavesWorkerData } from './leaves.js';

const { dataDir, after, through, range, index, of, ahead } = workerData as LeavesWorkerData;
const port = parentPort!;
const send = creditedSender<LeavesMessage>(port, ahead);

let events: SqliteEventStore | undefined;
try {
  events = openSqliteEventStore(dataDir);
  const last = BigInt(through);
  for (let from = BigInt(after) + BigInt(index * range); from < last; from += BigInt(of * range)) {
    const to = from + BigInt(range) < last ? from + BigInt(range) : last;
    // A range of positions holds at most as many events; what lies beyond it is another thread's.
    const records = (await events.readFeed({ after: from, limit: range })).filter((record) => record.position <= to);
    const page = leafPage(records);
    await send({ kind: 'page', page }, [page.positions.buffer as ArrayBuffer, page.revisions.buffer as ArrayBuffer, page.leaves.buffer as ArrayBuffer]);
  }
} catch (error) {
  port.postMessage(
    (error instanceof UnreadableRecord
      ? { kind: 'unreadable', position: String(error.position), streamId: error.streamId, reason: error.reason }
      : { kind: 'failed', message: reasonOf(error) }) satisfies LeavesMessage,
  );
} finally {
  await events?.close();
  // The port's listener would keep the thread alive.
  port.close();
}
