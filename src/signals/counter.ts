import type { FastifyBaseLogger } from 'fastify';
import type { EventStore } from '../infra/event-store/port.js';
import type { Clock } from '../infra/ids.js';
import type { EventCatalog } from '../kernel/event-catalog.js';
import type { SignalEvent } from './events.js';

export type SignalType = 'display' | 'start';
export type SignalTarget = 'widget' | 'form' | 'poll';

/** The breakdowns a count keeps, as the owner's plan records them of a response. */
export const FACETS = ['device', 'referer_domain', 'country', 'utm_source', 'utm_medium', 'utm_campaign'] as const;
export type Facet = (typeof FACETS)[number];
/** A signal's value of each breakdown the plan records (null: recorded but not told); a breakdown absent is not recorded. */
export type Facets = Partial<Record<Facet, string | null>>;

export interface Signal {
  target: SignalTarget;
  id: string;
  account: string;
  type: SignalType;
  session: string;
  facets: Facets;
}

type Tally = SignalEvent['data']['display'];

interface Minute {
  target: SignalTarget;
  id: string;
  account: string;
  minute: string;
  display: Tally;
  start: Tally;
}

const MINUTE_MS = 60_000;
/** How often the minutes that ended are written out. */
export const FLUSH_EVERY_MS = 5_000;
/** Sessions remembered (a visit counts once per type): the oldest are forgotten first past this many. */
const SESSIONS_KEPT = 200_000;
/** How long a session is remembered: a visit's reloads come within it. */
const SESSION_TTL_MS = 6 * 60 * 60_000;
/** Distinct values a breakdown keeps in a minute; the rest count under '(other)', so a flood of made-up values cannot grow an event. */
const VALUES_KEPT = 50;
export const OTHER = '(other)';

export const signalsStream = (id: string): string => `signals-${id}`;

const emptyTally = (): Tally => ({ total: 0 });

/**
 * Counts displays and starts in memory and writes them out as one
 * `SignalsCounted` per object and minute, once the minute has ended (a
 * timer looks every few seconds) and on shutdown. A request never waits for
 * a write, nor for the projections. A crash loses what is not written yet:
 * the minute under way and at most FLUSH_EVERY_MS of the one before.
 *
 * Whether a session was counted is remembered here only, for SESSION_TTL_MS
 * and at most SESSIONS_KEPT sessions: a random id the embed draws for one
 * visit, never stored, which names no one.
 */
export class SignalCounter {
  private readonly minutes = new Map<string, Minute>();
  /** `type:id:session` → when it is forgotten. */
  private readonly sessions = new Map<string, number>();
  /**
   * The same keys in the order counted, oldest from `oldest` on: forgetting
   * walked the map from its start, and a map walks past the entries deleted
   * from it until it is rebuilt, so each count paid for every session
   * forgotten before it (a tenth of counting a display).
   */
  private order: string[] = [];
  private oldest = 0;
  private timer: NodeJS.Timeout | undefined;
  /** The minute under way and its name: worked out once a minute, not once a signal. */
  private minuteStart = Number.NaN;
  private minuteName = '';
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: { events: EventStore; catalog: EventCatalog; clock: Clock; logger: Pick<FastifyBaseLogger, 'warn'> },
    private readonly options: { sessionsKept?: number; valuesKept?: number } = {},
  ) {}

  /** Counts the signal unless its session was counted for this object and type already; answers whether it counted. */
  count(signal: Signal): boolean {
    const now = this.deps.clock().getTime();
    const key = `${signal.type}:${signal.id}:${signal.session}`;
    this.forgetSessions(now);
    if (this.sessions.has(key)) return false;
    this.sessions.set(key, now + SESSION_TTL_MS);
    this.order.push(key);
    const start = now - (now % MINUTE_MS);
    if (start !== this.minuteStart) {
      this.minuteStart = start;
      this.minuteName = new Date(start).toISOString();
    }
    const minute = this.minuteName;
    const at = `${signal.id}:${minute}`;
    let counts = this.minutes.get(at);
    if (counts === undefined) {
      counts = { target: signal.target, id: signal.id, account: signal.account, minute, display: emptyTally(), start: emptyTally() };
      this.minutes.set(at, counts);
    }
    const tally = counts[signal.type];
    tally.total++;
    for (const facet of FACETS) {
      if (!Object.hasOwn(signal.facets, facet)) continue;
      const values = (tally[facet] ??= {});
      let value = signal.facets[facet] ?? '';
      if (!Object.hasOwn(values, value) && Object.keys(values).length >= (this.options.valuesKept ?? VALUES_KEPT)) value = OTHER;
      values[value] = (values[value] ?? 0) + 1;
    }
    return true;
  }

  private forgetSessions(now: number): void {
    const kept = this.options.sessionsKept ?? SESSIONS_KEPT;
    while (this.oldest < this.order.length) {
      const key = this.order[this.oldest]!;
      if (this.sessions.get(key)! > now && this.sessions.size < kept) break;
      this.sessions.delete(key);
      this.oldest++;
    }
    // The forgotten keys' places are given back once they are half the list.
    if (this.oldest > 1024 && this.oldest * 2 > this.order.length) {
      this.order = this.order.slice(this.oldest);
      this.oldest = 0;
    }
  }

  /** Writes out the minutes that have ended, or every minute counted (`all`, on shutdown). */
  flush(all = false): Promise<void> {
    this.flushing = this.flushing.then(() => this.write(all));
    return this.flushing;
  }

  private async write(all: boolean): Promise<void> {
    const now = this.deps.clock().getTime();
    const current = new Date(now - (now % MINUTE_MS)).toISOString();
    for (const [at, counts] of [...this.minutes]) {
      if (!all && counts.minute >= current) continue;
      this.minutes.delete(at);
      const event: SignalEvent = {
        type: 'SignalsCounted',
        data: { target: counts.target, target_id: counts.id, account_id: counts.account, minute: counts.minute, display: counts.display, start: counts.start },
      };
      try {
        await this.deps.events.append(signalsStream(counts.id), [this.deps.catalog.serialize(event, { occurred_at: new Date(now).toISOString(), actor: 'public' })], 'any');
      } catch (error) {
        // Lost with this process if it never succeeds: counts, not facts anyone relies on.
        this.merge(at, counts);
        this.deps.logger.warn({ err: error, target_id: counts.id }, 'could not record display and start counts; retrying with the next flush');
      }
    }
  }

  /** Puts counts that could not be written back, adding to any counted meanwhile. */
  private merge(at: string, counts: Minute): void {
    const later = this.minutes.get(at);
    if (later !== undefined) {
      for (const type of ['display', 'start'] as const) {
        later[type].total += counts[type].total;
        for (const facet of FACETS) {
          const from = counts[type][facet];
          if (from === undefined) continue;
          const into = (later[type][facet] ??= {});
          for (const [value, n] of Object.entries(from)) into[value] = (into[value] ?? 0) + n;
        }
      }
    } else this.minutes.set(at, counts);
  }

  /** How many object-minutes wait to be written. */
  get pending(): number {
    return this.minutes.size;
  }

  start(everyMs = FLUSH_EVERY_MS): void {
    if (this.timer) return;
    this.timer = setInterval(() => void this.flush(), everyMs);
    this.timer.unref();
  }

  /** Stops the timer and writes out everything counted. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.flush(true);
  }
}
