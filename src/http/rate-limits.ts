import rateLimit from '@fastify/rate-limit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Plan } from '../accounts/plans.js';
import { AppError } from '../errors.js';
import type { Services } from '../services.js';
import type { App } from './instance.js';

/** D4: requests a minute by the plan of the key's account, or of the public object's owner. */
export const PLAN_RATES: Record<Plan, number> = { free: 60, pro: 300, business: 1000 };

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

export class Limits {
  constructor(
    private readonly check: Check,
    private readonly services: Pick<Services, 'metrics' | 'rateWindowMs'>,
  ) {}

  /** The plan's bucket for a key, an owner's visitor, or (unknown caller) an address. */
  plan(key: string, plan: Plan): Bucket {
    return { key, max: PLAN_RATES[plan], windowMs: this.services.rateWindowMs };
  }

  /** A caller we cannot tie to an account (a refused key, an unknown object): its address, at the lowest rate. */
  address(request: FastifyRequest): Bucket {
    return this.plan(`address:${request.ip}`, 'free');
  }

  /**
   * Counts the request in the bucket; over the limit it is 429 `rate_limited`
   * with Retry-After. The plan's bucket also sets the X-RateLimit-* headers.
   */
  async take(request: FastifyRequest, reply: FastifyReply, bucket: Bucket, headers = true): Promise<void> {
    request.bucket = bucket;
    const result = await this.check(request);
    if (result.isAllowed) return;
    if (headers) {
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
}

/**
 * Counters live in Redis when REDIS_URL is set (shared by every instance),
 * else in memory. A Redis outage lets requests through rather than failing
 * them (skipOnError), and is logged.
 */
export async function registerRateLimits(app: App, services: Services): Promise<void> {
  await app.register(rateLimit, {
    global: false,
    ...(services.redis ? { redis: services.redis, nameSpace: 'feedback-rate-' } : {}),
    skipOnError: true,
  });
  const check = app.createRateLimit({
    keyGenerator: (request) => request.bucket!.key,
    max: (request) => request.bucket!.max,
    timeWindow: (request) => request.bucket!.windowMs,
  });
  app.decorate('limits', new Limits(check, services));
}
