import type { FastifyInstance } from 'fastify';
import { errorBody } from './error-body.js';
import type { Services } from '../services.js';

export function healthRoutes(app: FastifyInstance, services: Services): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  /**
   * Ready when both stores answer and the projections have caught up once
   * since start (this process's own while it holds the projector lease, else
   * the checkpoints the holder stores); never while they are halted before an
   * event this version of the service cannot read. A `projector` standing by
   * for the lease is ready when the stores answer: it is ready to take over.
   */
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    const [events, readModels, state] = await Promise.allSettled([services.events.headPosition(), services.readModels.ping(), services.projectionState()]);
    const head = events.status === 'fulfilled' ? events.value : undefined;
    const projections = state.status === 'fulfilled' ? state.value : { position: 0n, caughtUp: false, halted: undefined };
    const { position, halted } = projections;
    const role = services.config.ROLE;
    const holding = services.projector?.holding ?? false;
    const body = {
      status: 'ready' as 'ready' | 'not_ready',
      role,
      event_store: { kind: services.events.kind, reachable: events.status === 'fulfilled' },
      read_models: { kind: services.readModels.kind, reachable: readModels.status === 'fulfilled' },
      projections: {
        caught_up: projections.caughtUp,
        position: String(position),
        head: head === undefined ? null : String(head),
        behind: head === undefined ? null : head > position,
        halted: halted ? { position: String(halted.position), stream: halted.streamId, type: halted.type, reason: halted.reason } : null,
      },
      lease: services.projector ? { held: holding } : null,
    };
    if (halted) {
      const message = `The projections are halted before event ${halted.position} (${halted.type} of ${halted.streamId}), which this version of the service cannot read`;
      return reply.code(503).send({ ...errorBody('not_ready', message), ...body, status: 'not_ready' });
    }
    const standby = role === 'projector' && !holding;
    if (events.status === 'rejected' || readModels.status === 'rejected' || (!standby && !projections.caughtUp)) {
      body.status = 'not_ready';
      return reply.code(503).send({ ...errorBody('not_ready', 'The service is not ready'), ...body, status: 'not_ready' });
    }
    return body;
  });
}
