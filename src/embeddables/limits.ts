import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Plan } from '../accounts/plans.js';
import type { Context } from '../kernel/context.js';
import type { Settings } from './settings.js';
import type { Kind } from './errors.js';
import { ownerPlan } from './queries.js';

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
export async function limitSubmissions(request: FastifyRequest, reply: FastifyReply, kind: Kind, id: string, settings: Settings, plan: Plan): Promise<void> {
  if (plan === 'free' || !settings.rate_limit) return;
  const { max, window_seconds } = settings.rate_limit;
  const { limits } = request.server;
  await limits.take(request, reply, { key: `object:${kind}:${id}:${limits.client(request)}`, max, windowMs: window_seconds * 1000 }, false);
}
