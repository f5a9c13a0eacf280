import type { FastifyReply, FastifyRequest, onRequestAsyncHookHandler, RouteOptions } from 'fastify';
import { authenticate, type Caller } from '../accounts/authenticate.js';
import type { Plan, Scope } from '../accounts/plans.js';
import { AppError } from '../kernel/errors.js';
import { bearerOf, severalAuthorizations } from './bearer.js';
import type { Context } from '../kernel/context.js';

declare module 'fastify' {
  interface FastifyRequest {
    caller?: Caller;
  }
}

export interface KeyRequirement {
  scope: Scope;
  /** D4: API access is a Business feature; a route may name other plans. */
  plans?: Plan[];
}

/** Marks the hooks made by requireKey, so the OpenAPI document can name the bearer scheme on their routes. */
export const REQUIRES_KEY = Symbol('requires an API key');

/** Whether a route's onRequest hooks include requireKey. */
export const needsKey = (route: RouteOptions): boolean => [route.onRequest].flat().some((handler) => handler && REQUIRES_KEY in handler);

/**
 * The onRequest hook of every K endpoint: 401 without a valid key, then 429
 * over the account's rate, then 403 `plan_required`, then 403
 * `insufficient_scope`, in that order, all before the body is read or any
 * part of the request is validated: a caller without a key learns nothing of
 * the endpoint's schema, and a key's invalid requests count against its
 * account's rate.
 */
export function requireKey(services: Pick<Context, 'readModels' | 'keyUsage'>, requirement: KeyRequirement): onRequestAsyncHookHandler {
  const plans = requirement.plans ?? ['business'];
  const check = async (request: FastifyRequest, reply: FastifyReply) => {
    const presented = bearerOf(request);
    const caller = presented && presented !== 'several' ? await authenticate(services.readModels, presented) : null;
    const { limits } = request.server;
    if (!caller) {
      // Refused keys count against the address, so guessing keys is throttled too.
      await limits.take(request, reply, limits.address(request));
      if (presented === 'several') throw severalAuthorizations();
      throw new AppError('unauthorized', 'Missing or invalid API key: send `Authorization: Bearer svc_…`');
    }
    // Counted per account, not per key: an account's keys share its plan's rate, so more keys do not make more room.
    await limits.take(request, reply, limits.plan(`account:${caller.accountId}`, caller.plan));
    services.keyUsage.touch(caller.keyId);
    if (!plans.includes(caller.plan)) {
      throw new AppError('plan_required', `This endpoint needs the ${plans.join(' or ')} plan; the account is on ${caller.plan}`);
    }
    if (!caller.scopes.includes(requirement.scope)) {
      throw new AppError('insufficient_scope', `This endpoint needs the ${requirement.scope} scope`);
    }
    request.caller = caller;
  };
  return Object.assign(check, { [REQUIRES_KEY]: requirement });
}

/** The authenticated caller of a K endpoint (requireKey ran before the handler). */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route is missing requireKey');
  return request.caller;
}
