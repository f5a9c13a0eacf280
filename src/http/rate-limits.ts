import rateLimit, { type FastifyRateLimitStore, type FastifyRateLimitStoreCtor } from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ownerPlan, type Plan } from '../accounts/plans.js';
import { AppError } from '../kernel/errors.js';
import type { RedisLink } from '../infra/redis.js';
import type { Context } from '../kernel/context.js';
import { rateLimitedAddress } from './client-address.js';
import type { App } from './instance.js';

/** D4: requests a minute by the plan of the key's account, or of the public object's owner. */
export const PLAN_RATES: Record<Plan, number> = { free: 60, pro: 300, business: 1000 };

/**
 * The dashboard's JSON endpoints (`/dashboard/api/*`), requests a minute: per
 * session, and per account across all its sessions. The same on every plan:
 * the dashboard is every plan's, and a page of it makes a few requests.
 */
export const DASHBOARD_RATES = { session: 300, account: 600 } as const;

/** One counter: what is counted, how many are allowed, over how long. */
export interface Bucket {
  key: string;
  max: number;
  windowMs: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    limits: Limits;
  }
  interface FastifyRequest {
    bucket?: Bucket;
  }
}

type Check = ReturnType<App['createRateLimit']>;

/** The X-RateLimit-* headers of a counted reply. */
export type RateLimitHeaders = Partial<Record<'x-ratelimit-limit' | 'x-ratelimit-remaining' | 'x-ratelimit-reset', string>>;

/** What the rate-limit plugin reads of a request besides its bucket: no route, no group. */
const NO_ROUTE_OPTIONS = { config: {} };

export class Limits {
  constructor(
    private readonly check: Check,
    private readonly services: Pick<Context, 'metrics' | 'rateWindowMs'>,
  ) {}

  /** The plan's bucket for a key, an owner's visitor, or (unknown caller) an address. */
  plan(key: string, plan: Plan): Bucket {
    return { key, max: PLAN_RATES[plan], windowMs: this.services.rateWindowMs };
  }

  /** A dashboard session's requests to the JSON endpoints. */
  dashboardSession(sessionId: string): Bucket {
    return { key: `dashboard-session:${sessionId}`, max: DASHBOARD_RATES.session, windowMs: this.services.rateWindowMs };
  }

  /** Every dashboard session of one account, together. */
  dashboardAccount(accountId: string): Bucket {
    return { key: `dashboard-account:${accountId}`, max: DASHBOARD_RATES.account, windowMs: this.services.rateWindowMs };
  }

  /** A caller we cannot tie to an account (a refused key, an unknown object): its address, at the lowest rate. */
  address(request: FastifyRequest): Bucket {
    return this.plan(`address:${this.client(request)}`, 'free');
  }

  /** The address every per-address limit counts the request under (IPv6: its /64). */
  client(request: FastifyRequest): string {
    return rateLimitedAddress(request.ip);
  }

  /**
   * Counts the request in the bucket; over the limit it is 429 `rate_limited`
   * with Retry-After. The plan's bucket sets the X-RateLimit-* headers of a
   * counted reply; a refused one carries those of the bucket that refused it
   * (an object's own `rate_limit`, say), not the plan's room left.
   */
  async take(request: FastifyRequest, reply: FastifyReply, bucket: Bucket, headers = true): Promise<void> {
    request.bucket = bucket;
    const result = await this.check(request);
    if (result.isAllowed) return;
    if (headers || result.isExceeded) {
      reply.header('x-ratelimit-limit', result.max);
      reply.header('x-ratelimit-remaining', Math.max(0, result.remaining));
      reply.header('x-ratelimit-reset', result.ttlInSeconds);
    }
    if (result.isExceeded) {
      reply.header('retry-after', result.ttlInSeconds);
      this.services.metrics.increment('feedback_rate_limited_total');
      throw new AppError('rate_limited', `Rate limit exceeded: ${result.max} requests per ${Math.round(result.timeWindow / 1000)} s; retry in ${result.ttlInSeconds} s`);
    }
  }

  /**
   * Counts a request answered before fastify's request cycle (displays and
   * starts): the X-RateLimit-* headers of a counted reply, or null when the
   * bucket is over its limit, which the caller then leaves to `take` (a
   * window over its limit stays over it however often it is counted again).
   */
  async count(bucket: Bucket): Promise<RateLimitHeaders | null> {
    const result = await this.check({ bucket, routeOptions: NO_ROUTE_OPTIONS } as unknown as FastifyRequest);
    if (result.isAllowed) return {};
    if (result.isExceeded) return null;
    return { 'x-ratelimit-limit': String(result.max), 'x-ratelimit-remaining': String(Math.max(0, result.remaining)), 'x-ratelimit-reset': String(result.ttlInSeconds) };
  }
}

/**
 * D4: public requests count per (owner, client address: IPv6 by its /64) at the owner's plan
 * rate; requests about objects that do not exist count per address, at the
 * lowest rate, so probing for ids is throttled. Answers the owner's plan.
 */
export async function limitVisitor(services: Context, request: FastifyRequest, reply: FastifyReply, ownerId: string | null): Promise<Plan> {
  const { limits } = request.server;
  if (ownerId === null) {
    await limits.take(request, reply, limits.address(request));
    return 'free';
  }
  const plan = await ownerPlan(services, ownerId);
  await limits.take(request, reply, limits.plan(`visitor:${ownerId}:${limits.client(request)}`, plan));
  return plan;
}

/** Pro and Business: the object's own per-address limit on submissions (`settings.rate_limit`). */
export async function limitSubmissions(request: FastifyRequest, reply: FastifyReply, kind: string, id: string, settings: { rate_limit?: { max: number; window_seconds: number } | null | undefined }, plan: Plan): Promise<void> {
  if (plan === 'free' || !settings.rate_limit) return;
  const { max, window_seconds } = settings.rate_limit;
  const { limits } = request.server;
  await limits.take(request, reply, { key: `object:${kind}:${id}:${limits.client(request)}`, max, windowMs: window_seconds * 1000 }, false);
}

interface Count {
  current: number;
  /** Milliseconds until the counter's window ends. */
  ttl: number;
}

interface Window {
  key: string;
  count: number;
  endsAt: number;
}

/** Ended windows dropped at each count at most: more than the one a count may add, so none is left behind for long. */
const DROPPED_PER_COUNT = 4;

/**
 * A fixed window per key, started by the key's first request. A live window
 * is never dropped to make room, or a flood of requests from other addresses
 * would flush a limited client's count (a 1-a-day object limit among them):
 * memory is bounded by time instead. The windows wait in a heap by when they
 * end, and every count drops the few at its top that have ended, so no count
 * walks the whole map (a sweep of a few hundred thousand visitors' windows
 * held every request of the process for milliseconds), however many window
 * lengths the objects' own limits use.
 */
export class MemoryCounters {
  readonly #windows = new Map<string, Window>();
  /** Every window not yet dropped, soonest end first: a binary heap. */
  readonly #ending: Window[] = [];

  /** Windows follow real time, as Redis's expiries do, so either store counts the same (a clock stepping back may see an ended window as live again, as Redis would). */
  constructor(private readonly now: () => number) {}

  /** How many windows are held, ended ones not yet dropped among them. */
  get size(): number {
    return this.#windows.size;
  }

  incr(key: string, windowMs: number): Count {
    const now = this.now();
    this.#drop(now);
    let window = this.#windows.get(key);
    if (!window || window.endsAt <= now) {
      window = { key, count: 0, endsAt: now + windowMs };
      this.#windows.set(key, window);
      this.#push(window);
    }
    window.count += 1;
    return { current: window.count, ttl: window.endsAt - now };
  }

  #drop(now: number): void {
    const heap = this.#ending;
    for (let budget = DROPPED_PER_COUNT; budget > 0 && heap.length > 0 && heap[0]!.endsAt <= now; budget--) {
      const window = this.#pop();
      // The key may hold a newer window by now, further down the heap: only this one goes.
      if (this.#windows.get(window.key) === window) this.#windows.delete(window.key);
    }
  }

  #push(window: Window): void {
    const heap = this.#ending;
    let i = heap.push(window) - 1;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (heap[parent]!.endsAt <= window.endsAt) break;
      heap[i] = heap[parent]!;
      i = parent;
    }
    heap[i] = window;
  }

  #pop(): Window {
    const heap = this.#ending;
    const top = heap[0]!;
    const last = heap.pop()!;
    if (heap.length === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= heap.length) break;
      if (child + 1 < heap.length && heap[child + 1]!.endsAt < heap[child]!.endsAt) child++;
      if (heap[child]!.endsAt >= last.endsAt) break;
      heap[i] = heap[child]!;
      i = child;
    }
    heap[i] = last;
    return top;
  }
}

/** INCR and the window's expiry in one step, so no counter is left without one. */
const REDIS_INCR = `
local current = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if current == 1 or ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {current, ttl}
`;

const NAMESPACE = 'feedback-rate-';

/**
 * Counts in Redis while it is reachable, else in memory: a request never
 * waits on a Redis that is away (the link fails its commands within the
 * command timeout and is skipped until it answers again), and limits still
 * hold, per process, meanwhile.
 */
function countersStore(redis: RedisLink | undefined, memory: MemoryCounters): FastifyRateLimitStoreCtor {
  return class CountersStore implements FastifyRateLimitStore {
    incr(key: string, callback: (error: Error | null, result?: Count) => void, windowMs: number): void {
      if (!redis?.reachable) return callback(null, memory.incr(key, windowMs));
      redis.client.eval(REDIS_INCR, 1, NAMESPACE + key, windowMs).then(
        (result) => {
          const [current, ttl] = result as [number, number];
          callback(null, { current, ttl });
        },
        (error: Error) => {
          redis.lost(error);
          callback(null, memory.incr(key, windowMs));
        },
      );
    }

    /** Buckets name their own keys, so every route shares the one set of counters. */
    child(): FastifyRateLimitStore {
      return this;
    }
  };
}

/**
 * Counters live in Redis when REDIS_URL is set (shared by every instance),
 * else in memory; while Redis is away they are counted in memory.
 */
export async function registerRateLimits(app: App, services: Context): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    store: countersStore(services.redis, new MemoryCounters(() => Date.now())),
  });
  const check = app.createRateLimit({
    keyGenerator: (request) => request.bucket!.key,
    max: (request) => request.bucket!.max,
    timeWindow: (request) => request.bucket!.windowMs,
  });
  app.decorate('limits', new Limits(check, services));
}
