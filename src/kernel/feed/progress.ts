/**
 * Those waiting for a consumer of the feed to reach a position: a command's
 * reply waits for the projections, a deletion's for the erasure process.
 * A wait answers true once the position is reached, false at its timeout, or
 * at once when the consumer is halted before the position (it will not move).
 */
export class Progress {
  private waiters: Array<{ position: bigint; settle: () => void }> = [];

  /**
   * @param reached the position the consumer has reached now
   * @param haltedAt the position of the event it stopped before, if it did
   */
  constructor(
    private readonly reached: () => bigint,
    private readonly haltedAt: () => bigint | undefined,
  ) {}

  wait(position: bigint, timeoutMs: number): Promise<boolean> {
    if (this.reached() >= position) return Promise.resolve(true);
    if (this.stuckBefore(position)) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        position,
        settle: () => {
          clearTimeout(timer);
          resolve(this.reached() >= position);
        },
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(waiter);
    });
  }

  /** The consumer moved on or halted: answers every wait that now has its answer. */
  changed(): void {
    const reached = this.reached();
    const ready = this.waiters.filter((w) => w.position <= reached || this.stuckBefore(w.position));
    if (ready.length === 0) return;
    this.waiters = this.waiters.filter((w) => !ready.includes(w));
    for (const waiter of ready) waiter.settle();
  }

  /** The consumer stopped: every wait answers now, with where it got to. */
  settleAll(): void {
    const all = this.waiters;
    this.waiters = [];
    for (const waiter of all) waiter.settle();
  }

  private stuckBefore(position: bigint): boolean {
    const halt = this.haltedAt();
    return halt !== undefined && position >= halt;
  }
}

/**
 * Lets timers and I/O (requests) run between two batches of a catch-up: the
 * stores answer synchronously under their promises, so a long catch-up would
 * otherwise hold the event loop until it ends.
 */
export const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
