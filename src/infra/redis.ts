import type { FastifyBaseLogger } from 'fastify';
import type { Redis } from 'ioredis';

/**
 * At most this long for one command by default (REDIS_TIMEOUT_MS): a request
 * counted in Redis must never wait on it for long, and a command that takes
 * longer means Redis is away.
 */
export const REDIS_COMMAND_TIMEOUT_MS = 100;

/** How often a Redis known to be away is asked whether it is back. */
const PROBE_EVERY_MS = 500;

/**
 * The shared Redis and whether it is reachable. Callers skip Redis while it
 * is away instead of waiting on it; the first failure of an outage is logged,
 * and so is the return.
 */
export class RedisLink {
  #reachable = true;
  #probe: NodeJS.Timeout | undefined;
  #closing = false;

  constructor(
    readonly client: Redis,
    private readonly logger: Pick<FastifyBaseLogger, 'warn'>,
  ) {
    // The client reports each failed reconnection; one outage is one line.
    client.on('error', (error: Error) => this.lost(error));
    client.on('close', () => {
      if (!this.#closing) this.lost(new Error('connection closed'));
    });
    client.on('ready', () => this.#back());
  }

  get reachable(): boolean {
    return this.#reachable;
  }

  /** A command failed or timed out: until Redis answers again, callers do without it. */
  lost(error: Error): void {
    if (!this.#reachable || this.#closing) return;
    this.#reachable = false;
    this.logger.warn({ err: error }, 'Redis is unreachable; rate limits are counted in memory until it is back');
    // A hung server keeps its connection "ready", so only a command can tell it answers again.
    this.#probe = setInterval(() => void this.check(), PROBE_EVERY_MS);
    this.#probe.unref();
  }

  /** Asks Redis (within the command timeout) and records the answer. */
  async check(): Promise<boolean> {
    try {
      await this.client.ping();
      this.#back();
    } catch (error) {
      this.lost(error as Error);
    }
    return this.#reachable;
  }

  async close(): Promise<void> {
    this.#closing = true;
    clearInterval(this.#probe);
    // QUIT needs a connection; without one there is nothing to close gracefully.
    await this.client.quit().catch(() => this.client.disconnect());
  }

  #back(): void {
    if (this.#reachable || this.#closing) return;
    this.#reachable = true;
    clearInterval(this.#probe);
    this.#probe = undefined;
    // At the outage's level, so whoever saw it begin sees it end.
    this.logger.warn('Redis is reachable again; rate limits are counted in Redis');
  }
}

/** Connects to Redis at start (a wrong REDIS_URL stops the start); later outages are survived. */
export async function openRedis(url: string, logger: Pick<FastifyBaseLogger, 'warn'>, commandTimeout = REDIS_COMMAND_TIMEOUT_MS): Promise<RedisLink> {
  const { Redis } = await import('ioredis');
  const client = new Redis(url, {
    connectTimeout: 500,
    commandTimeout,
    // No offline queue: while the connection is down a command fails at once
    // instead of waiting for a reconnection (seconds) in the client.
    enableOfflineQueue: false,
    // And commands in flight when the connection drops fail at once too, rather than being retried.
    maxRetriesPerRequest: 0,
    lazyConnect: true,
  });
  try {
    await client.connect();
  } catch (error) {
    // Or the client keeps reconnecting in the background and holds the process open.
    client.disconnect();
    throw error;
  }
  return new RedisLink(client, logger);
}
