import type { Doc, ReadModelOp, ReadModelStore } from './port.js';

/** Documents kept per collection at most: a flood of requests for distinct ids empties it rather than grows it. */
const MOST = 10_000;

interface Kept {
  until: number;
  doc: Doc | null;
}

/**
 * The few documents every public request reads before anything else (an
 * object's summary, its owner's account), kept for a moment. A submission
 * read both from the store on every request: a tenth of a loaded server's
 * time, for documents that change a few times a day. The projections of
 * this process tell it what they write (`written`), so what a command
 * changed is read afresh once the command has replied; a write by another
 * process (an API instance beside a projector) shows within `ttlMs`. Only
 * for reads that tolerate that: a submission's gate, which its decision
 * checks again on the object's own stream, and the plan a visitor is
 * counted and described under.
 */
export class RecentDocs {
  private readonly kept = new Map<string, Map<string, Kept>>();
  /** Per collection, how many times it was written: a read that began before a write is not kept. */
  private readonly writes = new Map<string, number>();

  constructor(
    private readonly store: Pick<ReadModelStore, 'get'>,
    collections: readonly string[],
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {
    for (const collection of collections) {
      this.kept.set(collection, new Map());
      this.writes.set(collection, 0);
    }
  }

  /** The document as the store holds it, or held it at most `ttlMs` ago; frozen, as others may hold it too. */
  async get(collection: string, id: string): Promise<Doc | null> {
    const docs = this.kept.get(collection);
    if (docs === undefined) return this.store.get(collection, id);
    const at = this.now();
    const hit = docs.get(id);
    if (hit !== undefined && hit.until > at) return hit.doc;
    const written = this.writes.get(collection);
    const doc = await this.store.get(collection, id);
    if (doc !== null) deepFreeze(doc);
    if (this.writes.get(collection) === written) {
      if (docs.size >= MOST) docs.clear();
      docs.set(id, { until: at + this.ttlMs, doc });
    }
    return doc;
  }

  /** What the ops may have changed is read afresh: the document an op names, or every one of a collection where it names none. */
  written(ops: readonly ReadModelOp[] | 'all'): void {
    if (ops === 'all') {
      for (const collection of this.kept.keys()) this.forget(collection);
      return;
    }
    for (const op of ops) {
      if (!this.kept.has(op.collection)) continue;
      this.forget(op.collection, idOf(op));
    }
  }

  private forget(collection: string, id?: string): void {
    this.writes.set(collection, this.writes.get(collection)! + 1);
    const docs = this.kept.get(collection)!;
    if (id === undefined) docs.clear();
    else docs.delete(id);
  }
}

function idOf(op: ReadModelOp): string | undefined {
  switch (op.op) {
    case 'put':
    case 'tally':
      return op.doc.id;
    case 'increment':
      return op.id;
    case 'patch':
    case 'delete': {
      const { id, ...rest } = op.where;
      return typeof id === 'string' && Object.keys(rest).length === 0 ? id : undefined;
    }
    case 'retract':
      return undefined;
  }
}

function deepFreeze(value: unknown): void {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value)) return;
  Object.freeze(value);
  for (const item of Object.values(value)) deepFreeze(item);
}
