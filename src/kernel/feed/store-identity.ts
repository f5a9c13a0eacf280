import type { EventStore } from '../../infra/event-store/port.js';
import type { CollectionSpec, ReadModelStore } from '../../infra/read-models/port.js';
import { checkpointKey, type Projection } from './projection.js';

/**
 * Which event store the read models were built from, kept beside their
 * checkpoints: the id of the store's first event. A checkpoint is a position
 * in one store's feed; read against another store (a wiped or replaced
 * KurrentDB, a data directory restored from an older backup) it would leave
 * the read models silently frozen, or skip events. So the projections and the
 * erasure process check at start-up, and stop instead, until `admin rebuild`
 * builds the read models from the store at hand and binds them to it.
 *
 * The first event is an account's (nothing else can come first, and accounts
 * are never erased), so erasure does not change it. It is bound the first
 * time a consumer starts on a store that holds an event; until then there is
 * nothing in the read models to protect.
 */
export const STORE_IDENTITY: CollectionSpec = { name: 'event_store_identity', indexes: [] };
const DOC_ID = 'first_event';

export interface FirstEvent {
  id: string;
  position: bigint;
}

export interface StoreFacts {
  /** The first event the read models were built from, if bound. */
  bound: FirstEvent | null;
  /** The store's first event now; null when it is empty. */
  first: FirstEvent | null;
  /** The store's endPosition: at or past every event it ever held. */
  end: bigint;
  /** The furthest checkpoint of the consumer starting. */
  checkpoint: bigint;
}

/** Go on (binding the store first when it is not yet bound), or stop, and why. */
export type StoreVerdict = { go: true; bind: FirstEvent | null } | { go: false; reason: string };

export function judgeStore({ bound, first, end, checkpoint }: StoreFacts): StoreVerdict {
  if (checkpoint > end) {
    return {
      go: false,
      reason: `the read models hold the event feed up to position ${checkpoint}, past the end of this event store (${end}): they were built from another store, or from this one before it was wiped or restored from an older backup`,
    };
  }
  if (bound && bound.id !== first?.id) {
    return {
      go: false,
      reason: `the read models were built from an event store whose first event is ${bound.id}, and ${first ? `this one's is ${first.id}` : 'this one is empty'}: another store, or this one wiped`,
    };
  }
  return { go: true, bind: bound ? null : first };
}

async function facts(events: EventStore, readModels: ReadModelStore, checkpoint: bigint): Promise<StoreFacts> {
  await readModels.ensureCollections([STORE_IDENTITY]);
  const [doc, page, end] = await Promise.all([
    readModels.get(STORE_IDENTITY.name, DOC_ID),
    events.readAll({ after: 0n, limit: 1 }),
    events.endPosition(),
  ]);
  const bound = doc && typeof doc.event_id === 'string' ? { id: doc.event_id, position: BigInt(String(doc.position)) } : null;
  const first = page[0] ? { id: page[0].id, position: page[0].position } : null;
  return { bound, first, end, checkpoint };
}

const bind = (readModels: ReadModelStore, first: FirstEvent | null) =>
  readModels.write([
    first
      ? { op: 'put', collection: STORE_IDENTITY.name, doc: { id: DOC_ID, event_id: first.id, position: String(first.position) } }
      : { op: 'delete', collection: STORE_IDENTITY.name, where: { id: DOC_ID } },
  ]);

/**
 * Checks, for a consumer starting at `checkpoint`, that the read models came
 * from this store, binding them to it if they were not yet; answers why not
 * when they did not.
 */
export async function checkStore(events: EventStore, readModels: ReadModelStore, checkpoint: bigint): Promise<string | undefined> {
  const verdict = judgeStore(await facts(events, readModels, checkpoint));
  if (!verdict.go) return verdict.reason;
  if (verdict.bind) await bind(readModels, verdict.bind);
  return undefined;
}

/**
 * After a rebuild swapped in read models made from this store: binds them to
 * it. The erasure process's state is not part of a rebuild; when it came from
 * another store (or from past this one's end) it is emptied, so the process
 * follows this store's feed from the start (an erasure it meets again deletes
 * nothing new: deleted streams stay deleted).
 */
export async function rebindStore(events: EventStore, readModels: ReadModelStore, states: readonly ProcessState[]): Promise<void> {
  const checkpoints = await readModels.checkpoints();
  let first: FirstEvent | null | undefined;
  for (const state of states) {
    const key = checkpointKey(state);
    const found = await facts(events, readModels, checkpoints.get(key) ?? 0n);
    first = found.first;
    if (!judgeStore(found).go) {
      await readModels.ensureCollections(state.collections);
      await readModels.reset(state.collections.map((c) => c.name), [key]);
    }
  }
  await bind(readModels, first !== undefined ? first : (await facts(events, readModels, 0n)).first);
}

/** A consumer's state in the read-model store: its collections, and its checkpoint's key. */
export type ProcessState = Pick<Projection, 'name' | 'version' | 'collections'>;
