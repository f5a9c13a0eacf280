import type { FastifyBaseLogger } from 'fastify';
import { ACCOUNTS } from '../../projections/accounts.js';
import { MEMBERS } from '../../projections/members.js';
import type { EventStore, StoredEvent } from '../infra/event-store/port.js';
import type { Clock } from '../infra/ids.js';
import type { Mailer } from '../infra/mail.js';
import type { CollectionSpec, Doc, ReadModelOp, ReadModelStore } from '../infra/read-models/port.js';
import type { EventCatalog } from '../kernel/event-catalog.js';
import { SendingProcessor } from '../kernel/feed/sending.js';
import type { FeedEvent } from '../kernel/feed/projection.js';
import { mailsOf, render, type MailEntry, type MailReads, type NotificationMail, type ShownAnswers } from './messages.js';
import { RESPONSES } from '../../projections/responses.js';

const COLLECTIONS = { widget: 'widgets', form: 'forms', poll: 'polls' } as const;

/** The answers of a notification's responses, as they are now (an erased response is gone), by question title. */
async function shownAnswers(readModels: ReadModelStore, reveal: Reveal, entry: NotificationMail): Promise<ShownAnswers> {
  const object = await readModels.get(COLLECTIONS[entry.object_kind], entry.object_id);
  const questions = Array.isArray(object?.questions) ? (object.questions as Array<{ id?: unknown; title?: unknown }>) : [];
  const titleOf = (id: string) => String(questions.find((q) => q.id === id)?.title ?? id);
  const shown: ShownAnswers = [];
  for (const id of entry.response_ids) {
    const stored = await readModels.get(RESPONSES, id);
    // The read model keeps a sealed response's answers sealed: opened here, as the mail is written (an erased one is left out).
    const [response] = stored ? await reveal([stored]) : [];
    if (!response || typeof response.answers !== 'object' || response.answers === null) continue;
    const answers = Object.entries(response.answers as Record<string, unknown>).map(([question, answer]): [string, string] => [titleOf(question), typeof answer === 'object' ? JSON.stringify(answer) : String(answer)]);
    shown.push({ submitted_at: String(response.submitted_at), answers });
  }
  return shown;
}

export const MAIL_OUTBOX = 'mail_outbox';
export const mailOutboxState = {
  name: 'mail_outbox',
  version: 1,
  collections: [{ name: MAIL_OUTBOX, indexes: [['status', 'next_attempt_at']] }] satisfies CollectionSpec[],
};

/** 10 s, 1 min, 5 min, 30 min, 2 h, 6 h: about 9 hours from the first attempt to the last, then the mail is given up. */
export const DEFAULT_MAIL_SCHEDULE_MS = [10_000, 60_000, 300_000, 1_800_000, 7_200_000, 21_600_000];

export interface OutboxDoc {
  id: string;
  entry: MailEntry;
  status: 'pending' | 'sent' | 'failed';
  attempts: number;
  next_attempt_at: string | null;
  last_error: string | null;
  created_at: string;
  sent_at: string | null;
}

/** Read-model documents with their sealed personal fields opened, the erased ones left out (PersonalCodec.reveal). */
export type Reveal = (docs: Doc[]) => Promise<Doc[]>;

export interface OutboxOptions {
  reveal?: Reveal;
  schedule?: number[];
  retryMs?: number;
  batchSize?: number;
  restMs?: number;
}

const pad = (position: bigint): string => position.toString().padStart(20, '0');

/**
 * The service's mail, driven by the event feed as webhooks are: beside the
 * projections under the projector lease, it follows the feed from its own
 * checkpoint and, in the write that moves it, records in the outbox each
 * mail an event asks for (a sign-in link, an invitation). It then sends
 * what is due, one at a time, storing each attempt's outcome after it: a
 * crash between the two sends it again (at least once), a refusal is tried
 * again on the schedule, and nothing recorded is lost to a restart. Nothing
 * is ever sent from inside a request.
 */
export class MailOutbox extends SendingProcessor<MailReads> {
  private readonly schedule: number[];
  private readonly reveal: Reveal;

  constructor(
    events: EventStore,
    readModels: ReadModelStore,
    catalog: EventCatalog<FeedEvent>,
    private readonly mailer: Mailer,
    /** The service's public address and the key links are signed with. */
    private readonly links: { base: () => string; key: Buffer },
    clock: Clock,
    logger: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>,
    options: OutboxOptions = {},
  ) {
    // Given the catalog of every feature's events; it reads those MailReads names, and passes the others by.
    super({ label: 'the mail outbox', state: mailOutboxState, events, readModels, catalog: catalog as EventCatalog<MailReads>, clock, logger, ...options });
    this.schedule = options.schedule ?? DEFAULT_MAIL_SCHEDULE_MS;
    this.reveal = options.reveal ?? (async (docs) => docs);
  }

  /** Records what the feed holds now and sends what is due (tests and the admin CLI; a server follows the feed). */
  override async catchUp(): Promise<void> {
    await super.catchUp();
    await this.sendDue();
  }

  protected async handle(batch: StoredEvent[]): Promise<void> {
    const ops: ReadModelOp[] = [];
    let last = this.checkpoint;
    const now = this.clock().toISOString();
    for (const { stored, event } of this.readable(batch)) {
      last = stored.position;
      if (!event) continue;
      const mails = mailsOf(event, () => null);
      for (const [index, entry] of mails.entries()) {
        if (entry.kind === 'invitation') {
          // Who invited, by address: the member's read model, which is ahead of this process or level with it.
          const by = event.type === 'MemberInvited' ? await this.readModels.get(MEMBERS, event.data.by) : null;
          entry.by_email = typeof by?.email === 'string' ? by.email : null;
        }
        const doc: OutboxDoc = { id: `${pad(stored.position)}.${index}`, entry, status: 'pending', attempts: 0, next_attempt_at: now, last_error: null, created_at: now, sent_at: null };
        ops.push({ op: 'put', collection: MAIL_OUTBOX, doc: { ...doc } });
      }
    }
    if (last === this.checkpoint) return;
    await this.commit(ops, last);
    if (ops.length > 0) this.kick();
  }

  /** Sends what is due now: for a process that has just put mail in the outbox (the notifier). */
  poke(): void {
    this.kick();
  }

  /** Sends every pending mail that is due, oldest first, then sleeps until the next one is. */
  protected async sendDue(): Promise<void> {
    for (;;) {
      const due = (await this.readModels.find(MAIL_OUTBOX, { status: 'pending' }, { sort: [['next_attempt_at', 1], ['id', 1]], limit: 20 })) as unknown as OutboxDoc[];
      if (due.length === 0) return;
      const now = this.clock().getTime();
      const ready = due.filter((doc) => Date.parse(doc.next_attempt_at ?? '') <= now);
      if (ready.length === 0) return this.wake(Date.parse(due[0]!.next_attempt_at!));
      for (const doc of ready) {
        if (this.stopping) return;
        await this.attempt(doc);
      }
    }
  }

  private accountName = new Map<string, string>();

  private async attempt(doc: OutboxDoc): Promise<void> {
    const now = this.clock();
    const ids = doc.entry.kind === 'sign_in' ? doc.entry.links.map((l) => l.account_id) : doc.entry.kind === 'invitation' ? [doc.entry.account_id] : [];
    for (const id of ids) {
      const account = await this.readModels.get(ACCOUNTS, id);
      this.accountName.set(id, typeof account?.name === 'string' ? account.name : id);
    }
    const answers = doc.entry.kind === 'notification' && doc.entry.include_answers ? await shownAnswers(this.readModels, this.reveal, doc.entry) : undefined;
    const message = render(doc.entry, { base: this.links.base(), key: this.links.key, accountName: (id) => this.accountName.get(id) ?? id, ...(answers ? { answers } : {}) }, now);
    let set: Partial<OutboxDoc>;
    try {
      await this.mailer.send(message);
      set = { status: 'sent', attempts: doc.attempts + 1, sent_at: this.clock().toISOString(), next_attempt_at: null, last_error: null };
    } catch (error) {
      const attempts = doc.attempts + 1;
      const exhausted = attempts > this.schedule.length;
      const reason = String((error as Error).message ?? error).slice(0, 300);
      this.logger.warn({ mail: doc.id, attempts, err: reason }, exhausted ? 'a mail failed for its whole retry schedule: given up' : 'a mail was not accepted; trying again later');
      set = { status: exhausted ? 'failed' : 'pending', attempts, last_error: reason, next_attempt_at: exhausted ? null : new Date(this.clock().getTime() + this.schedule[attempts - 1]!).toISOString() };
    }
    await this.readModels.write([{ op: 'patch', collection: MAIL_OUTBOX, where: { id: doc.id, status: 'pending' }, set }], [], this.fence);
  }
}
