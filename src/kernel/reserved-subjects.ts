import type { IdGenerator } from '../infra/ids.js';
import type { PersonalCodec } from './personal.js';

/** The most ids reserved in one write. */
export const RESERVE_BATCH = 256;
/** The fewest: a refill is one durable commit whatever its size. */
const MIN_BATCH = 16;
/** Ids taken of a prefix within about a second below which none is reserved: at that rate a commit per submission costs nothing worth saving. */
const MIN_RATE = 8;
/**
 * The oldest a reserved id may be when it is handed out: an id's time is
 * when it was made, and lists break ties between responses of the same
 * millisecond by id, so an id stays close to its use.
 */
export const RESERVED_MAX_AGE_MS = 5_000;
/** How long a reserved subject nothing was sealed under keeps its salt: an id handed out to a submission that was refused, or left in the pool. */
export const RESERVED_KEPT_MS = 30_000;

export interface ReservedSubjectsOptions {
  /** Milliseconds on a monotonic clock. */
  now?: () => number;
  /** What a background refill or release that failed reports; the submissions it would have served store their keys themselves. */
  onError?: (error: unknown) => void;
}

interface Pool {
  /** Ids made ahead, oldest first, each with when it was made. */
  ids: Array<{ id: string; at: number }>;
  refill: Promise<void> | undefined;
  /** Ids taken in this second and the one before: the rate the next refill is sized by. */
  second: number;
  thisSecond: number;
  lastSecond: number;
}

/**
 * Ids of new subjects (responses, votes) made ahead with their keys stored
 * ahead, so that a submission's first event is sealed without a write to
 * the key store: the salts of a batch are stored in one durable commit,
 * and an event sealed under one of its ids waits for that commit if it
 * comes first (PersonalCodec.reserve), which keeps the rule that a key is
 * durable before anything sealed under it is appended.
 *
 * A pool per prefix is refilled (one refill at a time) when it runs below
 * half of a batch sized by the ids taken in the last second, at most
 * RESERVE_BATCH; below MIN_RATE ids a second nothing is reserved and every
 * id is made as it is asked for (its key stored as its first event is
 * sealed). Ids are handed out in the order they were made, and only
 * within RESERVED_MAX_AGE_MS of it. Salts of subjects nothing was sealed
 * under (left in the pool, or handed out to a submission that was
 * refused) are deleted after RESERVED_KEPT_MS and on `close`; after a
 * crash they stay, opening nothing.
 */
export class ReservedSubjects {
  private readonly pools = new Map<string, Pool>();
  private readonly now: () => number;
  private readonly onError: (error: unknown) => void;
  private releasing: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly codec: Pick<PersonalCodec, 'reserve' | 'release' | 'oldestReserved'>,
    private readonly make: IdGenerator,
    prefixes: readonly string[],
    options: ReservedSubjectsOptions = {},
  ) {
    this.now = options.now ?? (() => performance.now());
    this.onError = options.onError ?? (() => undefined);
    for (const prefix of prefixes) this.pools.set(prefix, { ids: [], refill: undefined, second: 0, thisSecond: 0, lastSecond: 0 });
  }

  /** The id generator with the pooled prefixes served from their pools. */
  readonly ids: IdGenerator = (prefix) => {
    const pool = this.pools.get(prefix);
    return pool ? this.take(prefix, pool) : this.make(prefix);
  };

  /** Waits for what is under way, then deletes the salts of every subject still reserved. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.allSettled([...[...this.pools.values()].map((pool) => pool.refill), this.releasing]);
    for (const pool of this.pools.values()) pool.ids = [];
    await this.codec.release();
  }

  private take(prefix: string, pool: Pool): string {
    const now = this.now();
    const second = Math.floor(now / 1000);
    if (second !== pool.second) {
      pool.lastSecond = second === pool.second + 1 ? pool.thisSecond : 0;
      pool.thisSecond = 0;
      pool.second = second;
    }
    pool.thisSecond++;
    // Made too long ago to be handed out: left to be released.
    while (pool.ids.length > 0 && now - pool.ids[0]!.at > RESERVED_MAX_AGE_MS) pool.ids.shift();
    this.refill(prefix, pool, now);
    this.release(now);
    return pool.ids.shift()?.id ?? this.make(prefix);
  }

  private refill(prefix: string, pool: Pool, now: number): void {
    // Ids taken in the last second: this second's, and the share of the last one's still within it.
    const rate = pool.thisSecond + pool.lastSecond * (1 - (now % 1000) / 1000);
    if (this.closed || pool.refill || rate < MIN_RATE) return;
    const size = Math.min(RESERVE_BATCH, Math.max(MIN_BATCH, Math.ceil(rate)));
    if (pool.ids.length >= size / 2) return;
    const ids = Array.from({ length: size }, () => this.make(prefix));
    // Handed out at once: what is sealed under one waits for the batch's commit.
    for (const id of ids) pool.ids.push({ id, at: now });
    pool.refill = this.codec
      .reserve(ids)
      .catch((error: unknown) => {
        const failed = new Set(ids);
        pool.ids = pool.ids.filter(({ id }) => !failed.has(id));
        this.onError(error);
      })
      .finally(() => (pool.refill = undefined));
  }

  private release(now: number): void {
    const oldest = this.codec.oldestReserved();
    if (this.releasing || oldest === undefined || now - oldest < RESERVED_KEPT_MS) return;
    this.releasing = this.codec
      .release(now - RESERVED_KEPT_MS)
      .catch(this.onError)
      .finally(() => (this.releasing = undefined));
  }
}
