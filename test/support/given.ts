import type { Aggregate } from '../../src/aggregate.js';
import { AppError } from '../../src/errors.js';

/** given these events, when this command, then these events (or this error code). */
export function given<S, E extends { type: string; data: unknown }, C>(aggregate: Aggregate<S, E, C>, history: E[]) {
  const state = history.reduce(aggregate.evolve, aggregate.initial());
  return {
    when(command: C): { events: E[] } | { error: string } {
      try {
        return { events: aggregate.decide(command, state) };
      } catch (error) {
        if (error instanceof AppError) return { error: error.code };
        throw error;
      }
    },
  };
}
