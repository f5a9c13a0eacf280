import type { FastifyBaseLogger } from 'fastify';
import { targetOf } from '../erasure/state.js';
import type { EventCatalog, Recorded } from '../kernel/event-catalog.js';
import { WrongExpectedRevision, type EventStore, type FeedRecord, type JsonObject } from '../infra/event-store/port.js';
import type { Clock } from '../infra/ids.js';
import { nextTurn } from '../kernel/feed/progress.js';
import type { FeedEvent } from '../kernel/feed/projection.js';
import { formatLine, leafOf, SEAL_STREAM, sealHash, type SealLine, type SealVersion } from './chain.js';
import { LogSealed, type SealEvent } from './events.js';
import type { FeedProcessor } from '../kernel/feed/processor.js';

export interface SealingOptions {
  /** A seal covers at most this many events; as many waiting seal at once. */
  everyEvents?: number;
  /** Fewer events than that are sealed once this long has passed since the last seal. */
  everyMs?: number;
  /** How often the live loop looks for events to seal. */
  pollMs?: number;
  /** Retry delay after a store error. */
  retryMs?: number;
}

/** Where the chain stands: read from the last seal, never kept anywhere else. */
interface ChainHead {
  /** The number the next seal takes (its revision in the seal stream). */
  next: number;
  previous: string | null;
  through: bigint;
  sealedAt: number;
}

/** The lines of one seal stay well inside the store's largest append. */
const MAX_SEAL_BYTES = 512 * 1024;

/** What the erasure process appends once it has deleted the streams it erases. */
const ERASURE_RECORD = 'ResponsesErased';

/** The version the catalog writes LogSealed in: its lines and hash are made that way. */
const SEAL_VERSION = LogSealed.version as SealVersion;

/** Events read, and their lines worked out, between two turns of the event loop. */
const LINES_PER_TURN = 100;

/**
 * The next seal's lines, worked out as the events come: a sealer that waits
 * for more events (or for its interval) reads only what was appended since
 * it last looked, rather than every event after the last seal again. A seal
 * still lists what the store held when it was appended: an erasure's record
 * among the new events sends the sealer back to read the rest afresh.
 */
interface NextSeal {
  /** The position of its last line's event (the last seal's when it has none). */
  through: bigint;
  lines: string[];
  bytes: number;
  /** No further line fits. */
  full: boolean;
  /** Every line is of the seal stream. */
  sealsOnly: boolean;
  /**
   * The feed's head when the first of its lines was read: an erasure
   * recorded up to there had deleted its streams before any line was read.
   */
  readAfterHead: bigint;
}

/** The last seal of the history, none before the first; an error when the seal stream was deleted or does not end in a seal. */
export async function lastSeal(events: EventStore, catalog: EventCatalog<FeedEvent>): Promise<{ revision: bigint; seal: Omit<SealEvent['data'], 'events'> } | null> {
  const state = await events.streamState(SEAL_STREAM);
  if (state === 'deleted') throw new Error(`the ${SEAL_STREAM} stream was deleted: the history can no longer be sealed`);
  if (state === 'no_stream') return null;
  const [last] = await events.readStream(SEAL_STREAM, { fromRevision: state, maxCount: 1 });
  // Given the catalog of every feature's events: the seal stream holds seals only, which the check below holds to.
  const parsed = last && (catalog as EventCatalog<SealEvent>).parse(last);
  if (!parsed || parsed.type !== 'LogSealed') throw new Error(`the last event of the ${SEAL_STREAM} stream is not a seal`);
  const { events: _lines, ...seal } = parsed.data;
  return { revision: state, seal };
}

/**
 * Seals the history: appends `LogSealed` to the `seals` stream every
 * `everyEvents` events or `everyMs` ms, whichever comes first, covering every
 * event after the previous seal (seals included, so each seal is itself
 * sealed by the next). It runs beside the projections, under the projector
 * lease.
 *
 * Its checkpoint is the last seal itself: where the chain stands is read back
 * from the seal stream, and the seal is appended at the revision after the
 * previous one. So there is no moment between "sealed" and "checkpoint
 * stored": a process that dies after its append finds that seal on restart
 * and goes on after it (nothing sealed twice, nothing skipped), and a second
 * sealer (a projector that lost its lease and does not know yet) has its
 * append refused and reads the chain again.
 */
export class SealingProcess implements FeedProcessor {
  private head: ChainHead | undefined;
  private next: NextSeal | undefined;
  private turn: Promise<unknown> = Promise.resolve();
  private loop: Promise<void> | undefined;
  private stopped = true;
  private wake: (() => void) | undefined;
  private readonly everyEvents: number;
  private readonly everyMs: number;
  private readonly pollMs: number;
  private readonly retryMs: number;

  constructor(
    private readonly events: EventStore,
    private readonly catalog: EventCatalog<FeedEvent>,
    private readonly clock: Clock,
    private readonly logger: Pick<FastifyBaseLogger, 'error' | 'warn' | 'info'>,
    options: SealingOptions = {},
  ) {
    this.everyEvents = options.everyEvents ?? 1000;
    this.everyMs = options.everyMs ?? 10_000;
    this.pollMs = options.pollMs ?? Math.min(1000, this.everyMs);
    this.retryMs = options.retryMs ?? 1000;
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    // Read again: another process may have sealed while this one was not sealing.
    this.forget();
    this.loop = this.follow();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  /** Seals everything stored now, however little (the admin CLI, tests); answers the number of seals appended. */
  async sealAll(): Promise<number> {
    let sealed = 0;
    for (;;) {
      const outcome = await this.sealOnce(true);
      if (outcome === 'nothing') return sealed;
      if (outcome === 'sealed') sealed++;
    }
  }

  private async follow(): Promise<void> {
    while (!this.stopped) {
      let pause = this.pollMs;
      try {
        const outcome = await this.sealOnce(false);
        if (outcome === 'sealed' || outcome === 'raced') continue;
      } catch (error) {
        this.logger.error({ err: error }, 'sealing stopped; trying again');
        this.forget();
        pause = this.retryMs;
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, pause);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async load(): Promise<ChainHead> {
    const last = await lastSeal(this.events, this.catalog);
    // The first seal waits its time like any other, counted from when sealing began.
    if (last === null) return { next: 0, previous: null, through: 0n, sealedAt: this.clock().getTime() };
    return { next: Number(last.revision) + 1, previous: last.seal.hash, through: BigInt(last.seal.through), sealedAt: Date.parse(last.seal.sealed_at) };
  }

  /** One at a time: the live loop and sealAll (tests, the CLI) add to the same next seal. */
  private sealOnce(force: boolean): Promise<'sealed' | 'nothing' | 'waiting' | 'raced'> {
    const run = this.turn.then(() => this.sealNext(force));
    this.turn = run.catch(() => undefined);
    return run;
  }

  private async sealNext(force: boolean): Promise<'sealed' | 'nothing' | 'waiting' | 'raced'> {
    const head = (this.head ??= await this.load());
    if (!this.next) {
      const readAfterHead = await this.events.headPosition();
      this.next = { through: head.through, lines: [], bytes: 0, full: false, sealsOnly: true, readAfterHead };
    }
    const next = this.next;
    // A slice at a time, with a turn of the event loop between slices: reading
    // and hashing a thousand events at once held every request of the process
    // for 20 to 30 ms, and reading them alone for several.
    while (!next.full && next.lines.length < this.everyEvents) {
      const batch = await this.events.readFeed({ after: next.through, limit: Math.min(LINES_PER_TURN, this.everyEvents - next.lines.length) });
      if (batch.length === 0) break;
      this.add(next, batch);
      await nextTurn();
      // Read again while the lines were worked out: the chain may have moved on under them.
      if (this.next !== next) return 'raced';
    }
    // Seals alone are left for the next seal: sealing them would append a seal for ever.
    if (next.sealsOnly) return 'nothing';
    const now = this.clock();
    if (!force && !next.full && next.lines.length < this.everyEvents && now.getTime() - head.sealedAt < this.everyMs) return 'waiting';

    const events = next.lines.join('\n');
    const { through } = next;
    const sealedAt = now.toISOString();
    const hash = sealHash({ version: SEAL_VERSION, seal: head.next, previous: head.previous, from: head.through, through, sealedAt, events });
    const event = this.catalog.serialize(
      { type: LogSealed.type, data: { seal: head.next, from: String(head.through), through: String(through), count: next.lines.length, events, previous: head.previous, hash, sealed_at: sealedAt } } satisfies SealEvent,
      { occurred_at: sealedAt, actor: 'service' },
    );
    try {
      await this.events.append(SEAL_STREAM, [event], head.next === 0 ? 'no_stream' : BigInt(head.next - 1));
    } catch (error) {
      if (!(error instanceof WrongExpectedRevision)) throw error;
      // Another sealer got there first: its seal stands, this one starts again from it.
      this.forget();
      return 'raced';
    }
    this.head = { next: head.next + 1, previous: hash, through, sealedAt: now.getTime() };
    this.next = undefined;
    return 'sealed';
  }

  /** Adds the events' lines to the next seal, until it is full. */
  private add(next: NextSeal, batch: FeedRecord[]): void {
    for (const event of batch) {
      // An erasure deletes its streams before it records them erased: lines read before
      // that may be of events gone now, which a seal read afresh would not list. Read afresh.
      if (event.type === ERASURE_RECORD && event.position > next.readAfterHead && next.lines.length > 0) {
        this.next = undefined;
        return;
      }
      const line = formatLine(this.lineOf(event), SEAL_VERSION);
      if (next.lines.length > 0 && next.bytes + line.length > MAX_SEAL_BYTES) {
        next.full = true;
        return;
      }
      next.lines.push(line);
      next.bytes += line.length + 1;
      next.through = event.position;
      next.sealsOnly &&= event.streamId === SEAL_STREAM;
    }
  }

  /** The chain is read again before the next seal, and its lines worked out again. */
  private forget(): void {
    this.head = undefined;
    this.next = undefined;
  }

  private lineOf(event: FeedRecord): SealLine {
    const line: SealLine = { position: event.position, leaf: leafOf(event), stream: event.streamId, revision: event.revision, type: event.type };
    if (event.type !== 'ResponseSubmitted' && event.type !== 'ResponseProgressed' && event.type !== 'VoteCast') return line;
    try {
      // Only the ids and streams erasure reads, which every version so far keeps as they are: no schema check of the rest (the costly part).
      const data = JSON.parse(event.data) as JsonObject;
      const target = targetOf({ type: event.type, data, streamId: event.streamId } as Recorded<FeedEvent>);
      if (target && typeof target.id === 'string') return { ...line, subject: target.id, also: target.streams.filter((s) => typeof s === 'string' && s !== event.streamId) };
    } catch (error) {
      this.logger.warn({ position: String(event.position), err: error }, 'sealed a submission whose response id could not be read');
    }
    // Sealed all the same; only its erasure would not be recognised.
    return line;
  }
}
