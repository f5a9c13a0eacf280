import type { FastifyInstance } from 'fastify';
import { haltMessage, haltView } from '../kernel/feed/halt.js';
import { errorBody } from './error-body.js';
import type { Context } from '../kernel/context.js';
import { operatorCheck } from './metrics.js';

export function healthRoutes(app: FastifyInstance, services: Context): void {
  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));

  /**
   * Ready when both stores answer and the projections have caught up once
   * since start (this process's own while it holds the projector lease, else
   * the checkpoints the holder stores); never while they are halted (before an
   * event this version of the service cannot read, or on read models of
   * another event store). A `projector` standing by for the lease is ready
   * when the stores answer: it is ready to take over. Redis is reported but
   * never makes it unready: while it is away rate limits are counted in
   * memory and the API serves.
   *
   * The details (positions in the history, stores, role, lease) tell how busy
   * every tenant is, so they are the operator's, as /metrics is: anyone else
   * gets the status alone.
   */
  const operator = operatorCheck(services.config.METRICS_TOKEN);
  app.get('/readyz', { schema: { hide: true } }, async (request, reply) => {
    const detailed = operator(request);
    const [events, readModels, state, redis, room] = await Promise.allSettled([
      services.events.headPosition(),
      services.readModels.ping(),
      services.projectionState(),
      services.redis?.check(),
      services.storage.hasRoom(services.events.hasRoom ? () => services.events.hasRoom!() : undefined),
    ]);
    const storageFull = room.status === 'fulfilled' && !room.value;
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
      redis: redis.status === 'fulfilled' && redis.value !== undefined ? { reachable: redis.value, rate_limits: redis.value ? 'redis' : 'memory' } : null,
      projections: {
        caught_up: projections.caughtUp,
        position: String(position),
        head: head === undefined ? null : String(head),
        behind: head === undefined ? null : head > position,
        halted: halted ? haltView(halted) : null,
      },
      lease: services.projector ? { held: holding } : null,
      storage: { full: storageFull },
    };
    const notReady = (message: string) =>
      reply.code(503).send(detailed ? { ...errorBody('not_ready', message), ...body, status: 'not_ready' } : { ...errorBody('not_ready', 'The service is not ready'), status: 'not_ready' });
    if (halted) return notReady(`The ${haltMessage(halted)}`);
    if (storageFull) return notReady('The event store has no room left: writes are refused until space is freed');
    const standby = role === 'projector' && !holding;
    if (events.status === 'rejected' || readModels.status === 'rejected' || (!standby && !projections.caughtUp)) return notReady('The service is not ready');
    return detailed ? body : { status: body.status };
  });
}
