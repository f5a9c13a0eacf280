import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { checkpointKey } from '../kernel/feed/projection.js';
import { WEBHOOK_DELIVERIES, WEBHOOK_REPLAYS, webhookDispatchState, WEBHOOKS, type WebhookDoc } from '../../projections/webhooks.js';
import { execute } from '../kernel/aggregate.js';
import { ID } from '../embeddables/kinds.js';
import { AppError } from '../kernel/errors.js';
import { callerOf, requireKey } from '../http/auth.js';
import { idParams } from '../http/operations.js';
import { PaginationQuery, pagination, window } from '../kernel/pagination.js';
import type { Context } from '../kernel/context.js';
import { endpointAggregate } from './endpoint.js';
import { CreatedWebhook, CreateWebhookBody, DeliveryList, ReplayAccepted, ReplayBody, RotatedSecret, UpdateWebhookBody, WebhookList, WebhookView } from './schemas.js';
import { endpointSecret } from './signing.js';
import { checkTarget, systemResolve, type Resolve } from './targets.js';

const notFound = () => new AppError('webhook_not_found', 'Webhook not found');

const Params = idParams('webhook endpoint', 'whk');

/** How long a rotated-out secret keeps signing beside the new one. */
const PREVIOUS_SECRET_HOURS = 24;

/**
 * How far back a replay may reach, and how many an account may ask for in
 * any 24 hours (all its endpoints together, deleted ones included): a
 * replay reads the account's own history, so these bound what one account
 * can make the service read for it.
 */
export const REPLAY_WINDOW_DAYS = 30;
export const REPLAY_QUOTA = 10;
const DAY_MS = 86_400_000;
const DISPATCH_CHECKPOINT = checkpointKey(webhookDispatchState);

export const webhookView = (doc: WebhookDoc): z.output<typeof WebhookView> => ({
  id: doc.id,
  url: doc.url,
  events: doc.events,
  description: doc.description,
  enabled: doc.enabled,
  disabled_reason: doc.disabled_reason ?? null,
  created_at: doc.created_at,
  updated_at: doc.updated_at,
});

/** Webhook endpoints (Business): a plugin the app registers with its services. */
export const webhookRoutes: FastifyPluginAsyncZod<{ services: Context & { webhookResolve?: Resolve } }> = async (app, { services }) => {
  const read = requireKey(services, { scope: 'webhooks:read' });
  const write = requireKey(services, { scope: 'webhooks:write' });
  const resolve = services.webhookResolve ?? systemResolve;

  /** Refuses a target that resolves where webhooks may not go; checked again at every delivery. */
  const checkUrl = async (url: string) => {
    const checked = await checkTarget(url, { allowPrivate: services.config.WEBHOOK_ALLOW_PRIVATE, resolve });
    if (!checked.ok) throw new AppError('validation_error', 'The webhook URL is refused', [{ path: 'body.url', message: checked.reason }]);
  };

  const own = async (id: string, accountId: string): Promise<WebhookDoc> => {
    const doc = ID.test(id) ? ((await services.readModels.get(WEBHOOKS, id)) as WebhookDoc | null) : null;
    if (!doc || doc.account_id !== accountId) throw notFound();
    return doc;
  };

  app.post(
    '/api/webhooks',
    {
      onRequest: write,
      config: { errors: ['validation_error', 'conflict'] },
      schema: {
        tags: ['webhooks'],
        operationId: 'createWebhook',
        summary: 'Create a webhook endpoint',
        description: 'The reply holds the signing secret, shown this once. Targets that resolve to loopback, private, link-local or metadata addresses are refused.',
        body: CreateWebhookBody,
        response: { 201: CreatedWebhook },
      },
    },
    async (request, reply) => {
      const { accountId, keyId } = callerOf(request);
      await checkUrl(request.body.url);
      const id = services.ids('whk');
      const salt = services.random(16).toString('hex');
      const at = services.clock();
      const { state } = await execute(
        services.commands,
        endpointAggregate,
        id,
        { type: 'CreateEndpoint', endpoint_id: id, account_id: accountId, url: request.body.url, events: request.body.events, description: request.body.description ?? '', secret_salt: salt, at: at.toISOString() },
        { actor: keyId, at, requestId: request.id },
      );
      if (state.status !== 'active') throw new Error('webhook was not created');
      const { url, events, description } = state.endpoint;
      return reply.code(201).send({ id, url, events, description, secret: endpointSecret(services.keys.webhookSecrets, id, salt), enabled: true as const, created_at: at.toISOString() });
    },
  );

  app.get(
    '/api/webhooks',
    {
      onRequest: read,
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhooks',
        summary: 'List webhook endpoints',
        description: "The caller's own endpoints, newest first, a page at a time; never their secrets.",
        querystring: PaginationQuery,
        response: { 200: WebhookList },
      },
    },
    async (request) => {
      const { accountId } = callerOf(request);
      const [docs, total] = await Promise.all([
        services.readModels.find(WEBHOOKS, { account_id: accountId }, { sort: [['created_at', -1], ['id', -1]], ...window(request.query) }),
        services.readModels.count(WEBHOOKS, { account_id: accountId }),
      ]);
      return { webhooks: (docs as WebhookDoc[]).map(webhookView), pagination: pagination(request.query, total) };
    },
  );

  app.get(
    '/api/webhooks/:id',
    {
      onRequest: read,
      config: { errors: ['webhook_not_found'] },
      schema: {
        tags: ['webhooks'],
        operationId: 'getWebhook',
        summary: 'Get a webhook endpoint',
        description: 'Its target, subscribed event types and whether it is enabled (with why the service disabled it); never its secret.',
        params: Params,
        response: { 200: WebhookView },
      },
    },
    async (request) => webhookView(await own(request.params.id, callerOf(request).accountId)),
  );

  app.put(
    '/api/webhooks/:id',
    {
      onRequest: write,
      config: { errors: ['webhook_not_found', 'validation_error', 'conflict', 'event_unreadable'] },
      schema: {
        tags: ['webhooks'],
        operationId: 'updateWebhook',
        summary: 'Change a webhook endpoint, or turn it off or on',
        description: 'Any of `url`, `events`, `description` and `enabled`; `enabled: true` turns back on an endpoint the service disabled. A new `url` is checked as at creation.',
        params: Params,
        body: UpdateWebhookBody,
        response: { 200: WebhookView },
      },
    },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      await own(request.params.id, accountId);
      if (request.body.url !== undefined) await checkUrl(request.body.url);
      const at = services.clock();
      await execute(services.commands, endpointAggregate, request.params.id, { type: 'UpdateEndpoint', account_id: accountId, changes: request.body, at: at.toISOString() }, { actor: keyId, at, requestId: request.id });
      return webhookView(await own(request.params.id, accountId));
    },
  );

  app.delete(
    '/api/webhooks/:id',
    {
      onRequest: write,
      config: { errors: ['webhook_not_found', 'conflict', 'event_unreadable'] },
      schema: {
        tags: ['webhooks'],
        operationId: 'deleteWebhook',
        summary: 'Delete a webhook endpoint (what is still queued for it is dropped)',
        description: 'Nothing more is sent to it: deliveries still queued for it are dropped.',
        params: Params,
        response: { 200: z.object({ success: z.literal(true) }) },
      },
    },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      await own(request.params.id, accountId);
      const at = services.clock();
      await execute(services.commands, endpointAggregate, request.params.id, { type: 'DeleteEndpoint', account_id: accountId, at: at.toISOString() }, { actor: keyId, at, requestId: request.id });
      return { success: true as const };
    },
  );

  app.get(
    '/api/webhooks/:id/deliveries',
    {
      onRequest: read,
      config: { errors: ['webhook_not_found'] },
      schema: {
        tags: ['webhooks'],
        operationId: 'listWebhookDeliveries',
        summary: "List a webhook endpoint's deliveries, newest first",
        description: 'What was sent or is queued, with attempts and outcomes; never a payload, a secret or an answer.',
        params: Params,
        querystring: PaginationQuery,
        response: { 200: DeliveryList },
      },
    },
    async (request) => {
      const doc = await own(request.params.id, callerOf(request).accountId);
      const [docs, total] = await Promise.all([
        services.readModels.find(WEBHOOK_DELIVERIES, { endpoint_id: doc.id }, { sort: [['seq', -1]], ...window(request.query) }),
        services.readModels.count(WEBHOOK_DELIVERIES, { endpoint_id: doc.id }),
      ]);
      const deliveries = docs.map((d) => ({
        event_id: String(d.event_id),
        type: String(d.type),
        status: d.status as 'pending' | 'delivered' | 'failed' | 'dropped',
        attempts: Number(d.attempts),
        last_status: (d.last_status as number | null) ?? null,
        last_error: (d.last_error as string | null) ?? null,
        next_attempt_at: (d.next_attempt_at as string | null) ?? null,
        last_attempt_at: (d.last_attempt_at as string | null) ?? null,
        created_at: String(d.created_at),
        replay: Boolean(d.replay),
      }));
      return { deliveries, pagination: pagination(request.query, total) };
    },
  );

  app.post(
    '/api/webhooks/:id/rotate-secret',
    {
      onRequest: write,
      config: { errors: ['webhook_not_found', 'conflict', 'event_unreadable'] },
      schema: {
        tags: ['webhooks'],
        operationId: 'rotateWebhookSecret',
        summary: 'Give a webhook endpoint a new signing secret',
        description: `The reply holds the new secret, shown this once. For ${PREVIOUS_SECRET_HOURS} hours every delivery is signed by both (two signatures in \`webhook-signature\`, as Standard Webhooks lays out), so receivers may switch at any time in between; then by the new one only.`,
        params: Params,
        response: { 200: RotatedSecret },
      },
    },
    async (request) => {
      const { accountId, keyId } = callerOf(request);
      await own(request.params.id, accountId);
      const salt = services.random(16).toString('hex');
      const at = services.clock();
      const previousUntil = new Date(at.getTime() + PREVIOUS_SECRET_HOURS * 3_600_000).toISOString();
      await execute(services.commands, endpointAggregate, request.params.id, { type: 'RotateSecret', account_id: accountId, secret_salt: salt, previous_until: previousUntil, at: at.toISOString() }, { actor: keyId, at, requestId: request.id });
      return { id: request.params.id, secret: endpointSecret(services.keys.webhookSecrets, request.params.id, salt), previous_secret_until: previousUntil };
    },
  );

  app.post(
    '/api/webhooks/:id/replay',
    {
      onRequest: write,
      config: { errors: ['webhook_not_found', 'validation_error', 'conflict', 'replay_pending', 'replay_quota_exceeded', 'event_unreadable'] },
      schema: {
        tags: ['webhooks'],
        operationId: 'replayWebhookEvents',
        summary: 'Deliver again every matching event recorded since a time',
        description: `Read from the event history: every event of the subscribed types recorded from \`since\` until now is queued again, after what is queued already, and sent with its original \`webhook-id\`. Erased responses are not in the history any more and are not sent. The history is read from the last seal recorded an hour or more before \`since\` (from the start when there is none). \`since\` may reach back ${REPLAY_WINDOW_DAYS} days at most, and not past the request (400 \`validation_error\` otherwise). One replay per endpoint is queued or running at a time (409 \`replay_pending\` meanwhile), and an account may ask for ${REPLAY_QUOTA} replays in any 24 hours, all its endpoints together (429 \`replay_quota_exceeded\` beyond).`,
        params: Params,
        body: ReplayBody,
        response: { 202: ReplayAccepted },
      },
    },
    async (request, reply) => {
      const { accountId, keyId } = callerOf(request);
      const at = services.clock();
      const oldest = new Date(at.getTime() - REPLAY_WINDOW_DAYS * DAY_MS);
      if (Date.parse(request.body.since) < oldest.getTime()) {
        throw new AppError('validation_error', 'The replay reaches too far back', [{ path: 'body.since', message: `must be within the last ${REPLAY_WINDOW_DAYS} days (from ${oldest.toISOString()})` }]);
      }
      // Nothing is recorded after now: such a replay would send nothing and still count against the quota.
      if (Date.parse(request.body.since) > at.getTime()) {
        throw new AppError('validation_error', 'The replay starts in the future', [{ path: 'body.since', message: `must not be after the request (${at.toISOString()})` }]);
      }
      await own(request.params.id, accountId);
      const range = { field: 'requested_at', gte: new Date(at.getTime() - DAY_MS).toISOString() };
      if ((await services.readModels.count(WEBHOOK_REPLAYS, { account_id: accountId }, range)) >= REPLAY_QUOTA) {
        const [first] = await services.readModels.find(WEBHOOK_REPLAYS, { account_id: accountId }, { sort: [['requested_at', 1]], range, limit: 1 });
        const next = first ? new Date(Date.parse(String(first.requested_at)) + DAY_MS).toISOString() : at.toISOString();
        throw new AppError('replay_quota_exceeded', `This account has asked for ${REPLAY_QUOTA} replays in the last 24 hours, the most it may; the next one is possible from ${next}`);
      }
      // Where the dispatcher stands: a replay asked for after it is still queued or running.
      const handled = (await services.readModels.checkpoints()).get(DISPATCH_CHECKPOINT) ?? 0n;
      await execute(
        services.commands,
        endpointAggregate,
        request.params.id,
        { type: 'RequestReplay', account_id: accountId, since: request.body.since, at: at.toISOString(), handled_through: handled },
        { actor: keyId, at, requestId: request.id },
      );
      return reply.code(202).send({ replay: true as const, since: request.body.since });
    },
  );
};
