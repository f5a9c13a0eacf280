import { awaitErasure, erasureStream } from '../erasure/outcome.js';
import type { Context } from '../kernel/context.js';
import type { Kind } from './kinds.js';

/** Who asks for a change of an embeddable: the owner's account, and the actor its events record (a key id or a dashboard session id). */
export interface Author {
  accountId: string;
  actor: string;
  requestId?: string;
}

/**
 * Deletes an object (`remove` runs its aggregate's command), then waits for
 * the erasure of its responses or votes, bounded: whether it is done.
 */
export async function deleteEmbeddable(services: Context, kind: Kind, id: string, author: Author, remove: (id: string, author: Author, at: Date) => Promise<unknown>): Promise<{ done: boolean }> {
  await remove(id, author, services.clock());
  const { done } = await awaitErasure(services, erasureStream.parent(kind, id), await services.events.headPosition());
  return { done };
}
