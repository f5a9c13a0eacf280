import type { FastifyBaseLogger } from 'fastify';
import { FORM_SUMMARIES } from '../../projections/forms.js';
import { POLL_SUMMARIES } from '../../projections/polls.js';
import { WIDGET_SUMMARIES } from '../../projections/widgets.js';
import { deletedParent } from '../erasure/state.js';
import type { EventStore, StoredEvent } from '../infra/event-store/port.js';
import type { Clock } from '../infra/ids.js';
import type { CollectionSpec, Doc, ReadModelOp, ReadModelStore } from '../infra/read-models/port.js';
import type { EventCatalog, Recorded } from '../kernel/event-catalog.js';
import { SendingProcessor } from '../kernel/feed/sending.js';
import type { FeedEvent } from '../kernel/feed/projection.js';
import type { MemberEvent } from '../members/events.js';
import type { PollEvent } from '../polls/events.js';
import type { SubmissionEvent } from '../submissions/events.js';
import type { NotificationEvent } from './events.js';
import { MAIL_OUTBOX, type OutboxDoc } from '../mail/outbox.js';
import type { NotificationMail } from '../mail/messages.js';
import { DEFAULT_RETRY_SCHEDULE_MS } from '../webhooks/dispatcher.js';
import { sendOverHttp, type SendWebhook } from '../webhooks/http.js';
import { checkTarget, systemResolve, type Resolve } from '../webhooks/targets.js';
import { addResponse, DEFAULT_GATHER_MS, NEVER, nextDigestAt, sent, type Pending } from './schedule.js';
import type { Mode, ObjectKind } from './settings.js';

export const NOTIFY_CHOICES = 'notify_choices';
export const NOTIFY_SLACK = 'notify_slack';
export const NOTIFY_PENDING = 'notify_pending';
export const NOTIFY_SLACK_DELIVERIES = 'notify_slack_deliveries';

export const notifierState = {
  name: 'notifier',
  version: 1,
  collections: [
    { name: NOTIFY_CHOICES, indexes: [['object_id'], ['member_id']] },
    { name: NOTIFY_SLACK, indexes: [] },
    { name: NOTIFY_PENDING, indexes: [['due_at'], ['object_id'], ['member_id']] },
    { name: NOTIFY_SLACK_DELIVERIES, indexes: [['status', 'next_attempt_at']] },
  ] satisfies CollectionSpec[],
};

interface ChoiceDoc extends Doc {
  account_id: string;
  object_id: string;
  object_kind: ObjectKind;
  member_id: string;
  email: string;
  mode: Mode;
  digest_hour: number;
  time_zone: string;
  include_answers: boolean;
}

interface SlackDoc extends Doc {
  account_id: string;
  object_kind: ObjectKind;
  url: string;
}

/** What waits for one member's email (`<object>:<member>:each|digest`) or the object's Slack (`<object>:slack`). */
interface PendingDoc extends Pending, Doc {
  channel: 'email' | 'slack';
  mode: 'each' | 'digest';
  account_id: string;
  object_id: string;
  object_kind: ObjectKind;
  member_id: string | null;
}

interface SlackDelivery extends Doc {
  object_id: string;
  url: string;
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_status: number | null;
  last_error: string | null;
}

export interface NotifierOptions {
  /** How long a quiet object's first response waits for others (DEFAULT_GATHER_MS). */
  gatherMs?: number;
  /** Slack's retry schedule: the webhooks' by default. */
  schedule?: number[];
  allowPrivate?: boolean;
  resolve?: Resolve;
  send?: SendWebhook;
  timeoutMs?: number;
  restMs?: number;
  retryMs?: number;
}

const SUMMARIES = { widget: WIDGET_SUMMARIES.collection, form: FORM_SUMMARIES.collection, poll: POLL_SUMMARIES.collection } as const;

/**
 * The events the notifier reads: the choices of who is told, members
 * leaving, and the responses and votes it tells of (deletions of their
 * objects through the erasure's reader). The others pass by.
 */
type NotifierReads = NotificationEvent | MemberEvent | SubmissionEvent | PollEvent;

/** The object a response or vote was given to. */
function answered(event: Recorded<NotifierReads>): { object_id: string; response_id: string; at: string } | undefined {
  if (event.type === 'ResponseSubmitted') {
    const objectId = event.data.form_id ?? event.data.widget_id;
    return objectId ? { object_id: objectId, response_id: event.data.response_id, at: event.data.submitted_at } : undefined;
  }
  if (event.type === 'VoteCast') return { object_id: event.data.poll_id, response_id: event.data.vote_id, at: event.data.cast_at };
  return undefined;
}

const slackEscape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;');

/**
 * Notifications, as a process beside the projections under the projector
 * lease, like the mail outbox it feeds. It follows the event feed from its
 * own checkpoint and, in the write that moves it, keeps each member's
 * choices and counts each response into what waits for them: a batch due
 * a moment after the first response (and a minute after the last email),
 * or the member's daily digest. What is due is then moved, in one write,
 * into the mail outbox (or the Slack queue) and emptied: a crash before that
 * write leaves it waiting, after it the outbox sends it. A timer only wakes
 * it at the next due time; the decisions are the functions of schedule.ts.
 */
export class Notifier extends SendingProcessor<NotifierReads> {
  /** One change of the state at a time: the feed's batches and the sending of what is due. */
  private chain: Promise<void> = Promise.resolve();
  private slackRun: Promise<void> | undefined;
  private readonly choices = new Map<string, Map<string, ChoiceDoc>>();
  private readonly slack = new Map<string, SlackDoc>();
  private readonly gatherMs: number;
  private readonly schedule: number[];

  constructor(
    events: EventStore,
    readModels: ReadModelStore,
    catalog: EventCatalog<FeedEvent>,
    /** The mail outbox, woken when mail is put in it; the service's public address for links. */
    private readonly mail: { poke(): void; base: () => string },
    clock: Clock,
    logger: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>,
    private readonly options: NotifierOptions = {},
  ) {
    // Given the catalog of every feature's events; it reads those NotifierReads names, and passes the others by.
    super({ label: 'the notifier', state: notifierState, events, readModels, catalog: catalog as EventCatalog<NotifierReads>, clock, logger, retryMs: options.retryMs, restMs: options.restMs });
    this.gatherMs = options.gatherMs ?? DEFAULT_GATHER_MS;
    this.schedule = options.schedule ?? DEFAULT_RETRY_SCHEDULE_MS;
  }

  /** Reads what the feed holds now and sends what is due at the clock's time (tests and the admin CLI; a server follows the feed). */
  override async catchUp(): Promise<void> {
    await super.catchUp();
    await this.sendDue();
  }

  /** Moves what is due into the mail outbox and the Slack queue, then sends the Slack messages that are due. */
  protected async sendDue(): Promise<void> {
    await this.serial(() => this.flush());
    await this.sendSlack();
  }

  private serial(run: () => Promise<void>): Promise<void> {
    const next = this.chain.then(run);
    this.chain = next.catch(() => undefined);
    return next;
  }

  protected override async load(): Promise<void> {
    this.choices.clear();
    this.slack.clear();
    for (const doc of (await this.readModels.find(NOTIFY_CHOICES, {})) as ChoiceDoc[]) this.remember(doc);
    for (const doc of (await this.readModels.find(NOTIFY_SLACK, {})) as SlackDoc[]) this.slack.set(doc.id, doc);
  }

  private remember(doc: ChoiceDoc): void {
    const members = this.choices.get(doc.object_id) ?? new Map<string, ChoiceDoc>();
    if (doc.mode === 'none') members.delete(doc.member_id);
    else members.set(doc.member_id, doc);
    if (members.size === 0) this.choices.delete(doc.object_id);
    else this.choices.set(doc.object_id, members);
  }

  protected handle(batch: StoredEvent[]): Promise<void> {
    return this.serial(() => this.record(batch));
  }

  private async record(batch: StoredEvent[]): Promise<void> {
    const ops: ReadModelOp[] = [];
    /** What waits, as changed by this batch (null: deleted), put after the batch's deletions. */
    const touched = new Map<string, PendingDoc | null>();
    const pendingOf = async (id: string, fresh: () => PendingDoc): Promise<PendingDoc> => {
      const known = touched.get(id);
      if (known) return known;
      if (known === null) return fresh();
      return ((await this.readModels.get(NOTIFY_PENDING, id)) as PendingDoc | null) ?? fresh();
    };
    const drop = (where: Record<string, string>) => {
      ops.push({ op: 'delete', collection: NOTIFY_PENDING, where });
      for (const [id, doc] of touched) if (doc && Object.entries(where).every(([k, v]) => (doc as unknown as Record<string, unknown>)[k] === v)) touched.set(id, null);
    };
    let last = this.checkpoint;
    for (const { stored, event } of this.readable(batch)) {
      last = stored.position;
      if (!event) continue;
      if (event.type === 'NotificationsChosen') {
        const { account_id, object_id, object_kind, member_id, email, mode, digest_hour, time_zone, include_answers, chosen_at } = event.data;
        const doc: ChoiceDoc = { id: `${object_id}:${member_id}`, account_id, object_id, object_kind, member_id, email, mode, digest_hour, time_zone, include_answers };
        this.remember(doc);
        ops.push({ op: 'put', collection: NOTIFY_CHOICES, doc: { ...doc } });
        const base = { channel: 'email' as const, account_id, object_id, object_kind, member_id };
        if (mode !== 'each') drop({ id: `${object_id}:${member_id}:each` });
        if (mode !== 'digest') drop({ id: `${object_id}:${member_id}:digest` });
        if (mode === 'digest') {
          const id = `${object_id}:${member_id}:digest`;
          const current = await pendingOf(id, () => ({ id, ...base, mode: 'digest', count: 0, response_ids: [], since: null, until: null, due_at: NEVER, last_sent_at: null }));
          touched.set(id, { ...current, due_at: new Date(nextDigestAt(digest_hour, time_zone, Date.parse(chosen_at))).toISOString() });
        }
      } else if (event.type === 'SlackNotificationsSet') {
        const { object_id, account_id, object_kind, url } = event.data;
        if (url === null) {
          this.slack.delete(object_id);
          ops.push({ op: 'delete', collection: NOTIFY_SLACK, where: { id: object_id } });
          drop({ id: `${object_id}:slack` });
        } else {
          const doc: SlackDoc = { id: object_id, account_id, object_kind, url };
          this.slack.set(object_id, doc);
          ops.push({ op: 'put', collection: NOTIFY_SLACK, doc: { ...doc } });
        }
      } else if (event.type === 'MemberRemoved') {
        const { member_id } = event.data;
        for (const members of this.choices.values()) members.delete(member_id);
        ops.push({ op: 'delete', collection: NOTIFY_CHOICES, where: { member_id } });
        drop({ member_id });
      } else if (deletedParent(event)) {
        const { id } = deletedParent(event)!;
        this.choices.delete(id);
        this.slack.delete(id);
        ops.push({ op: 'delete', collection: NOTIFY_CHOICES, where: { object_id: id } }, { op: 'delete', collection: NOTIFY_SLACK, where: { id } });
        drop({ object_id: id });
      } else {
        const response = answered(event);
        if (!response) continue;
        const members = [...(this.choices.get(response.object_id)?.values() ?? [])];
        const slack = this.slack.get(response.object_id);
        for (const choice of members) {
          const mode = choice.mode === 'digest' ? 'digest' : 'each';
          const id = `${response.object_id}:${choice.member_id}:${mode}`;
          const { account_id, object_id, object_kind, member_id } = choice;
          const current = await pendingOf(id, () => ({ id, channel: 'email', mode, account_id, object_id, object_kind, member_id, count: 0, response_ids: [], since: null, until: null, due_at: NEVER, last_sent_at: null }));
          touched.set(id, { ...current, ...addResponse(current, response.response_id, response.at, mode, this.gatherMs) });
        }
        if (slack) {
          const id = `${response.object_id}:slack`;
          const current = await pendingOf(id, () => ({ id, channel: 'slack', mode: 'each', account_id: slack.account_id, object_id: response.object_id, object_kind: slack.object_kind, member_id: null, count: 0, response_ids: [], since: null, until: null, due_at: NEVER, last_sent_at: null }));
          touched.set(id, { ...current, ...addResponse(current, response.response_id, response.at, 'each', this.gatherMs) });
        }
      }
    }
    if (last === this.checkpoint) return;
    for (const doc of touched.values()) if (doc) ops.push({ op: 'put', collection: NOTIFY_PENDING, doc: { ...doc } });
    await this.commit(ops, last);
    if (touched.size > 0) this.kick();
  }

  private async titleOf(kind: ObjectKind, id: string): Promise<string> {
    const summary = await this.readModels.get(SUMMARIES[kind], id);
    const title = kind === 'poll' ? summary?.question : summary?.title;
    return typeof title === 'string' && title.trim() !== '' ? title : id;
  }

  /** Moves what is due into the mail outbox or the Slack queue, each with its emptying in one write; then sleeps until the next is due. */
  private async flush(): Promise<void> {
    const now = this.clock();
    const iso = now.toISOString();
    let mailed = false;
    for (;;) {
      const due = (await this.readModels.find(NOTIFY_PENDING, {}, { sort: [['due_at', 1], ['id', 1]], range: { field: 'due_at', lte: iso }, limit: 50 })) as PendingDoc[];
      if (due.length === 0) break;
      const ops: ReadModelOp[] = [];
      for (const doc of due) {
        const choice = doc.member_id === null ? undefined : this.choices.get(doc.object_id)?.get(doc.member_id);
        const next = doc.mode === 'digest' && choice ? new Date(nextDigestAt(choice.digest_hour, choice.time_zone, now.getTime())).toISOString() : NEVER;
        ops.push({ op: 'put', collection: NOTIFY_PENDING, doc: { ...doc, ...sent(doc, iso, next) } });
        if (doc.count === 0) continue;
        const title = await this.titleOf(doc.object_kind, doc.object_id);
        if (doc.channel === 'slack') {
          const slack = this.slack.get(doc.object_id);
          if (!slack) continue;
          const delivery: SlackDelivery = { id: `${doc.id}:${now.getTime()}`, object_id: doc.object_id, url: slack.url, body: JSON.stringify(this.slackMessage(doc, title)), status: 'pending', attempts: 0, next_attempt_at: iso, last_status: null, last_error: null };
          ops.push({ op: 'put', collection: NOTIFY_SLACK_DELIVERIES, doc: { ...delivery } });
          continue;
        }
        if (!choice) continue;
        const entry: NotificationMail = {
          kind: 'notification',
          to: choice.email,
          mode: doc.mode,
          account_id: doc.account_id,
          member_id: choice.member_id,
          object_id: doc.object_id,
          object_kind: doc.object_kind,
          object_title: title,
          count: doc.count,
          since: doc.since ?? iso,
          until: doc.until ?? iso,
          response_ids: choice.include_answers ? doc.response_ids : [],
          include_answers: choice.include_answers,
        };
        const mail: OutboxDoc = { id: `n.${iso}.${doc.id}`, entry, status: 'pending', attempts: 0, next_attempt_at: iso, last_error: null, created_at: iso, sent_at: null };
        ops.push({ op: 'put', collection: MAIL_OUTBOX, doc: { ...mail } });
        mailed = true;
      }
      await this.readModels.write(ops, [], this.fence);
    }
    if (mailed) this.mail.poke();
    const [next] = (await this.readModels.find(NOTIFY_PENDING, {}, { sort: [['due_at', 1]], limit: 1 })) as PendingDoc[];
    if (next && next.due_at !== NEVER) this.wake(Date.parse(next.due_at));
  }

  private slackMessage(doc: PendingDoc, title: string): { text: string } {
    const what = doc.object_kind === 'poll' ? (doc.count === 1 ? 'vote' : 'votes') : doc.count === 1 ? 'response' : 'responses';
    const page = `${this.mail.base()}/dashboard/${doc.object_kind}s/${doc.object_id}`;
    return { text: `${doc.count} new ${what} to *${slackEscape(title)}*: <${page}|see them on the dashboard>` };
  }

  /** Sends the Slack messages that are due, each retried on the webhooks' schedule. */
  private sendSlack(): Promise<void> {
    this.slackRun ??= this.drainSlack().finally(() => (this.slackRun = undefined));
    return this.slackRun;
  }

  private async drainSlack(): Promise<void> {
    for (;;) {
      const now = this.clock();
      const due = (await this.readModels.find(NOTIFY_SLACK_DELIVERIES, { status: 'pending' }, { sort: [['next_attempt_at', 1], ['id', 1]], limit: 20 })) as SlackDelivery[];
      const ready = due.filter((d) => Date.parse(d.next_attempt_at ?? '') <= now.getTime());
      if (ready.length === 0) {
        if (due[0]) this.wake(Date.parse(due[0].next_attempt_at!));
        return;
      }
      for (const delivery of ready) {
        if (this.stopping) return;
        await this.attemptSlack(delivery);
      }
    }
  }

  private async attemptSlack(delivery: SlackDelivery): Promise<void> {
    const timeoutMs = this.options.timeoutMs ?? 10_000;
    let status: number | null = null;
    let error: string | null = null;
    const checked = await checkTarget(delivery.url, { allowPrivate: this.options.allowPrivate ?? false, resolve: this.options.resolve ?? systemResolve });
    if (!checked.ok) error = `refused: ${checked.reason}`;
    else {
      try {
        ({ status } = await (this.options.send ?? sendOverHttp)({ url: delivery.url, address: checked.address, family: checked.family, headers: {}, body: delivery.body, timeoutMs }));
        if (status < 200 || status >= 300) error = `answered ${status}`;
      } catch (failure) {
        error = `no answer (${(failure as NodeJS.ErrnoException).code ?? (failure as Error).name})`;
      }
    }
    const attempts = delivery.attempts + 1;
    const exhausted = error !== null && attempts > this.schedule.length;
    if (error !== null) this.logger.warn({ object: delivery.object_id, attempts, err: error }, exhausted ? 'a Slack notification failed for its whole retry schedule: given up' : 'a Slack notification was not accepted; trying again later');
    const set: Partial<SlackDelivery> =
      error === null
        ? { status: 'delivered', attempts, last_status: status, last_error: null, next_attempt_at: null }
        : { status: exhausted ? 'failed' : 'pending', attempts, last_status: status, last_error: error, next_attempt_at: exhausted ? null : new Date(this.clock().getTime() + this.schedule[attempts - 1]!).toISOString() };
    await this.readModels.write([{ op: 'patch', collection: NOTIFY_SLACK_DELIVERIES, where: { id: delivery.id, status: 'pending' }, set }], [], this.fence);
  }
}
