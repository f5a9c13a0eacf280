import { UnreadableEvent, type EventCatalog } from './event-catalog.js';
import { AppError } from './errors.js';
import { WrongExpectedRevision, type EventStore, type StoredEvent } from '../infra/event-store/port.js';
import type { StateCache } from './state-cache.js';

/**
 * An aggregate is a stream plus three pure functions: the state before any
 * event, how an event changes it, and what a command decides given the state.
 */
export interface Aggregate<State, Event extends { type: string; data: unknown }, Command> {
  streamId(id: string): string;
  /**
   * A stream of another aggregate whose events the state starts from, read
   * before its own stream and never appended to here: what an aggregate
   * inherits from the fact that made it (an account's members start with
   * the owner its opening recorded). Its events must not change once the
   * own stream exists, since the decision checks only the own revision.
   */
  startsFrom?(id: string): string;
  initial(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
}

export interface CommandContext {
  events: EventStore;
  catalog: EventCatalog;
  /** The last state built of each aggregate stream of `events`. */
  states: StateCache;
  /** Resolves once every projection has applied the feed up to the position (bounded wait). */
  awaitProjections(position: bigint): Promise<void>;
}

export interface CommandMeta {
  actor: string;
  at: Date;
  requestId?: string;
}

export interface CommandResult<State, Event> {
  /** The state after the new events. */
  state: State;
  events: Event[];
}

/** Group commit settles one writer per stream per batch, so N concurrent writers need N rounds. */
const ATTEMPTS = 50;

/** The stream's state: the cached one, brought up to date with the events after it. */
async function replay<State, Event extends { type: string; data: unknown }, Command>(
  context: Pick<CommandContext, 'events' | 'catalog' | 'states'>,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
): Promise<{ state: State; revision: bigint | undefined }> {
  const streamId = aggregate.streamId(id);
  const cached = context.states.get<State>(streamId);
  let state = cached ? cached.state : aggregate.initial();
  let revision = cached?.revision;
  const fold = (stored: StoredEvent) => {
    let parsed;
    try {
      parsed = context.catalog.parse(stored);
    } catch (error) {
      if (!(error instanceof UnreadableEvent)) throw error;
      throw new AppError('event_unreadable', 'A stored event of this object cannot be read by this version of the service', undefined, { cause: error });
    }
    if (parsed) state = aggregate.evolve(state, parsed as unknown as Event);
  };
  // A cached state holds what it started from already.
  if (!cached && aggregate.startsFrom) for (const event of await context.events.readStream(aggregate.startsFrom(id))) fold(event);
  for (const event of await context.events.readStream(streamId, revision === undefined ? {} : { fromRevision: revision + 1n })) {
    fold(event);
    revision = event.revision;
  }
  if (revision !== undefined && revision !== cached?.revision) context.states.set(streamId, revision, state);
  return { state, revision };
}

/**
 * Loads the stream, decides, and appends with the revision it loaded. When
 * another writer got there first, it loads again and decides again, so no
 * concurrent change is lost and no decision is made on stale state.
 */
export async function execute<State, Event extends { type: string; data: unknown }, Command>(
  context: CommandContext,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
  command: Command,
  meta: CommandMeta,
): Promise<CommandResult<State, Event>> {
  const streamId = aggregate.streamId(id);
  for (let attempt = 1; ; attempt++) {
    const { state, revision } = await replay(context, aggregate, id);
    const events = aggregate.decide(command, state);
    if (events.length === 0) return { state, events };
    try {
      const result = await context.events.append(
        streamId,
        events.map((event) =>
          context.catalog.serialize(event, {
            occurred_at: meta.at.toISOString(),
            actor: meta.actor,
            ...(meta.requestId ? { request_id: meta.requestId } : {}),
          }),
        ),
        revision ?? 'no_stream',
      );
      await context.awaitProjections(result.position);
      return { state: events.reduce(aggregate.evolve, state), events };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevision)) throw error;
      if (attempt >= ATTEMPTS) throw new AppError('conflict', 'The object kept changing while this request ran; send it again');
      // A little jitter, so writers that collided do not collide again in the next batch.
      await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(attempt, 5)));
    }
  }
}

/**
 * The state of one aggregate as this process last built it, and its
 * revision, without reading the store; undefined when none is kept. For a
 * decision the store checks at its append (a condition that the stream is
 * still at that revision), on a store whose appends are atomic.
 */
export function keptState<State, Event extends { type: string; data: unknown }, Command>(
  context: Pick<CommandContext, 'states'>,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
): { state: State; revision: bigint } | undefined {
  const kept = context.states.get<State>(aggregate.streamId(id));
  return kept ? { state: kept.state, revision: kept.revision } : undefined;
}

/** The current state of one aggregate and the revision it was built to (undefined: no stream), read from the store. */
export function loadWithRevision<State, Event extends { type: string; data: unknown }, Command>(
  context: Pick<CommandContext, 'events' | 'catalog' | 'states'>,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
): Promise<{ state: State; revision: bigint | undefined }> {
  return replay(context, aggregate, id);
}

/** The current state of one aggregate, for decisions made outside `execute` (submissions). */
export async function load<State, Event extends { type: string; data: unknown }, Command>(
  context: Pick<CommandContext, 'events' | 'catalog' | 'states'>,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
): Promise<State> {
  return (await loadWithRevision(context, aggregate, id)).state;
}

/** Whether two configuration values are the same (decisions skip events that change nothing). */
export const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
