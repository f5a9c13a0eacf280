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
  private readonly held = new Map<string, HeldCount>();
  /** `collection\0id` of every held counter, for the put check. */
  private readonly ids = new Set<string>();

  /** Holds a count up, answering true; anything else is left to the caller. */
  take(op: ReadModelOp): boolean {
    if (op.op !== 'tally' || !(op.by > 0) || !Number.isFinite(op.by)) return false;
    const id = `${op.collection}\u0000${op.doc.id}`;
    const key = `${id}\u0000${op.field}`;
    const held = this.held.get(key);
    if (held) held.by += op.by;
    else {
      this.held.set(key, { collection: op.collection, doc: op.doc, field: op.field, by: op.by });
      this.ids.add(id);
    }
    return true;
  }

  /** Takes out the held counts `op` could see, or all of them when `op` is undefined (the end of the write), for the caller to write. */
  release(op: ReadModelOp | undefined): HeldCount[] {
    if (this.held.size === 0) return [];
    if (op?.op === 'put' && !this.ids.has(`${op.collection}\u0000${op.doc.id}`)) return [];
    const out: HeldCount[] = [];
    for (const [key, held] of this.held) {
      if (op !== undefined && held.collection !== op.collection) continue;
      this.held.delete(key);
      this.ids.delete(`${held.collection}\u0000${held.doc.id}`);
      out.push(held);
    }
    return out;
  }
}
