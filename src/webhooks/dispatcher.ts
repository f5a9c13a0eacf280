import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { FastifyBaseLogger } from 'fastify';
import { ACCOUNTS } from '../../projections/accounts.js';
import { DELETED_PARENTS, deletedParent, parentKey } from '../erasure/state.js';
import { SendingProcessor } from '../kernel/feed/sending.js';
import type { FeedEvent } from '../kernel/feed/projection.js';
import { SEAL_STREAM } from '../seals/chain.js';
import {
  WEBHOOK_DELIVERIES,
  WEBHOOK_OWNERS,
  WEBHOOK_TARGETS,
  webhookDispatchState,
  type WebhookDelivery,
  type WebhookTarget,
} from '../../projections/webhooks.js';
import { execute, type CommandContext } from '../kernel/aggregate.js';
import { UnreadableEvent, type EventCatalog, type Recorded } from '../kernel/event-catalog.js';
import type { EventStore, StoredEvent } from '../infra/event-store/port.js';
import type { Clock } from '../infra/ids.js';
import type { ReadModelOp, ReadModelStore } from '../infra/read-models/port.js';
import { endpointAggregate } from './endpoint.js';
import { createdObject, messageOf, type WebhookMessage, type WebhookReads } from './feed.js';
import { sendOverHttp, type SendWebhook } from './http.js';
import { endpointSecret, messageId, signatureHeaders } from './signing.js';
import { checkTarget, systemResolve, type Resolve } from './targets.js';
import { subscribed } from './types.js';

/**
 * Events of the account a replay reads, and queues in one write, at once;
 * between two batches it yields to the event loop, so requests go on being
 * answered while it runs. Each write holds the loop for its commit: with
 * 250 a replay of 10,000 events held it 250 ms at most in the bench where
 * writes of 1000 held it up to 380 ms (busy shared disk, both figures).
 */
const REPLAY_BATCH = 250;
/**
 * How far the clock that stamps recording times may have stepped back: a
 * replay starts reading after the last seal made this long before its
 * `since`, not after the last one made before it.
 */
const REPLAY_CLOCK_SLACK_MS = 60 * 60_000;
const WHOLE = /^\d{1,20}$/;

/**
 * The delays between attempts, as Standard Webhooks senders commonly use:
 * 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, about 28 hours from the first
 * attempt to the last. An endpoint that fails them all is disabled.
 */
export const DEFAULT_RETRY_SCHEDULE_MS = [5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 36_000_000];

export interface DispatcherOptions {
  /** Delays before each retry, in ms; one attempt more than it has entries. */
  schedule?: number[];
  /** WEBHOOK_ALLOW_PRIVATE: deliver to loopback and private addresses too. */
  allowPrivate?: boolean;
  resolve?: Resolve;
  send?: SendWebhook;
  timeoutMs?: number;
  batchSize?: number;
  retryMs?: number;
  /** How long the live feed rests after a batch that was not full (see lingering). */
  restMs?: number;
  /** See REPLAY_CLOCK_SLACK_MS. */
  replayClockSlackMs?: number;
}

type Outcome = { kind: 'delivered'; status: number } | { kind: 'failed'; status: number | null; error: string } | { kind: 'dropped'; reason: string };

const pad = (position: bigint): string => position.toString().padStart(20, '0');

/**
 * Webhooks as a process beside the projections, under the projector lease.
 * It follows the event feed from its own checkpoint and, in the transaction
 * that moves it, queues a delivery for every endpoint the event concerns (in
 * feed order per endpoint) and drops what an erasure names. Each endpoint
 * then sends its queue head on its own, so a failing endpoint holds up no
 * other; an attempt's outcome (attempts, last status, next attempt) is
 * stored after the attempt, so a crash means the attempt runs again:
 * at-least-once, which the stable `webhook-id` lets receivers absorb.
 */
export class WebhookDispatcher extends SendingProcessor<WebhookReads> {
  private targets = new Map<string, WebhookTarget>();
  private readonly schedule: number[];
  private readonly allowPrivate: boolean;
  private readonly resolve: Resolve;
  private readonly send: SendWebhook;
  private readonly timeoutMs: number;
  private readonly replayClockSlackMs: number;
  /**
   * Accounts' plans as this process met them in the feed (only Business
   * accounts have events pushed). An account it has not met since it
   * started is asked of the accounts read model each time, never kept: that
   * model may be behind this process at a start.
   */
  private readonly plans = new Map<string, string>();

  constructor(
    events: EventStore,
    readModels: ReadModelStore,
    catalog: EventCatalog<FeedEvent>,
    private readonly commands: CommandContext,
    /** Derives each endpoint's signing secret (see signing.ts). */
    private readonly secretKey: Buffer,
    clock: Clock,
    logger: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>,
    options: DispatcherOptions = {},
  ) {
    // Given the catalog of every feature's events; it reads those WebhookReads names, and passes the others by.
    super({ label: 'the webhook dispatcher', state: webhookDispatchState, events, readModels, catalog: catalog as EventCatalog<WebhookReads>, clock, logger, batchSize: options.batchSize, retryMs: options.retryMs, restMs: options.restMs, checksStore: true });
    this.schedule = options.schedule ?? DEFAULT_RETRY_SCHEDULE_MS;
    this.allowPrivate = options.allowPrivate ?? false;
    this.resolve = options.resolve ?? systemResolve;
    this.send = options.send ?? sendOverHttp;
    this.timeoutMs = options.timeoutMs ?? 10_000;
    this.replayClockSlackMs = options.replayClockSlackMs ?? REPLAY_CLOCK_SLACK_MS;
  }

  protected override async load(): Promise<void> {
    this.targets = new Map((await this.readModels.find(WEBHOOK_TARGETS, {})).map((doc) => [doc.id, doc as WebhookTarget]));
  }

  /** Whatever a stop or a crash left queued goes out first, each endpoint's queue on its own. */
  protected override resume(): void {
    for (const id of this.targets.keys()) this.kick(id);
  }

  protected async handle(batch: StoredEvent[]): Promise<void> {
    let pending: ReadModelOp[] = [];
    let previous = this.checkpoint;
    const touched = new Set<string>();
    const owners = new Map<string, string>();
    const commit = async (position: bigint) => {
      if (position <= this.checkpoint && pending.length === 0) return;
      const ops = pending;
      pending = [];
      await this.commit(ops, position);
    };
    const drop = (where: Record<string, string>, reason: string): ReadModelOp => ({
      op: 'patch',
      collection: WEBHOOK_DELIVERIES,
      where: { ...where, status: 'pending' },
      set: { status: 'dropped', last_error: reason, next_attempt_at: null },
    });

    try {
      // Ends before an event this version cannot read, halted: what came before it is committed below.
      for (const { stored, event } of this.readable(batch)) {
        if (event) {
          if (event.type === 'WebhookReplayRequested') {
            await commit(previous);
            await this.replay(stored, event.data);
            touched.add(event.data.endpoint_id);
            previous = stored.position;
            continue;
          }
          if (event.type === 'AccountOpened') this.plans.set(event.data.account_id, event.data.plan);
          if (event.type === 'AccountPlanChanged') this.plans.set(event.data.account_id, event.data.to);
          pending.push(...this.endpointChange(event, drop));
          // Enabled again: what waited behind its failed delivery goes out now.
          if (event.type === 'WebhookEndpointUpdated') touched.add(event.data.endpoint_id);
          const created = createdObject(event);
          if (created) {
            owners.set(created.id, created.account_id);
            pending.push({ op: 'put', collection: WEBHOOK_OWNERS, doc: created });
          }
          // An erasure drops what is still queued of what it erases: nothing erased is sent after it.
          const deleted = deletedParent(event);
          if (deleted) pending.push(drop({ parent_id: deleted.id }, 'erased'));
          if (event.type === 'ErasureRequested' || event.type === 'ResponsesErased') {
            pending.push(...event.data.response_ids.map((id) => drop({ subject_id: id }, 'erased')));
          }
          const message = messageOf(event);
          if (message && this.targets.size > 0) {
            for (const target of await this.recipients(message, owners)) {
              pending.push({ op: 'put', collection: WEBHOOK_DELIVERIES, doc: this.delivery(target, stored, message, pad(stored.position), false) });
              touched.add(target.id);
            }
          }
        }
        previous = stored.position;
      }
      await commit(previous);
    } finally {
      for (const id of touched) this.kick(id);
    }
  }

  /** Keeps the dispatcher's copy of the endpoints as of its position in the feed. */
  private endpointChange(event: Recorded<WebhookReads>, drop: (where: Record<string, string>, reason: string) => ReadModelOp): ReadModelOp[] {
    switch (event.type) {
      case 'WebhookEndpointCreated': {
        const { endpoint_id, account_id, url, events, secret_salt } = event.data;
        const target: WebhookTarget = { id: endpoint_id, account_id, url, events, secret_salt, enabled: true };
        this.targets.set(target.id, target);
        return [{ op: 'put', collection: WEBHOOK_TARGETS, doc: target }];
      }
      case 'WebhookEndpointUpdated':
      case 'WebhookEndpointDisabled': {
        const current = this.targets.get(event.data.endpoint_id);
        if (!current) return [];
        const target = { ...current, ...(event.type === 'WebhookEndpointUpdated' ? event.data.changes : { enabled: false }) };
        this.targets.set(target.id, target);
        return [{ op: 'put', collection: WEBHOOK_TARGETS, doc: target }];
      }
      case 'WebhookSecretRotated': {
        const current = this.targets.get(event.data.endpoint_id);
        if (!current) return [];
        const target: WebhookTarget = { ...current, secret_salt: event.data.secret_salt, previous_salt: current.secret_salt, previous_until: event.data.previous_until };
        this.targets.set(target.id, target);
        return [{ op: 'put', collection: WEBHOOK_TARGETS, doc: target }];
      }
      case 'WebhookEndpointDeleted':
        this.targets.delete(event.data.endpoint_id);
        return [{ op: 'delete', collection: WEBHOOK_TARGETS, where: { id: event.data.endpoint_id } }, drop({ endpoint_id: event.data.endpoint_id }, 'endpoint deleted')];
      default:
        return [];
    }
  }

  /** The enabled endpoints of the message's account that subscribed to its type, while the account is on Business. */
  private async recipients(message: WebhookMessage, owners: Map<string, string>): Promise<WebhookTarget[]> {
    const account = await this.accountOf(message, owners);
    if (account === undefined || !(await this.onBusiness(account))) return [];
    return [...this.targets.values()].filter((target) => target.account_id === account && target.enabled && subscribed(target.events, message.type));
  }

  private async accountOf(message: WebhookMessage, owners: Map<string, string>): Promise<string | undefined> {
    if (message.account_id !== undefined || message.object_id === undefined) return message.account_id;
    return owners.get(message.object_id) ?? ((await this.readModels.get(WEBHOOK_OWNERS, message.object_id))?.account_id as string | undefined);
  }

  private async onBusiness(account: string): Promise<boolean> {
    const plan = this.plans.get(account) ?? (await this.readModels.get(ACCOUNTS, account))?.plan;
    return plan === 'business';
  }

  private delivery(target: WebhookTarget, stored: StoredEvent, message: WebhookMessage, seq: string, replay: boolean): WebhookDelivery {
    const now = this.clock().toISOString();
    return {
      id: `${target.id}:${seq}`,
      endpoint_id: target.id,
      seq,
      event_id: `evt_${stored.id.replaceAll('-', '')}`,
      type: message.type,
      stream: stored.streamId,
      revision: String(stored.revision),
      position: String(stored.position),
      subject_id: message.subject_id,
      parent_id: message.parent_id,
      status: 'pending',
      attempts: 0,
      last_status: null,
      last_error: null,
      next_attempt_at: now,
      last_attempt_at: null,
      created_at: now,
      replay,
    };
  }

  /**
   * Queues again every event of the endpoint's account recorded from
   * `since` up to the request, read from the history (erased events are no
   * longer in it), after everything queued before the request. Only the
   * account's own events are read (the store's index by account), a batch
   * at a time with a turn of the event loop between: its cost is the
   * account's history, whatever other accounts hold.
   */
  private async replay(request: StoredEvent, data: { endpoint_id: string; account_id: string; since: string }): Promise<void> {
    const target = this.targets.get(data.endpoint_id);
    const since = Date.parse(data.since);
    let ops: ReadModelOp[] = [];
    if (target && target.account_id === data.account_id) {
      let after = await this.replayStart(since - this.replayClockSlackMs, request.position);
      for (let done = false; !done; ) {
        const batch = await this.events.readAccount(target.account_id, { after, limit: REPLAY_BATCH });
        if (batch.length === 0) break;
        for (const stored of batch) {
          if (stored.position >= request.position) {
            done = true;
            break;
          }
          if (Date.parse(stored.recordedAt) < since) continue;
          const event = this.read(stored);
          const message = event && !(event instanceof UnreadableEvent) ? messageOf(event) : undefined;
          // Asked for by the owner: queued while the endpoint is off too, to go out once it is on.
          if (!message || !subscribed(target.events, message.type) || (await this.accountOf(message, new Map())) !== target.account_id) continue;
          ops.push({ op: 'put', collection: WEBHOOK_DELIVERIES, doc: this.delivery(target, stored, message, `${pad(request.position)}.${pad(stored.position)}`, true) });
        }
        if (!done && ops.length > 0) {
          // Queued again after a crash: a put replaces, so nothing is queued twice. The last batch's go with the checkpoint.
          await this.readModels.write(ops, [], this.fence);
          ops = [];
        }
        after = batch.at(-1)!.position;
        await yieldToLoop();
      }
    }
    await this.commit(ops, request.position);
  }

  /**
   * Where a replay reads the history from: after the events the last seal
   * recorded before `before` (a time) covers, each of which was recorded
   * before its seal; the start of the history when no seal is that old.
   * Found by halving the seal stream: 10 reads (5 ms) on a sealed history of
   * a million events, where reading from the start read and parsed all of
   * it on the event loop (8 s) for a replay of the last hour.
   */
  private async replayStart(before: number, request: bigint): Promise<bigint> {
    const last = await this.events.streamState(SEAL_STREAM);
    if (typeof last !== 'bigint') return 0n;
    // Seals up to `low` were recorded before the time, from `high` on not (or after the request).
    let low = -1n;
    let high = last + 1n;
    let start = 0n;
    while (high - low > 1n) {
      const middle = (low + high) / 2n;
      const [stored] = await this.events.readStream(SEAL_STREAM, { fromRevision: middle, maxCount: 1 });
      const seal = stored && stored.position < request ? this.read(stored) : undefined;
      if (seal !== undefined && !(seal instanceof UnreadableEvent) && seal.type === 'LogSealed' && WHOLE.test(seal.data.through) && Date.parse(stored!.recordedAt) < before) {
        low = middle;
        start = BigInt(seal.data.through);
      } else {
        high = middle;
      }
    }
    return start;
  }

  /** Sends the endpoint's queue in order until it is empty, or its head must wait. */
  protected async sendDue(id: string): Promise<void> {
    while (!this.stopped) {
      const target = this.targets.get(id);
      if (!target?.enabled) return;
      const [head] = (await this.readModels.find(WEBHOOK_DELIVERIES, { endpoint_id: id, status: 'pending' }, { sort: [['seq', 1]], limit: 1 })) as WebhookDelivery[];
      if (!head) return;
      const due = Date.parse(head.next_attempt_at ?? '');
      if (due > this.clock().getTime()) return this.wake(due, id);
      await this.attempt(target, head);
    }
  }

  private async attempt(target: WebhookTarget, delivery: WebhookDelivery): Promise<void> {
    const now = this.clock();
    const outcome = await this.deliver(target, delivery, now);
    // The wait before a retry runs from the end of the attempt: from its start, a receiver that held it to the timeout would have its first retry at once.
    const ended = this.clock();
    const attempts = delivery.attempts + (outcome.kind === 'dropped' ? 0 : 1);
    const exhausted = outcome.kind === 'failed' && attempts > this.schedule.length;
    let set: Partial<WebhookDelivery>;
    if (outcome.kind === 'dropped') {
      set = { status: 'dropped', last_error: outcome.reason, next_attempt_at: null };
    } else if (outcome.kind === 'delivered') {
      set = { status: 'delivered', attempts, last_status: outcome.status, last_error: null, next_attempt_at: null, last_attempt_at: now.toISOString() };
    } else {
      set = {
        status: exhausted ? 'failed' : 'pending',
        attempts,
        last_status: outcome.status,
        last_error: outcome.error,
        next_attempt_at: exhausted ? null : new Date(ended.getTime() + this.schedule[attempts - 1]!).toISOString(),
        last_attempt_at: now.toISOString(),
      };
    }
    // Still pending: an erasure or a deletion that dropped it meanwhile stands.
    const ops: ReadModelOp[] = [{ op: 'patch', collection: WEBHOOK_DELIVERIES, where: { id: delivery.id, status: 'pending' }, set }];
    if (outcome.kind !== 'dropped') {
      // Dropped while this attempt was out: the log still says what went out, and one the receiver took was delivered, not dropped before it went out.
      const attempted = { attempts, last_status: outcome.status, last_attempt_at: now.toISOString() };
      ops.push({ op: 'patch', collection: WEBHOOK_DELIVERIES, where: { id: delivery.id, status: 'dropped' }, set: outcome.kind === 'delivered' ? { ...attempted, status: 'delivered', last_error: null } : attempted });
    }
    await this.readModels.write(ops, [], this.fence);
    if (exhausted) {
      target.enabled = false;
      this.logger.warn({ endpoint: target.id }, 'a webhook failed for its whole retry schedule: the endpoint is disabled');
      await execute(this.commands, endpointAggregate, target.id, { type: 'DisableEndpoint', reason: 'failing', at: now.toISOString() }, { actor: 'service', at: now });
    }
  }

  private async deliver(target: WebhookTarget, delivery: WebhookDelivery, now: Date): Promise<Outcome> {
    // Read from the history at send time: an erased response's stream is gone, and so is its payload.
    const [stored] = await this.events.readStream(delivery.stream, { fromRevision: BigInt(delivery.revision), maxCount: 1 });
    if (!stored || String(stored.position) !== delivery.position) return { kind: 'dropped', reason: 'erased' };
    const event = this.read(stored);
    const message = event && !(event instanceof UnreadableEvent) ? messageOf(event) : undefined;
    if (!event || event instanceof UnreadableEvent || !message) return { kind: 'dropped', reason: 'unreadable' };
    if (message.parent_id !== null && (await this.parentDeleted(message))) return { kind: 'dropped', reason: 'erased' };
    const checked = await checkTarget(target.url, { allowPrivate: this.allowPrivate, resolve: this.resolve });
    if (!checked.ok) return { kind: 'failed', status: null, error: `refused: ${checked.reason}` };
    const body = JSON.stringify({ type: message.type, id: delivery.event_id, created_at: event.metadata.occurred_at, data: message.data });
    const secrets = [target.secret_salt, ...(target.previous_salt !== undefined && Date.parse(target.previous_until ?? '') > now.getTime() ? [target.previous_salt] : [])].map((salt) => endpointSecret(this.secretKey, target.id, salt));
    const headers = signatureHeaders(secrets, messageId(target.id, delivery.event_id), now, body);
    try {
      const { status } = await this.send({ url: target.url, address: checked.address, family: checked.family, headers, body, timeoutMs: this.timeoutMs });
      return status >= 200 && status < 300 ? { kind: 'delivered', status } : { kind: 'failed', status, error: `answered ${status}` };
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code ?? (error as Error).name;
      // Node's http request, aborted by its timeout signal, fails with ABORT_ERR (an AbortError).
      const timedOut = code === 'ABORT_ERR' || (error as Error).name === 'AbortError' || (error as Error).name === 'TimeoutError';
      return { kind: 'failed', status: null, error: timedOut ? `no answer within ${this.timeoutMs / 1000} s` : `no answer (${code})` };
    }
  }

  /** Whether the erasure process has recorded the deletion of the message's parent (it may be ahead of this process). */
  private async parentDeleted(message: WebhookMessage): Promise<boolean> {
    const parent = message.type === 'vote.cast' ? 'poll' : message.data.widget_id !== undefined ? 'widget' : 'form';
    return (await this.readModels.get(DELETED_PARENTS, parentKey(parent, message.parent_id!))) !== null;
  }

  private read(stored: StoredEvent): Recorded<WebhookReads> | undefined | UnreadableEvent {
    try {
      return this.catalog.parse(stored);
    } catch (error) {
      if (error instanceof UnreadableEvent) return error;
      throw error;
    }
  }
}
