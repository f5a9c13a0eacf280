import type { Doc, ReadModelOp } from './port.js';

export interface HeldCount {
  collection: string;
  doc: Doc;
  field: string;
  by: number;
}

/**
 * Counts up (positive tallies) held back and summed within one write, each
 * counter then written once however many events of the write counted it: a
 * catch-up batch of thousands of responses to one object updates its totals
 * once rather than thousands of times. Held counts are written before any
 * later op of their collection that could see them (anything but a put of
 * another document), so the write reads as its ops applied in order. Counts
 * down are never held: one may delete a counter, which a sum could hide.
 */
export class PendingCounts {
  /** Held counts by collection, then counter id, then field: looked up without building a key a count. */
  private readonly held = new Map<string, Map<string, Map<string, HeldCount>>>();
  /** The held count of an op met before: a projection that counts with the same op object each time finds it in one look-up. */
  private readonly byOp = new Map<ReadModelOp, HeldCount>();

  /** Holds a count up, answering true; anything else is left to the caller. */
  take(op: ReadModelOp): boolean {
    if (op.op !== 'tally' || !(op.by > 0) || !Number.isFinite(op.by)) return false;
    const same = this.byOp.get(op);
    if (same !== undefined) {
      same.by += op.by;
      return true;
    }
    let collection = this.held.get(op.collection);
    if (collection === undefined) this.held.set(op.collection, (collection = new Map()));
    let fields = collection.get(op.doc.id);
    if (fields === undefined) collection.set(op.doc.id, (fields = new Map()));
    let held = fields.get(op.field);
    if (held) held.by += op.by;
    else fields.set(op.field, (held = { collection: op.collection, doc: op.doc, field: op.field, by: op.by }));
    this.byOp.set(op, held);
    return true;
  }

  /** Takes out the held counts `op` could see, or all of them when `op` is undefined (the end of the write), for the caller to write. */
  release(op: ReadModelOp | undefined): HeldCount[] {
    if (this.held.size === 0) return [];
    if (op === undefined) {
      const out = [...this.held.values()].flatMap(flatten);
      this.held.clear();
      this.byOp.clear();
      return out;
    }
    const collection = this.held.get(op.collection);
    if (collection === undefined) return [];
    if (op.op === 'put' && !collection.has(op.doc.id)) return [];
    this.held.delete(op.collection);
    for (const [taken, held] of this.byOp) if (held.collection === op.collection) this.byOp.delete(taken);
    return flatten(collection);
  }
}

const flatten = (collection: Map<string, Map<string, HeldCount>>): HeldCount[] => [...collection.values()].flatMap((fields) => [...fields.values()]);

/**
 * The ops as a write applies them with its counts up summed (see
 * PendingCounts): what a store would write, for a caller that prepares a
 * write elsewhere (a rebuild's other thread) and hands over fewer ops.
 */
export function summed(ops: readonly ReadModelOp[]): ReadModelOp[] {
  const counts = new PendingCounts();
  const out: ReadModelOp[] = [];
  const held = (count: HeldCount): ReadModelOp => ({ op: 'tally', ...count });
  for (const op of ops) {
    if (counts.take(op)) continue;
    for (const count of counts.release(op)) out.push(held(count));
    out.push(op);
  }
  for (const count of counts.release(undefined)) out.push(held(count));
  return out;
}
