import type { EventCatalog } from './event-catalog.js';
import { WrongExpectedRevision, type EventStore } from './infra/event-store/port.js';

/**
 * An aggregate is a stream plus three pure functions: the state before any
 * event, how an event changes it, and what a command decides given the state.
 */
export interface Aggregate<State, Event extends { type: string; data: unknown }, Command> {
  streamId(id: string): string;
  initial(): State;
  evolve(state: State, event: Event): State;
  decide(command: Command, state: State): Event[];
}

export interface CommandContext {
  events: EventStore;
  catalog: EventCatalog;
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

const ATTEMPTS = 5;

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
    const stored = await context.events.readStream(streamId);
    let state = aggregate.initial();
    for (const event of stored) {
      const parsed = context.catalog.parse(event);
      if (parsed) state = aggregate.evolve(state, parsed as unknown as Event);
    }
    const events = aggregate.decide(command, state);
    if (events.length === 0) return { state, events };
    const last = stored[stored.length - 1];
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
        last ? last.revision : 'no_stream',
      );
      await context.awaitProjections(result.position);
      return { state: events.reduce(aggregate.evolve, state), events };
    } catch (error) {
      if (!(error instanceof WrongExpectedRevision) || attempt >= ATTEMPTS) throw error;
    }
  }
}

/** The current state of one aggregate, for decisions made outside `execute` (submissions). */
export async function load<State, Event extends { type: string; data: unknown }, Command>(
  context: Pick<CommandContext, 'events' | 'catalog'>,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
): Promise<State> {
  let state = aggregate.initial();
  for (const event of await context.events.readStream(aggregate.streamId(id))) {
    const parsed = context.catalog.parse(event);
    if (parsed) state = aggregate.evolve(state, parsed as unknown as Event);
  }
  return state;
}

/** Whether two configuration values are the same (decisions skip events that change nothing). */
export const sameJson = (a: unknown, b: unknown): boolean => JSON.stringify(a) === JSON.stringify(b);
