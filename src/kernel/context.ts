import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';
import type { EventStore } from '../infra/event-store/port.js';
import type { GeoLookup } from '../infra/geo.js';
import type { Clock, IdGenerator, RandomBytes } from '../infra/ids.js';
import type { DerivedKeys } from '../infra/keys.js';
import type { Metrics } from '../infra/metrics.js';
import type { RecentDocs } from '../infra/read-models/recent.js';
import type { ReadModelStore } from '../infra/read-models/port.js';
import type { RedisLink } from '../infra/redis.js';
import type { StorageWatch } from '../infra/storage.js';
import type { CommandContext } from './aggregate.js';
import type { EventCatalog } from './event-catalog.js';
import type { Halt } from './feed/halt.js';
import type { Projector } from './feed/lease.js';

/**
 * What a feature's commands, queries and routes are given: the stores, the
 * clock, ids and keys, settings and counters, built once per process. It
 * names no feature, so a feature depends on the kernel and never on the
 * composition that builds it; a feature that needs another's part (the
 * erasure process, key usage) says so in its own narrower type.
 */
export interface Context {
  config: Config;
  /** Set when DATA_DIR holds a point-in-time store (`admin rebuild --until`): served read-only, nothing runs. */
  readOnly: { until: string } | undefined;
  events: EventStore;
  readModels: ReadModelStore;
  /**
   * Opens the personal fields a read model keeps sealed (kernel/personal.ts)
   * as it serves them; documents whose key was erased are left out.
   */
  personal: { reveal<D extends Record<string, unknown>>(docs: D[]): Promise<D[]> };
  /** The objects' summaries and the accounts, kept a moment for the public requests' first checks (recent.ts). */
  recent: RecentDocs;
  commands: CommandContext;
  clock: Clock;
  ids: IdGenerator;
  random: RandomBytes;
  keys: DerivedKeys;
  geo: GeoLookup;
  catalog: EventCatalog;
  logger: FastifyBaseLogger;
  metrics: Metrics;
  /** Whether a write failed for lack of room, for readiness until there is room again. */
  storage: StorageWatch;
  /** Shared rate-limit counters (REDIS_URL), else none: counters stay in memory. */
  redis?: RedisLink;
  /** The window of the plan rates (a minute; tests shorten it). */
  rateWindowMs: number;
  /**
   * Waits until the projections, or the erasure process, have reached a
   * position, wherever they run: bounded by the timeout, answering whether
   * they got there. In a server that is a wait (for its own runner while it
   * holds the lease, else for the checkpoints the holder stores); in the admin
   * CLI, which has no live loop, the work is done here.
   */
  reach: { projections(position: bigint, timeoutMs: number): Promise<boolean>; erasure(position: bigint, timeoutMs: number): Promise<boolean> };
  /** How long a deletion's reply waits for its erasure before answering 202. */
  erasureWaitMs: number;
  /** When each API key was last used (accounts/key-usage.ts), written at most once a minute per key. */
  keyUsage: { touch(keyId: string): void; lastUsed(keyId: string): Promise<string | null> };
  /** The holder of the projector lease, or a standby for it (`all` and `projector`); none in an `api` process. */
  projector: Projector | undefined;
  /** Where the projections are as this process can tell, for /readyz. */
  projectionState(): Promise<ProjectionState>;
}

/** Where the projections are: this process's own while it applies them (or halted), else as the stored checkpoints say. */
export interface ProjectionState {
  position: bigint;
  /** Caught up once since start: with the store's head then. */
  caughtUp: boolean;
  halted: Halt | undefined;
}
