import { createRequire } from 'node:module';
import type { FastifyBaseLogger } from 'fastify';
import { pino } from 'pino';
import { ACCOUNTS } from '../projections/accounts.js';
import { FORM_SUMMARIES } from '../projections/forms.js';
import { projections, readSide } from '../projections/index.js';
import { POLL_SUMMARIES } from '../projections/polls.js';
import { WIDGET_SUMMARIES } from '../projections/widgets.js';
import { erasureState } from './erasure/state.js';
import { checkpointKey } from './kernel/feed/projection.js';
import { preparedInWorker } from './kernel/feed/replay.js';
import { ProjectionRunner } from './kernel/feed/runner.js';
import { CheckpointWatch } from './kernel/feed/watch.js';
import { KeyUsage } from './accounts/key-usage.js';
import { ErasureProcess } from './erasure/index.js';
import type { CommandContext } from './kernel/aggregate.js';
import type { Context, ProjectionState } from './kernel/context.js';
import type { Config } from './config.js';
import { catalog, personalData, type DomainEvent } from './domain-events.js';
import type { EventCatalog } from './kernel/event-catalog.js';
import { offlineGeo, type GeoLookup } from './infra/geo.js';
import { deriveKeys } from './infra/keys.js';
import type { EventStore } from './infra/event-store/port.js';
import { createIdGenerator, secureRandom, systemClock, type Clock, type IdGenerator, type RandomBytes } from './infra/ids.js';
import type { ReadModelStore } from './infra/read-models/port.js';
import { KEYS_FILE, type SubjectKeyStore } from './infra/subject-keys/port.js';
import { openSubjectKeysAt, type SubjectKeysAt } from './infra/subject-keys/open.js';
import { PersonalCodec } from './kernel/personal.js';
import { PersonalEventStore } from './kernel/personal-store.js';
import { ReservedSubjects } from './kernel/reserved-subjects.js';
import { join } from 'node:path';
import { RecentDocs } from './infra/read-models/recent.js';
import type { BackgroundCheckpoints } from './infra/sqlite.js';
import { openRedis, type RedisLink } from './infra/redis.js';
import { loadOrCreateSecret } from './infra/secret.js';
import { Metrics } from './infra/metrics.js';
import { Projector, type LeaseTiming } from './kernel/feed/lease.js';
import { requestFields } from './http/request-log.js';
import { SealingProcess, type SealingOptions } from './seals/process.js';
import { readPointInTime, type PointInTime } from './seals/point-in-time.js';
import { StateCache } from './kernel/state-cache.js';
import { StorageWatch } from './infra/storage.js';
import { WebhookDispatcher, type DispatcherOptions } from './webhooks/dispatcher.js';
import type { Resolve } from './webhooks/targets.js';
import { logMailer, smtpMailer, type Mailer } from './infra/mail.js';
import { recordedAddress } from './infra/address.js';
import { MailOutbox, type OutboxOptions } from './mail/outbox.js';
import { Notifier, type NotifierOptions } from './notifications/notifier.js';

/**
 * Everything a process builds once: the features' context, and the parts
 * only the composition (app.ts, main.ts, the admin CLI) drives.
 */
export interface Services extends Context {
  /** The point-in-time mark of a read-only store. */
  readOnly: PointInTime | undefined;
  catalog: EventCatalog<DomainEvent>;
  /** The projections of this process: live while it holds the projector lease, on demand in the admin CLI. */
  projections: ProjectionRunner;
  /** Erases what deletions and erasure requests name, from the event feed; runs beside the projections. */
  erasure: ErasureProcess;
  /** Seals the history (hash chain), under the projector lease beside the projections; on demand in the admin CLI. */
  seals: SealingProcess;
  /** Delivers webhooks from the event feed; runs beside the projections, under the projector lease. */
  webhooks: WebhookDispatcher;
  /** How webhook targets resolve when checked at creation (tests inject it; else the system's resolver). */
  webhookResolve?: Resolve;
  keyUsage: KeyUsage;
  /** Sends the service's mail (sign-in links, invitations) from the event feed; runs beside the projections, under the projector lease. */
  mail: MailOutbox;
  /** Decides when notifications are due (from the event feed) and puts them in the mail outbox; runs beside the projections, under the projector lease. */
  notifier: Notifier;
  /** Where mail goes: SMTP_URL's server, or the log. */
  mailer: Mailer;
  /**
   * Starts the server's part of ROLE: in `all` and `projector`, claims the
   * projector lease (resolving once this process holds it or stands by) and
   * runs the projections and the erasure process while it holds it; in
   * `api`, nothing runs. The admin CLI never starts: it runs them on demand.
   */
  start(): Promise<void>;
  close(): Promise<void>;
}

export type { ProjectionState };

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
  /** The projector lease's timing (tests shorten it). */
  leaseTiming?: LeaseTiming;
  /** How often the history is sealed (tests change it). */
  sealing?: SealingOptions;
  /** How webhooks resolve and send (tests inject both), and their retry schedule over WEBHOOK_RETRY_SCHEDULE. */
  webhooks?: Pick<DispatcherOptions, 'resolve' | 'send' | 'schedule' | 'timeoutMs' | 'replayClockSlackMs'>;
  /** Where mail goes (tests may give their own), and its retry schedule over MAIL_RETRY_SCHEDULE. */
  mail?: OutboxOptions & { mailer?: Mailer };
  /** How notifications gather responses and reach Slack (tests shorten and inject them). */
  notifications?: NotifierOptions;
  /** SECRET is the admin CLI's own for one reading command (the store keeps none): the key store learns no check of it. */
  oneRunSecret?: boolean;
}

/** The address links in mail point at: PUBLIC_BASE_URL, else where the server said it listens, else HOST and PORT. */
export function linkBase(config: Config): string {
  const chosen = config.PUBLIC_BASE_URL ?? recordedAddress(config.DATA_DIR) ?? `http://${config.HOST.includes(':') ? `[${config.HOST}]` : config.HOST}:${config.PORT}`;
  return chosen.replace(/\/+$/, '');
}

const STATE_CACHE_BYTES = 64 * 1024 * 1024;
/**
 * Events a rebuild prepares per batch on its second thread, and writes per
 * transaction. Half the runner's own catch-up batches: alternating rebuilds
 * of 1M events took 9.0-9.9 s at 500 against 9.6-10.2 s at 1000 in memory,
 * and 10.7-13.1 against 10.7-15.0 s on disk; 2500 was slower (10.6-11.6 s),
 * 100 too (10.4-11.8 s).
 */
const REPLAY_BATCH = 500;
/**
 * Positions a rebuild writes from this thread while its second thread starts
 * (see the runner's preparedHeadStart). Each costs this thread the preparing
 * too, two to three times an event written after: about the thread's start
 * on this machine, not more.
 */
const REPLAY_HEAD_START = 10_000;

/**
 * How long a public request's first checks may use an object's summary or
 * an account another process wrote (this one's own writes are read afresh
 * at once). Reading both on every request was a tenth of a loaded server's
 * time: kept this long, 3516, 3741 and 3533 submissions a second against
 * 3174, 3232 and 3270 (32 connections, alternating).
 */
const RECENT_MS = 100;

/** pino-pretty, loaded only where a person reads the log (a terminal), not by every process that starts. */
const prettyStream = (options: import('pino-pretty').PrettyOptions): NodeJS.WritableStream =>
  (createRequire(import.meta.url)('pino-pretty') as (options: import('pino-pretty').PrettyOptions) => NodeJS.WritableStream)(options);

/** Lines for a person at a terminal, JSON for everything that collects them. */
export function logFormat(stdout: { isTTY?: boolean }): 'pretty' | 'json' {
  return stdout.isTTY ? 'pretty' : 'json';
}

/**
 * A request is logged by requestFields: never its address (D10: the request
 * log says `ip_hash`, see http/request-log.ts), its headers, or a credential
 * in its URL.
 */
export function createLogger(config: Pick<Config, 'LOG_LEVEL'>, destination?: NodeJS.WritableStream): FastifyBaseLogger {
  const stream = destination ?? (logFormat(process.stdout) === 'pretty' ? prettyStream({ colorize: true, sync: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' }) : undefined);
  return pino(
    {
      level: config.LOG_LEVEL,
      serializers: { req: requestFields },
      redact: { paths: ['req.headers.authorization', 'req.headers.cookie', 'api_key', 'secret'], censor: '[redacted]' },
    },
    stream as pino.DestinationStream | undefined,
  );
}

async function openEventStore(config: Config, logger: FastifyBaseLogger): Promise<EventStore> {
  if (config.EVENTSTORE_URL) {
    const { openKurrentEventStore } = await import('./infra/event-store/kurrent.js');
    return openKurrentEventStore(config.EVENTSTORE_URL, { deadlineMs: config.STORE_TIMEOUT_MS });
  }
  const { openSqliteEventStore } = await import('./infra/event-store/sqlite.js');
  return openSqliteEventStore(config.DATA_DIR, logger, { waitMs: config.STORE_TIMEOUT_MS });
}

async function openReadModels(config: Config, logger: FastifyBaseLogger): Promise<ReadModelStore> {
  if (config.MONGODB_URL) {
    const { openMongoReadModels } = await import('./infra/read-models/mongo.js');
    return openMongoReadModels(config.MONGODB_URL, { timeoutMs: config.STORE_TIMEOUT_MS });
  }
  const { openSqliteReadModels } = await import('./infra/read-models/sqlite.js');
  return openSqliteReadModels(config.DATA_DIR, logger, config.STORE_TIMEOUT_MS);
}

/** The id prefixes of the subjects personal fields are sealed under (responses, votes), whose ids are made ahead with their keys. */
const SUBJECT_PREFIXES = ['rsp', 'vote'];

/**
 * Where the subject keys are: beside the read models (their own MongoDB
 * collection, or their own file beside the embedded store). A point-in-time
 * copy reads those of the store it was copied from, never a copy of them:
 * what is erased there after the copy was made cannot be read here either.
 */
export function subjectKeysAt(config: Config, readOnly: PointInTime | undefined): SubjectKeysAt {
  // Bounded as every other store call is (STORE_TIMEOUT_MS).
  if (readOnly) return { kind: 'sqlite', path: readOnly.key_store ?? join(config.DATA_DIR, KEYS_FILE), readonly: true, waitMs: config.STORE_TIMEOUT_MS };
  if (config.MONGODB_URL) return { kind: 'mongodb', url: config.MONGODB_URL, timeoutMs: config.STORE_TIMEOUT_MS };
  return { kind: 'sqlite', path: join(config.DATA_DIR, KEYS_FILE), readonly: false, waitMs: config.STORE_TIMEOUT_MS };
}

async function openSubjectKeys(config: Config, readOnly: PointInTime | undefined): Promise<SubjectKeyStore> {
  return openSubjectKeysAt(subjectKeysAt(config, readOnly));
}

export async function openServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const logger = options.logger ?? createLogger(config);
  const readOnly = readPointInTime(config.DATA_DIR);
  if (readOnly && (config.EVENTSTORE_URL || config.MONGODB_URL)) {
    throw new Error(`DATA_DIR holds a point-in-time store (as of ${readOnly.until}): serve it without EVENTSTORE_URL and MONGODB_URL`);
  }
  const secret = config.SECRET ?? loadOrCreateSecret(config.DATA_DIR);
  const storedEvents = await openEventStore(config, logger);
  let readModels: ReadModelStore;
  let events: PersonalEventStore;
  try {
    readModels = await openReadModels(config, logger);
  } catch (error) {
    await storedEvents.close();
    throw error;
  }
  try {
    const codec = new PersonalCodec(personalData, await openSubjectKeys(config, readOnly), secret, readOnly ? { freshMs: 0 } : {});
    try {
      await codec.checkSecret({ readonly: readOnly !== undefined || options.oneRunSecret === true });
    } catch (error) {
      await codec.keys.close();
      throw error;
    }
    events = new PersonalEventStore(storedEvents, codec);
  } catch (error) {
    await Promise.allSettled([storedEvents.close(), readModels.close()]);
    throw error;
  }
  let redis: RedisLink | undefined;
  try {
    redis = config.REDIS_URL ? await openRedis(config.REDIS_URL, logger, config.REDIS_TIMEOUT_MS) : undefined;
  } catch (error) {
    await Promise.allSettled([events.close(), readModels.close()]);
    throw new Error(`cannot reach Redis: ${(error as Error).message}`);
  }
  // A submission's response or vote id comes with its key stored ahead, so its append waits for no write of the key store.
  const reserved = readOnly
    ? undefined
    : new ReservedSubjects(events.codec, options.ids ?? createIdGenerator(), SUBJECT_PREFIXES, {
        onError: (error) => logger.warn({ err: error }, 'could not reserve or release subject keys; submissions store their keys themselves meanwhile'),
      });
  const metrics = new Metrics();
  const recent = new RecentDocs(readModels, [WIDGET_SUMMARIES.collection, FORM_SUMMARIES.collection, POLL_SUMMARIES.collection, ACCOUNTS], RECENT_MS);
  const runner = new ProjectionRunner(events, readModels, catalog, projections, logger, {
    onWritten: (ops) => recent.written(ops),
    processStates: [erasureState],
    // A rebuild of the embedded store reads and projects on a second thread while this one writes.
    ...(config.EVENTSTORE_URL ? {} : { prepared: preparedInWorker(config.DATA_DIR, REPLAY_BATCH, readSide, { secret, keys: subjectKeysAt(config, readOnly) }), preparedHeadStart: REPLAY_HEAD_START }),
    // Append to readable: what a client waits for after a write.
    onApplied: (batch) => {
      const now = Date.now();
      for (const event of batch) metrics.observe('feedback_projection_lag_ms', now - Date.parse(event.recordedAt));
    },
  });
  // Every role reads these; emptying a projection new to the store is left to whoever applies it (runner.init).
  await readModels.ensureCollections([...projections.flatMap((p) => p.collections), ...KeyUsage.collections]);
  // A point-in-time copy answers as of its moment: what is closed by then, the last 30 days to then, the sessions live then.
  const clock = readOnly ? () => new Date(readOnly.until) : (options.clock ?? systemClock);
  const waitMs = options.projectionWaitMs ?? 5000;
  const seals = new SealingProcess(events, catalog, clock, logger, options.sealing);
  const erasure = new ErasureProcess(events, readModels, catalog, clock, logger, {
    // Expunged once the projections deleted the rows too: they share the SQLite file with the events.
    afterErasure: async (position) => {
      await runner.reach(position, waitMs);
      await Promise.all([events.expunge(), readModels.expunge()]);
    },
    ...(config.SEALS === 'on' ? { beforeErasure: async () => void (await seals.sealAll()) } : {}),
    forgetKeys: (subjects) => events.codec.forget(subjects),
  });
  await erasure.init();
  const keys = deriveKeys(secret);
  const states = new StateCache(options.stateCacheBytes ?? STATE_CACHE_BYTES);
  const commands: CommandContext = {
    events,
    catalog,
    states,
    awaitProjections: async (position) => {
      if (!(await reach.projections(position, waitMs))) {
        logger.warn({ position: String(position) }, 'read models did not catch up in time; replying anyway');
      }
    },
  };
  const schedule = options.webhooks?.schedule ?? config.WEBHOOK_RETRY_SCHEDULE;
  const webhooks = new WebhookDispatcher(events, readModels, catalog, commands, keys.webhookSecrets, clock, logger, {
    ...options.webhooks,
    ...(schedule ? { schedule } : {}),
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
  });
  await webhooks.init();
  const mailer = options.mail?.mailer ?? (config.SMTP_URL ? smtpMailer(config.SMTP_URL, config.MAIL_FROM) : logMailer(logger));
  const mailSchedule = options.mail?.schedule ?? config.MAIL_RETRY_SCHEDULE;
  const mail = new MailOutbox(events, readModels, catalog, mailer, { base: () => linkBase(config), key: keys.loginLinks }, clock, logger, {
    reveal: (docs) => events.codec.reveal(docs),
    ...options.mail,
    ...(mailSchedule ? { schedule: mailSchedule } : {}),
  });
  await mail.init();
  const notifier = new Notifier(events, readModels, catalog, { poke: () => mail.poke(), base: () => linkBase(config) }, clock, logger, {
    ...(schedule ? { schedule } : {}),
    allowPrivate: config.WEBHOOK_ALLOW_PRIVATE,
    ...(options.webhooks?.resolve ? { resolve: options.webhooks.resolve } : {}),
    ...(options.webhooks?.send ? { send: options.webhooks.send } : {}),
    ...options.notifications,
  });
  await notifier.init();
  const projector =
    config.ROLE === 'api' || readOnly
      ? undefined
      : new Projector(readModels, runner, erasure, logger, {
          ...(options.leaseTiming ? { timing: options.leaseTiming } : {}),
          beside: config.SEALS === 'on' ? [webhooks, mail, notifier, seals] : [webhooks, mail, notifier],
        });
  const watch = new CheckpointWatch(readModels, logger);
  const stored = { projections: watch.of(projections.map(checkpointKey)), erasure: watch.of([checkpointKey(erasureState)]) };
  /** Set by start(): a server waits for the projections; the admin CLI runs them itself. */
  let serving = false;
  /** A server's checkpoint thread, where either store is the embedded file. */
  let checkpoints: BackgroundCheckpoints | undefined;
  /** The head of the feed when the server started, and whether the stored checkpoints have reached it since. */
  let startHead = 0n;
  let caughtUpStored = false;

  /** Waits for this process's own consumer while it holds the lease; else, or once it lost it, for the stored checkpoint. */
  const reachEither = async (own: ProjectionRunner | ErasureProcess, watched: typeof stored.projections, position: bigint, timeoutMs: number): Promise<boolean> => {
    if (!serving) return own.reach(position, timeoutMs);
    // Halted here: the event stops every projector of this version, so there is nothing to wait for.
    if (own.halted && position >= own.halted.position) return false;
    const deadline = Date.now() + timeoutMs;
    if (projector?.holding && (await own.reach(position, timeoutMs))) return true;
    return watched.wait(position, Math.max(0, deadline - Date.now()));
  };
  const reach = {
    projections: (position: bigint, timeoutMs: number) => reachEither(runner, stored.projections, position, timeoutMs),
    erasure: (position: bigint, timeoutMs: number) => reachEither(erasure, stored.erasure, position, timeoutMs),
  };

  return {
    config,
    readOnly,
    events,
    personal: events.codec,
    readModels,
    projections: runner,
    erasure,
    seals,
    projector,
    reach,
    async projectionState() {
      if (!serving || projector?.holding || runner.halted) return { position: runner.position, caughtUp: runner.caughtUp, halted: runner.halted };
      // Unreadable now: the last read stands, and /readyz reports the read models unreachable anyway.
      await watch.refresh().catch(() => undefined);
      const position = stored.projections.position();
      caughtUpStored ||= position >= startHead;
      return { position, caughtUp: caughtUpStored, halted: undefined };
    },
    erasureWaitMs: options.erasureWaitMs ?? 10_000,
    commands,
    webhooks,
    mail,
    notifier,
    mailer,
    ...(options.webhooks?.resolve ? { webhookResolve: options.webhooks.resolve } : {}),
    keyUsage: new KeyUsage(readModels, clock, logger, readOnly !== undefined),
    recent,
    clock,
    ids: reserved?.ids ?? options.ids ?? createIdGenerator(),
    random: options.random ?? secureRandom,
    keys,
    geo: options.geo ?? offlineGeo(logger),
    catalog,
    logger,
    metrics,
    storage: new StorageWatch(),
    ...(redis ? { redis } : {}),
    rateWindowMs: options.rateWindowMs ?? 60_000,
    async start() {
      serving = true;
      startHead = await events.headPosition();
      await projector?.start();
      if (!readOnly && (events.kind === 'sqlite' || readModels.kind === 'sqlite')) {
        const { checkpointInBackground } = await import('./infra/sqlite.js');
        checkpoints = checkpointInBackground(config.DATA_DIR, logger);
      }
    },
    async close() {
      await projector?.stop();
      await watch.close();
      // Also started by hand in some tests, without the lease.
      await seals.stop();
      await webhooks.stop();
      await notifier.stop();
      await mail.stop();
      mailer.close();
      await erasure.stop();
      await runner.stop();
      await checkpoints?.stop();
      await reserved?.close().catch((error: unknown) => logger.warn({ err: error }, 'could not delete the unused reserved subject keys; they open nothing'));
      await Promise.allSettled([events.close(), readModels.close(), redis?.close()]);
    },
  };
}
