import { randomBytes } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import type { FastifyBaseLogger } from 'fastify';
import { systemClock, type Clock } from '../../infra/ids.js';
import type { FeedProcessor, HaltingFeedProcessor } from './processor.js';
import type { Fence, ReadModelStore } from '../../infra/read-models/port.js';

/** The lease whose holder applies the projections and runs the erasure process. */
export const PROJECTOR_LEASE = 'projector';

export interface LeaseTiming {
  /** How long a claim holds the lease: a holder that stops renewing is replaced this long after its last renewal. */
  ttlMs: number;
  /** How often the holder renews and a standby claims. */
  everyMs: number;
}

/**
 * A killed holder is replaced within ttl + every (6 s), or at a standby's
 * next claim when it ran on the same host (see `exited`); a holder whose
 * event loop stalls for up to ttl - every (4 s) keeps the lease.
 */
export const LEASE_TIMING: LeaseTiming = { ttlMs: 5000, everyMs: 1000 };

/**
 * Who claims: host, PID namespace and PID, so a standby on the same host can
 * tell that a holder's process is gone, and a random part, so a restarted
 * process reusing a PID is another holder.
 */
export function holderId(): string {
  return [hostname(), pidNamespace() ?? '-', process.pid, randomBytes(4).toString('hex')].join('/');
}

function pidNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/pid');
  } catch {
    return undefined;
  }
}

/**
 * True only for a holder that ran on this host, in this PID namespace, as a
 * process that no longer exists (killed, crashed). A PID is meaningful only
 * there: containers sharing a volume have PID namespaces of their own, and
 * any doubt (another host, no namespace to compare, a PID in use, even by a
 * newer process) answers false, which only means waiting for the expiry.
 */
export function exited(holder: string): boolean {
  const [host, namespace, pid] = holder.split('/');
  const ours = pidNamespace();
  if (host !== hostname() || ours === undefined || namespace !== ours) return false;
  const id = Number(pid);
  if (!Number.isSafeInteger(id) || id <= 0 || id === process.pid) return false;
  try {
    process.kill(id, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}


export interface ProjectorOptions {
  clock?: Clock;
  /** Processors that run only under the lease, beside the projections (webhooks, the seals of the history). */
  beside?: FeedProcessor[];
  timing?: LeaseTiming;
  holder?: string;
}

/**
 * One projector applies at a time, whatever the number of processes that
 * could: this one claims the lease, and while it holds it, renews it and runs
 * the projections and the erasure process under it (their writes are fenced:
 * once another holder took the lease over, they are refused and stop). A
 * standby claims again every `everyMs`. A clean stop releases the lease, so a
 * standby takes over at its next claim.
 *
 * A projector halted before an event this version cannot read gives the
 * lease up and claims it no more, so that a projector of a version that reads
 * the event (during a rolling upgrade) takes over instead of waiting behind it.
 */
export class Projector {
  readonly holder: string;
  /** True while this process holds the lease and applies. */
  holding = false;
  private readonly clock: Clock;
  private readonly timing: LeaseTiming;
  private timer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  /** Preparing and starting the work after a claim won: renewals go on meanwhile, however long it takes. */
  private taking: Promise<void> | undefined;
  private stopped = false;
  /** The end of the lease by the last claim that succeeded, by this process's clock. */
  private heldUntil = 0;
  private readonly beside: FeedProcessor[];

  constructor(
    private readonly readModels: ReadModelStore,
    private readonly runner: HaltingFeedProcessor,
    private readonly erasure: Omit<HaltingFeedProcessor, 'init'>,
    private readonly logger: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>,
    options: ProjectorOptions = {},
  ) {
    this.clock = options.clock ?? systemClock;
    this.timing = options.timing ?? LEASE_TIMING;
    this.holder = options.holder ?? holderId();
    this.beside = options.beside ?? [];
  }

  private get fence(): Fence {
    return { name: PROJECTOR_LEASE, holder: this.holder };
  }

  /** Claims once now (answering once this process works under the lease or stands by), then every `everyMs`. */
  async start(): Promise<void> {
    await this.claim();
    await this.taking;
  }

  private claim(): Promise<void> {
    this.claiming = this.claimOnce().finally(() => {
      this.claiming = undefined;
      if (this.stopped || this.gaveUp) return;
      this.timer = setTimeout(() => void this.claim(), this.timing.everyMs);
      // The HTTP server keeps a server process alive; a forgotten close must not.
      this.timer.unref();
    });
    return this.claiming;
  }

  private get gaveUp(): boolean {
    return this.runner.halted !== undefined && this.erasure.halted !== undefined;
  }

  private async claimOnce(): Promise<void> {
    if (this.gaveUp) {
      if (this.holding) {
        this.logger.warn({ holder: this.holder }, 'projections halted: giving the projector lease up to a version that reads the event');
        await this.release();
      }
      return;
    }
    const now = this.clock();
    let held: boolean;
    try {
      const replacing = this.holding ? undefined : await this.exitedHolder();
      held = await this.readModels.claimLease({ name: PROJECTOR_LEASE, holder: this.holder, now, ttlMs: this.timing.ttlMs, ...(replacing ? { replacing } : {}) });
      if (held) this.heldUntil = now.getTime() + this.timing.ttlMs;
    } catch (error) {
      // Unanswered: the lease is this process's only as long as the last claim said.
      held = this.holding && now.getTime() < this.heldUntil;
      this.logger.error({ err: error, holding: held }, 'could not claim or renew the projector lease');
    }
    // Taken even when stop() came meanwhile: stop() waits for the taking, then releases what it took.
    if (held) {
      if (!this.holding && !this.taking) this.taking = this.take().finally(() => (this.taking = undefined));
    } else if (this.holding) {
      this.logger.warn({ holder: this.holder }, 'the projector lease went to another process: this one stops applying');
      await this.stopWork();
    }
  }

  /** The holder to replace at once, when it is a process of this host that exited. */
  private async exitedHolder(): Promise<string | undefined> {
    const lease = await this.readModels.lease(PROJECTOR_LEASE);
    return lease && lease.holder !== this.holder && exited(lease.holder) ? lease.holder : undefined;
  }

  private async take(): Promise<void> {
    try {
      // Under the lease: a projection new to the store empties its collections now, not while another version applies to them.
      await this.runner.init();
    } catch (error) {
      this.logger.error({ err: error }, 'cannot prepare the projections; giving the projector lease up');
      await this.release();
      return;
    }
    this.logger.info({ holder: this.holder }, 'holding the projector lease: applying the projections and running the erasure process');
    // Each with a fence of its own: a store may keep one per consumer, so their writes do not contend.
    this.runner.start({ ...this.fence, consumer: 'projections' });
    this.erasure.start({ ...this.fence, consumer: 'erasure' });
    this.beside.forEach((process, i) => process.start({ ...this.fence, consumer: `beside-${i}` }));
    // Only now: whoever sees `holding` may wait for the live loops, which exist from here on.
    this.holding = true;
  }

  private async stopWork(): Promise<void> {
    this.holding = false;
    await Promise.all(this.beside.map((process) => process.stop()));
    // The erasure first: it waits for the projections to take what it erased.
    await this.erasure.stop();
    await this.runner.stop();
  }

  private async release(): Promise<void> {
    await this.stopWork();
    await this.readModels.releaseLease(PROJECTOR_LEASE, this.holder).catch((error: unknown) => {
      this.logger.error({ err: error }, 'could not release the projector lease; it runs out by itself');
    });
  }

  /** Stops claiming; when holding, stops the work and releases the lease, so a standby need not wait for it to run out. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.claiming;
    await this.taking;
    if (this.holding) await this.release();
  }
}
