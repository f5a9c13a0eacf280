import { z } from 'zod';
import type { Context } from '../kernel/context.js';
import type { Parent } from './state.js';

/** The stream an erasure is recorded in: a request's own, or one per deleted parent or late submission. */
export const erasureStream = {
  requested: (erasureId: string) => `erasure-${erasureId}`,
  parent: (parent: Parent, id: string) => `erasure-${parent}-${id}`,
  late: (submissionId: string) => `erasure-late-${submissionId}`,
};

/**
 * Waits until the erasure process has handled the feed up to the position
 * and the read models show what it erased (bounded by `erasureWaitMs`).
 * `done` false: the wait ran out; the erasure goes on without the caller.
 */
export async function awaitErasure(services: Context, stream: string, position: bigint): Promise<{ done: boolean; erased: number }> {
  if (!(await services.reach.erasure(position, services.erasureWaitMs))) return { done: false, erased: 0 };
  let erased = 0;
  let last = 0n;
  for (const stored of await services.events.readStream(stream)) {
    const event = services.catalog.parse(stored);
    if (event?.type !== 'ResponsesErased') continue;
    // The shape of ResponsesErased (submissions/events.ts), which the erasure process records here.
    erased += (event.data as { response_ids: string[] }).response_ids.length;
    last = stored.position;
  }
  await services.commands.awaitProjections(last);
  return { done: true, erased };
}

/** The reply when the erasure outlasted the wait: recorded, and finished in the background. */
export const ErasurePending = z.object({
  success: z.literal(true),
  pending: z.literal(true).describe('The erasure is recorded and finishes in the background, across restarts'),
});
