import { z } from 'zod';
import type { Context } from '../kernel/context.js';
import type { Parent } from './state.js';

/**
 * Records a request to erase responses (or votes) of one parent, which the
 * caller has checked is the account's, and waits for the erasure process
 * as `awaitErasure` does. `keyId` names the API key that asked, null for a
 * dashboard member (whose session is the metadata's actor).
 */
export async function requestErasure(
  services: Context,
  request: { accountId: string; parent: Parent; parentId: string; ids: string[]; keyId: string | null; actor: string; requestId: string },
): Promise<ErasureAnswer> {
  const erasureId = services.ids('ers');
  const now = services.clock().toISOString();
  const stream = erasureStream.requested(erasureId);
  const { accountId, parent, parentId, ids, keyId, actor, requestId } = request;
  const { position } = await services.events.append(
    stream,
    [
      services.catalog.serialize(
        { type: 'ErasureRequested', data: { erasure_id: erasureId, account_id: accountId, parent, parent_id: parentId, response_ids: ids, key_id: keyId, requested_at: now } },
        { occurred_at: now, actor, request_id: requestId },
      ),
    ],
    'no_stream',
  );
  const { done, erased } = await awaitErasure(services, stream, position);
  return done ? { status: 200, body: { success: true, deleted: erased, erasure_id: erasureId } } : { status: 202, body: { success: true, pending: true, erasure_id: erasureId } };
}

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

const ErasureId = z.string().describe('Names the erasure in the audit history (stream `erasure-<erasure_id>`)');

/** What a request to erase submissions answers, by status: done within the wait (the count erased), or still running. */
export const ErasureReplies = {
  200: z.object({ success: z.literal(true), deleted: z.number().int(), erasure_id: ErasureId }),
  202: ErasurePending.extend({ erasure_id: ErasureId }),
};

export type ErasureAnswer = { status: 200; body: z.input<(typeof ErasureReplies)[200]> } | { status: 202; body: z.input<(typeof ErasureReplies)[202]> };
