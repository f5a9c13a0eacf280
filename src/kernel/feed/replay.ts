import type { SubjectKeysAt } from '../../infra/subject-keys/open.js';
import type { PersonalDeclaration } from '../personal.js';
import type { Worker } from 'node:worker_threads';
import { UnreadableEvent, type EventCatalog, type Recorded } from '../event-catalog.js';
import type { StoredEvent } from '../../infra/event-store/port.js';
import { summed } from '../../infra/read-models/pending-counts.js';
import type { Doc, ReadModelOp } from '../../infra/read-models/port.js';
import { besideModule, messagesOf, startThread } from '../../infra/threads.js';
import type { FeedEvent, Projection } from './projection.js';

/**
 * A replay of the feed made ready to write: for each batch of events, every
 * projection's ops (projection by projection, each in feed order, as the
 * runner builds a write), with counts up summed as a store would sum them.
 * A rebuild reads, parses and projects the history on another thread this
 * way while its own thread writes: on two cores, each side does about half.
 */
export interface PreparedBatch {
  kind: 'batch';
  /** The position the batch was read after, and its last event's. */
  after: bigint;
  last: bigint;
  events: number;
  ops: ReadModelOp[];
}

/** The first event the catalog cannot read: what came before it was sent, nothing after it is. */
export interface PreparedHalt {
  kind: 'halt';
  position: bigint;
  streamId: string;
  type: string;
  reason: string;
}

export type Prepared = PreparedBatch | PreparedHalt;

/** The feed from after a position, prepared, to its end as it stands when read. */
export type PreparedFeed = (after: bigint) => AsyncIterable<Prepared>;

/**
 * One batch of stored events prepared (the batch up to an unreadable event,
 * then the halt). With `written`, every put carries its document as JSON
 * text and, as an object, only what the store needs beside it (the port's
 * put): a thread handed the batch then neither copies nor writes out the
 * whole documents.
 */
export function prepare(
  projections: readonly Projection[],
  catalog: EventCatalog<FeedEvent>,
  batch: readonly StoredEvent[],
  after: bigint,
  options: { written?: boolean } = {},
): Prepared[] {
  const parsed: Array<Recorded<FeedEvent>> = [];
  let readable = 0;
  let halt: PreparedHalt | undefined;
  for (const event of batch) {
    try {
      const known = catalog.parse(event);
      if (known) parsed.push(known);
      readable++;
    } catch (error) {
      if (!(error instanceof UnreadableEvent)) throw error;
      halt = { kind: 'halt', position: error.position, streamId: error.streamId, type: error.type, reason: error.reason };
      break;
    }
  }
  const out: Prepared[] = [];
  if (readable > 0) {
    const ops: ReadModelOp[] = [];
    for (const projection of projections) for (const event of parsed) for (const op of projection.project(event)) ops.push(op);
    const keys = options.written ? keyFields(projections) : undefined;
    const columns = columnFields(projections);
    out.push({ kind: 'batch', after, last: batch[readable - 1]!.position, events: readable, ops: keys ? summed(ops).map((op) => written(op, keys, columns)) : summed(ops) });
  }
  if (halt) out.push(halt);
  return out;
}

const keyFieldsOf = new WeakMap<readonly Projection[], Map<string, string[]>>();
const columnFieldsOf = new WeakMap<readonly Projection[], Map<string, Set<string>>>();

/** Per collection, the fields a store reads of a document beside its text: what the collection indexes or ranks by. */
function keyFields(projections: readonly Projection[]): Map<string, string[]> {
  let keys = keyFieldsOf.get(projections);
  if (keys === undefined) {
    keys = new Map();
    for (const spec of projections.flatMap((p) => p.collections)) {
      keys.set(spec.name, [...new Set([...(spec.rankWithin === undefined ? [] : [spec.rankWithin]), ...spec.indexes.flat()])].filter((field) => field !== 'id'));
    }
    keyFieldsOf.set(projections, keys);
  }
  return keys;
}

/**
 * Per collection with `indexedColumns`, the fields its text may leave out
 * when they are strings (the port's put): the id and what its indexes name,
 * which the store keeps in columns and puts back as it reads.
 */
function columnFields(projections: readonly Projection[]): Map<string, Set<string>> {
  let columns = columnFieldsOf.get(projections);
  if (columns === undefined) {
    columns = new Map();
    for (const spec of projections.flatMap((p) => p.collections)) if (spec.indexedColumns) columns.set(spec.name, new Set(['id', ...spec.indexes.flat()]));
    columnFieldsOf.set(projections, columns);
  }
  return columns;
}

function written(op: ReadModelOp, keys: Map<string, string[]>, columns: Map<string, Set<string>>): ReadModelOp {
  if (op.op !== 'put' || op.json !== undefined) return op;
  const fields = keys.get(op.collection);
  if (fields === undefined) return op;
  const doc: Doc = { id: op.doc.id };
  for (const field of fields) if (Object.hasOwn(op.doc, field)) doc[field] = op.doc[field];
  return { op: 'put', collection: op.collection, doc, json: JSON.stringify(textual(op.doc, columns.get(op.collection))) };
}

/** The document as its text holds it: without the string fields its columns keep, each stored once rather than twice. */
function textual(doc: Doc, columns: Set<string> | undefined): Record<string, unknown> {
  if (columns === undefined) return doc;
  const text: Record<string, unknown> = {};
  for (const field of Object.keys(doc)) {
    const value = doc[field];
    if (!(typeof value === 'string' && columns.has(field))) text[field] = value;
  }
  return text;
}

/**
 * A prepared batch as it crosses to the other thread: each put with its
 * text as an array (collection, text, id, then the values of the
 * collection's key fields in `keys` order), other ops as they are. Copying
 * between threads pays for every object and every property name; a
 * million puts as objects cost both threads about a second more.
 */
export interface PackedBatch extends Omit<PreparedBatch, 'ops'> {
  ops: Array<ReadModelOp | PackedPut>;
  keys: Record<string, string[]>;
}
type PackedPut = [collection: string, json: string, id: string, ...values: unknown[]];

export function pack(batch: PreparedBatch, projections: readonly Projection[]): PackedBatch {
  const keys: Record<string, string[]> = {};
  const all = keyFields(projections);
  const ops = batch.ops.map((op): ReadModelOp | PackedPut => {
    if (op.op !== 'put' || op.json === undefined) return op;
    const fields = (keys[op.collection] ??= all.get(op.collection) ?? []);
    const packed: PackedPut = [op.collection, op.json, op.doc.id];
    for (const field of fields) packed.push(op.doc[field]);
    return packed;
  });
  return { ...batch, ops, keys };
}

export function unpack(batch: PackedBatch): PreparedBatch {
  const ops = batch.ops.map((op): ReadModelOp => {
    if (!Array.isArray(op)) return op;
    const [collection, json, id] = op;
    const doc: Doc = { id };
    const fields = batch.keys[collection] ?? [];
    for (let i = 0; i < fields.length; i++) if (op[i + 3] !== undefined) doc[fields[i]!] = op[i + 3];
    return { op: 'put', collection, doc, json };
  });
  return { kind: 'batch', after: batch.after, last: batch.last, events: batch.events, ops };
}

/** What the worker (replay-worker.ts) is started with. */
export interface ReplayWorkerData {
  dataDir: string;
  batchSize: number;
  after: bigint;
  /** Batches it may send before the first is taken: enough to keep both threads busy, few enough to bound memory. */
  ahead: number;
  /** And what those batches may weigh (weightOf) before the first is taken. */
  aheadBytes: number;
  /** The URL of a module exporting the read side (`ReadSide`): the worker imports it, so the feed machinery names no projection. */
  readSide: string;
  /** How the worker opens sealed personal content (kernel/personal.ts): the secret the keys are derived under, and where they are. */
  personal?: { secret: string; keys: SubjectKeysAt };
}

/** What a rebuild's worker runs: the projections and the catalog that reads their events. */
export interface ReadSide {
  projections: readonly Projection[];
  catalog: EventCatalog<FeedEvent>;
  /** The events whose personal fields are sealed, and how. */
  personalData?: readonly PersonalDeclaration[];
}

/** Worker to thread: a prepared batch or halt, the end of the feed, or what failed. */
export type ReplayMessage = PackedBatch | PreparedHalt | { kind: 'end' } | { kind: 'failed'; message: string };

/**
 * Batches the worker may prepare before the writing thread has taken them
 * (about half a megabyte each, at the service's 500 events). The writer's
 * commits are uneven, a checkpoint now and then taking many times a batch's
 * time while it waits for the disk: with 4 ahead (of 1000 events each),
 * each thread sat idle for a sixth of a 1M-event rebuild waiting on the
 * other, and the rebuild took 24-27 s where 32 ahead took 16-22 s. With 256
 * ahead the preparing thread waited 0.6-0.8 s of a 1M-event rebuild where
 * it waited 0.9-1.8 s with 32, and the rebuild was quicker in 4 of 6
 * alternating pairs; the peak RSS stayed about 490 MB, most of it the
 * worker's young generation.
 */
const AHEAD = 256;
/**
 * What the batches not taken yet may weigh: the count alone held 256
 * batches whatever their size, and 500 responses of four 10,000-character
 * answers make a batch of about 20 MB (5 GB for 256). At the bench's 0.5 MB
 * a batch, the count binds first.
 */
const AHEAD_BYTES = 256 * 1024 * 1024;

/**
 * About what a packed batch holds in memory once received: its texts (two
 * bytes a character at most) and a little for each op.
 */
export function weightOf(batch: PackedBatch): number {
  let weight = 0;
  for (const op of batch.ops) weight += Array.isArray(op) ? 2 * op[1].length + 64 : 256;
  return weight;
}
/** A batch's garbage dies young: a young generation large enough for a few batches keeps it from being copied into the old one. */
const YOUNG = { maxYoungGenerationSizeMb: 256 };

/**
 * The embedded store's feed prepared on a worker thread with its own
 * connection to the file. The worker runs the projections and catalog of
 * the module `readSide` names (the service's: projections/index.ts), which
 * must be those of the runner it serves.
 */
export function preparedInWorker(dataDir: string, batchSize: number, readSide: URL, personal?: ReplayWorkerData['personal']): PreparedFeed {
  return (after) => ({ [Symbol.asyncIterator]: () => fromWorker({ dataDir, batchSize, after, ahead: AHEAD, aheadBytes: AHEAD_BYTES, readSide: readSide.href, ...(personal ? { personal } : {}) }) });
}

async function* fromWorker(data: ReplayWorkerData): AsyncGenerator<Prepared> {
  const worker = startWorker(data);
  const messages = messagesOf<ReplayMessage>(worker, 'the replay worker');
  try {
    for (;;) {
      const message = await messages.next();
      if (message.kind === 'end') return;
      if (message.kind === 'failed') throw new Error(`replay worker: ${message.message}`);
      // One taken, one more may come.
      worker.postMessage('more');
      if (message.kind === 'halt') {
        yield message;
        return;
      }
      yield unpack(message);
    }
  } finally {
    // Not awaited: a worker that sent the end has closed its port and is exiting, and tearing
    // its thread down (its young generation of 256 MB) took 0.2-0.8 s a rebuild waited for.
    worker.terminate().catch(() => undefined);
  }
}

function startWorker(data: ReplayWorkerData): Worker {
  return startThread(besideModule(import.meta.url, 'replay-worker'), { workerData: data, resourceLimits: YOUNG });
}
