/** The last state built of one aggregate stream, and the revision it was built up to. */
export interface CachedState<State = unknown> {
  revision: bigint;
  state: State;
}

interface Entry extends CachedState {
  bytes: number;
}

// Maps and bigints have no JSON form of their own; without this a Map would measure as `{}`.
const measurable = (_key: string, value: unknown): unknown =>
  value instanceof Map ? [...value] : value instanceof Set ? [...value] : typeof value === 'bigint' ? value.toString() : value;

/** An entry's weight: the JSON length of its state, a stand-in for the memory it holds. */
export const stateBytes = (state: unknown): number => JSON.stringify(state, measurable)?.length ?? 0;

/**
 * The last state built of each aggregate stream, so a load reads only the
 * events after it. Bounded by a byte budget rather than a count, since one
 * form definition can weigh a megabyte: past the budget the least recently
 * used streams go. An entry is measured once, when it is stored (a new
 * revision), never on a hit. States are immutable values, so sharing them
 * is safe.
 */
export class StateCache {
  private readonly entries = new Map<string, Entry>();
  private total = 0;

  constructor(readonly budgetBytes: number) {}

  /** The weight of every entry held; never above the budget. */
  get bytes(): number {
    return this.total;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The stream's entry, which becomes the most recently used. */
  get<State>(streamId: string): CachedState<State> | undefined {
    const entry = this.entries.get(streamId);
    if (!entry) return undefined;
    this.entries.delete(streamId);
    this.entries.set(streamId, entry);
    return { revision: entry.revision, state: entry.state as State };
  }

  /**
   * Keeps a state built up to `revision`. A state older than the one held is
   * ignored (concurrent loads finish in any order), and one heavier than the
   * whole budget is not kept at all.
   */
  set(streamId: string, revision: bigint, state: unknown): void {
    const held = this.entries.get(streamId);
    if (held && held.revision >= revision) return;
    if (held) this.drop(streamId, held);
    const bytes = stateBytes(state);
    if (bytes > this.budgetBytes) return;
    this.entries.set(streamId, { revision, state, bytes });
    this.total += bytes;
    for (const [oldest, entry] of this.entries) {
      if (this.total <= this.budgetBytes) break;
      this.drop(oldest, entry);
    }
  }

  private drop(streamId: string, entry: Entry): void {
    this.entries.delete(streamId);
    this.total -= entry.bytes;
  }
}
