import type { Test } from 'tap';
import type { Aggregate } from '../../src/kernel/aggregate.js';
import { AppError, type ErrorCode, type ErrorDetail } from '../../src/kernel/errors.js';

/**
 * given / when / then on a pure decision:
 *   decisionOf(t, decide).given(state).when(command).then(events)
 *   aggregateOf(t, aggregate).given(events).when(command).thenThrows(code)
 * The outcome of `when` is not a promise, whatever its `then` suggests: never await it.
 */
export interface Outcome<E> {
  /** Exactly these events, in this order. */
  then(expected: E[], message?: string): void;
  /** Events that match the pattern; answers them, to build the next history. */
  thenMatches(pattern: unknown, message?: string): E[];
  /** Refused with this code (and, when given, details that match these). */
  thenThrows(code: ErrorCode, message?: string, details?: Partial<ErrorDetail>[]): void;
}

function outcome<E>(t: Test, decide: () => E[]): Outcome<E> {
  const run = (message: string | undefined): E[] | undefined => {
    try {
      return decide();
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      t.fail(message ?? 'decided', { found: `${error.code}: ${error.message}`, wanted: 'events' });
      return undefined;
    }
  };
  return {
    then(expected, message) {
      const events = run(message);
      if (events) t.strictSame(events, expected, message ?? 'these events');
    },
    thenMatches(pattern, message) {
      const events = run(message) ?? [];
      t.match(events, pattern, message ?? 'events like these');
      return events;
    },
    thenThrows(code, message, details) {
      let events: E[];
      try {
        events = decide();
      } catch (error) {
        if (!(error instanceof AppError)) throw error;
        t.equal(error.code, code, message ?? `refused with ${code}`);
        if (details) t.match(error.details, details, `${message ?? code}: details`);
        return;
      }
      t.fail(message ?? `refused with ${code}`, { found: events, wanted: code });
    },
  };
}

/** A decision taken on a state given as such (what the store was read to hold). */
export function decisionOf<S, E, C>(t: Test, decide: (command: C, state: S) => E[]) {
  return { given: (state: S) => ({ when: (command: C): Outcome<E> => outcome(t, () => decide(command, state)) }) };
}

/** An aggregate's decision, its state built from the events given. */
export function aggregateOf<S, E extends { type: string; data: unknown }, C>(t: Test, aggregate: Aggregate<S, E, C>) {
  const decision = decisionOf(t, aggregate.decide);
  return { given: (history: E[]) => decision.given(history.reduce(aggregate.evolve, aggregate.initial())) };
}
