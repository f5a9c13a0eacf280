import type { FastifyInstance } from 'fastify';
import { haltMessage, haltView } from '../../projections/halt.js';
import { errorBody } from './error-body.js';
import type { Services } from '../services.js';

export function healthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  /**
   * Ready when both stores answer and the projections have caught up once
   * since start; never while they are halted (before an event this version
   * of the service cannot read, or on read models of another event store).
   * Redis is reported but never makes it unready: while it is away rate
   * limits are counted in memory and the API serves.
   */
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const [events, readModels, redis] = await Promise.allSettled([services.events.headPosition(), services.readModels.ping(), services.redis?.check()]);
    const head = events.status === 'fulfilled' ? events.value : undefined;
    const position = services.projections.position;
    const halted = services.projections.halted;
    const body = {
      status: 'ready' as 'ready' | 'not_ready',
      event_store: { kind: services.events.kind, reachable: events.status === 'fulfilled' },
      read_models: { kind: services.readModels.kind, reachable: readModels.status === 'fulfilled' },
      redis: redis.status === 'fulfilled' && redis.value !== undefined ? { reachable: redis.value, rate_limits: redis.value ? 'redis' : 'memory' } : null,
      projections: {
        caught_up: services.projections.caughtUp,
        position: String(position),
        head: head === undefined ? null : String(head),
        behind: head === undefined ? null : head > position,
        halted: halted ? haltView(halted) : null,
      },
    };
    if (halted) {
      const message = `The ${haltMessage(halted)}`;
      return reply.code(503).send({ ...errorBody('not_ready', message), ...body, status: 'not_ready' });
    }
    if (events.status === 'rejected' || readModels.status === 'rejected' || !services.projections.caughtUp) {
      body.status = 'not_ready';
      return reply.code(503).send({ ...errorBody('not_ready', 'The service is not ready'), ...body, status: 'not_ready' });
    }
    return body;
  });
}
