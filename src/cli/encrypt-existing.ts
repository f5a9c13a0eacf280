import type { FeedRecord } from '../infra/event-store/port.js';
import { SqliteEventStore } from '../infra/event-store/sqlite.js';
import { PersonalEventStore } from '../kernel/personal-store.js';
import type { Services } from '../services.js';

/** The rewrite's checkpoint in the event store (SqliteEventStore.rewrite). */
export const ENCRYPT_CHECKPOINT = 'encrypt-existing';

/** Events read, and their plain submissions sealed and committed, per page: one keys commit and one events commit a page. */
export const ENCRYPT_PAGE = 500;

/**
 * Encrypts in place the responses and votes stored before the service
 * encrypted them (the embedded store only: KurrentDB never changes an event
 * it holds). It walks the history in pages from a checkpoint kept in the
 * event store: each page's keys are stored first, then its events are
 * rewritten and the checkpoint moved in one transaction, so a process
 * killed at any moment resumes after the last page it committed and never
 * leaves an event unreadable (a plain event stays readable until its
 * page's commit; a key made for a page that did not commit is used again).
 * Then the read models are rebuilt, so they keep the encrypted text too,
 * and the logs are cleared of the old bytes. One line a page on `out`.
 */
export async function encryptExisting(services: Services, out: (line: string) => void, pageSize = ENCRYPT_PAGE): Promise<void> {
  const events = services.events;
  const store = events instanceof PersonalEventStore ? events.inner : events;
  if (!(store instanceof SqliteEventStore) || !(events instanceof PersonalEventStore)) {
    throw new Error('only the embedded event store can be encrypted in place: KurrentDB never changes an event it holds (responses stored plain there become unreadable when erased, as their streams are deleted and scavenged)');
  }
  let after = store.rewriteCheckpoint(ENCRYPT_CHECKPOINT);
  let encrypted = 0;
  for (;;) {
    const page: FeedRecord[] = await store.readFeed({ after, limit: pageSize });
    if (page.length === 0) break;
    const through = page.at(-1)!.position;
    const resealed = await events.codec.reseal(page);
    const changed = store.rewrite(ENCRYPT_CHECKPOINT, resealed, through);
    encrypted += changed;
    after = through;
    if (changed > 0) out(JSON.stringify({ through: String(through), encrypted: changed }));
  }
  // The read models were built from the plain text: built again from the encrypted one.
  await services.projections.rebuild();
  await Promise.all([events.expunge(), services.readModels.expunge()]);
  out(JSON.stringify({ done: true, through: String(after), encrypted }));
}
