import { keptState, load, loadWithRevision, type Aggregate } from '../kernel/aggregate.js';
import { AppError } from '../kernel/errors.js';
import type { Context } from '../kernel/context.js';
import { ObjectChanged, type ObjectAt } from './visitors.js';

/** Appends with the condition that the object is as decided, each refused because it had moved on, before a decision is made without one. */
const CONDITIONED_ATTEMPTS = 3;

/**
 * Runs `act` (a submission or a vote: decide, append) on the state of the
 * object it answers. Where the store's appends are atomic, that is the state
 * this process last built of the object, its stream not read, and `act`
 * appends with the condition (`unchanged`) that the stream is still at that
 * revision: the store checks it with the rest, so a change (a close, a
 * deletion) that landed in between refuses the append (ObjectChanged) and
 * the decision is made again on the stored state. A refusal made on a kept
 * state is made again on the stored one too, so none rests on a state the
 * store has moved past. Elsewhere (KurrentDB appends part by part) the
 * state is read and `act` appends without a condition: `conditioned` false
 * says the object is to be looked at again (see `stillThere`).
 */
export async function onObjectAsDecided<State, Event extends { type: string; data: unknown }, Command, Target, Result>(
  services: Pick<Context, 'events' | 'commands'>,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
  targetOf: (state: State) => Target | null,
  gone: () => AppError,
  act: (target: Target, unchanged: ObjectAt | undefined) => Promise<Result>,
): Promise<{ result: Result; conditioned: boolean }> {
  const atomic = services.events.atomicAcrossStreams;
  let kept = true;
  for (let attempt = 1; ; attempt++) {
    // After those, one as without a condition: decided on the stored state, and looked at again after.
    const conditioned = atomic && attempt <= CONDITIONED_ATTEMPTS;
    const held = kept && conditioned ? keptState(services.commands, aggregate, id) : undefined;
    const found = held ?? (await loadWithRevision(services.commands, aggregate, id));
    const unchanged = conditioned && found.revision !== undefined ? { stream: aggregate.streamId(id), revision: found.revision } : undefined;
    try {
      const target = targetOf(found.state);
      if (!target) throw gone();
      return { result: await act(target, unchanged), conditioned: unchanged !== undefined };
    } catch (error) {
      // The store had moved past the state decided on, or refused on the state this process kept,
      // which the store may have moved past: decided again on the stored one.
      if (error instanceof ObjectChanged || (held !== undefined && error instanceof AppError)) {
        kept = false;
        continue;
      }
      throw error;
    }
  }
}

/** Whether the object is there (not deleted) as stored now: looked at after an append made without the condition. */
export async function stillThere<State, Event extends { type: string; data: unknown }, Command>(
  services: Pick<Context, 'commands'>,
  aggregate: Aggregate<State, Event, Command>,
  id: string,
  targetOf: (state: State) => unknown,
): Promise<boolean> {
  return targetOf(await load(services.commands, aggregate, id)) !== null;
}
