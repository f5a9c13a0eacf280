import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { projections } from '../projections/index.js';
import { ProjectionRunner } from '../projections/runner.js';
import { KeyUsage } from './accounts/key-usage.js';
import { ErasureProcess } from './erasure/process.js';
import type { CommandContext } from './aggregate.js';
import type { Config } from './config.js';
import { catalog, type DomainEvent } from './domain-events.js';
import type { EventCatalog } from './event-catalog.js';
import { offlineGeo, type GeoLookup } from './infra/geo.js';
import { deriveKeys, type DerivedKeys } from './infra/keys.js';
import type { EventStore } from './infra/event-store/port.js';
import { createIdGenerator, secureRandom, systemClock, type Clock, type IdGenerator, type RandomBytes } from './infra/ids.js';
import type { ReadModelStore } from './infra/read-models/port.js';
import { openRedis, type RedisLink } from './infra/redis.js';
import { loadOrCreateSecret } from './infra/secret.js';
import { Metrics } from './http/metrics.js';
import { StateCache } from './state-cache.js';

/** Everything a command, a query or a route needs, built once per process. */
export interface Services {
  config: Config;
  events: EventStore;
  readModels: ReadModelStore;
  projections: ProjectionRunner;
  /** Erases what deletions and erasure requests name, from the event feed. */
  erasure: ErasureProcess;
  /** How long a deletion's reply waits for its erasure before answering 202. */
  erasureWaitMs: number;
  commands: CommandContext;
  keyUsage: KeyUsage;
  clock: Clock;
  ids: IdGenerator;
  random: RandomBytes;
  keys: DerivedKeys;
  geo: GeoLookup;
  catalog: EventCatalog<DomainEvent>;
  logger: FastifyBaseLogger;
  metrics: Metrics;
  /** Shared rate-limit counters (REDIS_URL), else none: counters stay in memory. */
  redis?: RedisLink;
  /** The window of the plan rates (a minute; tests shorten it). */
  rateWindowMs: number;
  /** Runs the projections and the erasure process live (the server; the admin CLI runs them on demand). */
  start(): void;
  close(): Promise<void>;
}

export interface ServiceOptions {
  clock?: Clock;
  ids?: IdGenerator;
  random?: RandomBytes;
  geo?: GeoLookup;
  logger?: FastifyBaseLogger;
  /** How long a command waits for the read models before replying anyway. */
  projectionWaitMs?: number;
  /** How long a deletion waits for its erasure before answering 202. */
  erasureWaitMs?: number;
  rateWindowMs?: number;
  /** The weight of aggregate states kept in memory between commands (JSON bytes; default 64 MB). */
  stateCacheBytes?: number;
}

const STATE_CACHE_BYTES = 64 * 1024 * 1024;

export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, destination?: NodeJS.WritableStream): FastifyBaseLogger {
  return pino(
    {
      level: config.LOG_LEVEL,
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'api_key', 'secret'], censor: '[redacted]' },
    },
    destination as pino.DestinationStream | undefined,
  );
}

async function openEventStore(config: Config, logger: FastifyBaseLogger): Promise<EventStore> {
  if (config.EVENTSTORE_URL) {
    const { openKurrentEventStore } = await import('./infra/event-store/kurrent.js');
    return openKurrentEventStore(config.EVENTSTORE_URL);
  }
  const { openSqliteEventStore } = await import('./infra/event-store/sqlite.js');
  return openSqliteEventStore(config.DATA_DIR, logger);
}

async function openReadModels(config: Config, logger: FastifyBaseLogger): Promise<ReadModelStore> {
  if (config.MONGODB_URL) {
    const { openMongoReadModels } = await import('./infra/read-models/mongo.js');
    return openMongoReadModels(config.MONGODB_URL);
  }
  const { openSqliteReadModels } = await import('./infra/read-models/sqlite.js');
  return openSqliteReadModels(config.DATA_DIR, logger);
}

export async function openServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const logger = options.logger ?? createLogger(config);
  const events = await openEventStore(config, logger);
  let readModels: ReadModelStore;
  try {
    readModels = await openReadModels(config, logger);
  } catch (error) {
    await events.close();
    throw error;
  }
  let redis: RedisLink | undefined;
  try {
    redis = config.REDIS_URL ? await openRedis(config.REDIS_URL, logger) : undefined;
  } catch (error) {
    await Promise.allSettled([events.close(), readModels.close()]);
    throw new Error(`cannot reach Redis: ${(error as Error).message}`);
  }
  const metrics = new Metrics();
  const runner = new ProjectionRunner(events, readModels, catalog, projections, logger, {
    // Append to readable: what a client waits for after a write.
    onApplied: (batch) => {
      const now = Date.now();
      for (const event of batch) metrics.observe('feedback_projection_lag_ms', now - Date.parse(event.recordedAt));
    },
  });
  await runner.init();
  const clock = options.clock ?? systemClock;
  const waitMs = options.projectionWaitMs ?? 5000;
  const erasure = new ErasureProcess(events, readModels, catalog, clock, logger, {
    // Expunged once the projections deleted the rows too: they share the SQLite file with the events.
    afterErasure: async (position) => {
      await runner.reach(position, waitMs);
      await Promise.all([events.expunge(), readModels.expunge()]);
    },
  });
  await erasure.init();
  await readModels.ensureCollections(KeyUsage.collections);
  const secret = config.SECRET ?? loadOrCreateSecret(config.DATA_DIR);
  return {
    config,
    events,
    readModels,
    projections: runner,
    erasure,
    erasureWaitMs: options.erasureWaitMs ?? 10_000,
    commands: {
      events,
      catalog,
      states: new StateCache(options.stateCacheBytes ?? STATE_CACHE_BYTES),
      awaitProjections: async (position) => {
        if (!(await runner.reach(position, waitMs))) {
          logger.warn({ position: String(position) }, 'read models did not catch up in time; replying anyway');
        }
      },
    },
    keyUsage: new KeyUsage(readModels, clock, logger),
    clock,
    ids: options.ids ?? createIdGenerator(),
    random: options.random ?? secureRandom,
    keys: deriveKeys(secret),
    geo: options.geo ?? offlineGeo(logger),
    catalog,
    logger,
    metrics,
    ...(redis ? { redis } : {}),
    rateWindowMs: options.rateWindowMs ?? 60_000,
    start() {
      runner.start();
      erasure.start();
    },
    async close() {
      await erasure.stop();
      await runner.stop();
      await Promise.allSettled([events.close(), readModels.close(), redis?.close()]);
    },
  };
}
