import type { ReadModelStore } from '../../infra/read-models/port.js';
import { Progress } from './progress.js';

/** Where the consumers named by a set of checkpoints have got to, as last read. */
export interface WatchedCheckpoints {
  /** The position every one of them has reached (0 before the first read). */
  position(): bigint;
  /** Resolves true once every one of them has reached the position, false at the timeout. */
  wait(position: bigint, timeoutMs: number): Promise<boolean>;
}

/** How often the checkpoints are read while anyone waits: a wait ends at most this late. */
const POLL_MS = 5;

/**
 * Follows consumers of the feed that run in another process (the projector)
 * through their checkpoints in the read-model store: an `api` process replies
 * to a command once they have reached its event. One read of the checkpoints
 * per interval wakes every waiter of the process, whatever their number, and
 * no read happens while nobody waits. On SQLite a read is a look at a
 * handful of rows in the shared file; on MongoDB it is one query of the
 * checkpoints collection (a few documents, by the primary) per interval and
 * process, only while commands are waiting.
 */
export class CheckpointWatch {
  private stored = new Map<string, bigint>();
  private readonly progresses: Progress[] = [];
  private waiting = 0;
  private polling: Promise<void> | undefined;
  private closed = false;
  private failing = false;

  constructor(
    private readonly readModels: Pick<ReadModelStore, 'checkpoints'>,
    private readonly logger: { warn(fields: object, message: string): void },
    private readonly pollMs = POLL_MS,
  ) {}

  /** The consumers behind these checkpoint names, as one. */
  of(names: string[]): WatchedCheckpoints {
    const position = () => names.reduce<bigint | undefined>((min, name) => {
      const reached = this.stored.get(name) ?? 0n;
      return min === undefined || reached < min ? reached : min;
    }, undefined) ?? 0n;
    // They halt in their own process: a wait here only ever ends by progress or timeout.
    const progress = new Progress(position, () => undefined);
    this.progresses.push(progress);
    return {
      position,
      wait: async (target, timeoutMs) => {
        if (this.closed) return position() >= target;
        this.waiting++;
        this.poll();
        try {
          return await progress.wait(target, timeoutMs);
        } finally {
          this.waiting--;
        }
      },
    };
  }

  /** Reads the checkpoints now and answers every wait they satisfy. */
  async refresh(): Promise<void> {
    this.stored = await this.readModels.checkpoints();
    for (const progress of this.progresses) progress.changed();
  }

  private poll(): void {
    if (this.polling) return;
    this.polling = (async () => {
      while (this.waiting > 0 && !this.closed) {
        await new Promise((resolve) => setTimeout(resolve, this.pollMs));
        try {
          await this.refresh();
          this.failing = false;
        } catch (error) {
          // Once per outage: the waits run into their timeouts meanwhile.
          if (!this.failing) this.logger.warn({ err: error }, 'cannot read the projection checkpoints; commands reply when their wait runs out');
          this.failing = true;
        }
      }
      this.polling = undefined;
    })();
  }

  /** Stops reading; every wait answers now with what was last read. */
  async close(): Promise<void> {
    this.closed = true;
    for (const progress of this.progresses) progress.settleAll();
    await this.polling;
  }
}
