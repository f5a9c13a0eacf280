/**
 * A rebuild's other thread (see replay.ts): reads the embedded store's feed
 * on a connection of its own, parses and projects each batch, and sends it,
 * at most `ahead` batches before the rebuild has taken them.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteEventStore } from '../../infra/event-store/sqlite.js';
import type { EventStore } from '../../infra/event-store/port.js';
import { openSubjectKeysAt } from '../../infra/subject-keys/open.js';
import { PersonalCodec } from '../personal.js';
import { PersonalEventStore } from '../personal-store.js';
import { creditedSender } from '../../infra/threads.js';
import { pack, prepare, weightOf, type ReadSide, type ReplayMessage, type ReplayWorkerData } from './replay.js';

const { dataDir, batchSize, after, ahead, aheadBytes, readSide, personal } = workerData as ReplayWorkerData;
// The service's projections and catalog, named by the composition that started this thread.
const { projections, catalog, personalData } = (await import(readSide)) as ReadSide;
const port = parentPort!;
const send = creditedSender<ReplayMessage>(port, ahead, aheadBytes);

const stored = openSqliteEventStore(dataDir);
// Sealed personal content is opened here as on the main thread, with the same keys.
const events: EventStore = personal ? new PersonalEventStore(stored, new PersonalCodec(personalData ?? [], await openSubjectKeysAt(personal.keys), personal.secret)) : stored;
try {
  let position = after;
  let halted = false;
  while (!halted) {
    const batch = await events.readAll({ after: position, limit: batchSize });
    if (batch.length === 0) break;
    for (const prepared of prepare(projections, catalog, batch, position, { written: true })) {
      if (prepared.kind === 'halt') {
        await send(prepared);
        halted = true;
      } else {
        const packed = pack(prepared, projections);
        await send(packed, [], weightOf(packed));
        position = prepared.last;
      }
    }
  }
  if (!halted) port.postMessage({ kind: 'end' } satisfies ReplayMessage);
} catch (error) {
  port.postMessage({ kind: 'failed', message: error instanceof Error ? error.message : String(error) } satisfies ReplayMessage);
} finally {
  await events.close();
  // The port's listener would keep the thread alive.
  port.close();
}
