import type { Services } from '../services.js';
import { RESPONSES } from '../../projections/responses.js';

export interface Erasure {
  accountId: string;
  parent: 'widget' | 'form' | 'poll';
  parentId: string;
  /** Candidates; only those that belong to the parent are erased. */
  responseIds: string[];
  reason: 'bulk_delete' | 'parent_deleted';
  keyId: string | null;
  requestId?: string;
}

const PARENT_FIELD = { widget: 'widget_id', form: 'form_id', poll: 'poll_id' } as const;
const CHUNK = 1000;

/**
 * Erases responses for good: their streams leave the event store, and an
 * audit event in the account's erasure stream records which ids went, when
 * and by which key, never what they said. The read models drop them when
 * they apply that event, so a rebuild cannot bring them back.
 */
export async function eraseResponses(services: Services, erasure: Erasure): Promise<number> {
  const field = PARENT_FIELD[erasure.parent];
  const owned: string[] = [];
  for (const id of new Set(erasure.responseIds)) {
    const doc = await services.readModels.get(RESPONSES, id);
    if (doc && doc[field] === erasure.parentId && doc.account_id === erasure.accountId) owned.push(id);
  }
  if (owned.length === 0) return 0;
  for (const id of owned) await services.events.deleteStream(`response-${id}`);
  const now = services.clock();
  for (let i = 0; i < owned.length; i += CHUNK) {
    const { position } = await services.events.append(
      `erasures-${erasure.accountId}`,
      [
        services.catalog.serialize(
          {
            type: 'ResponsesErased',
            data: {
              account_id: erasure.accountId,
              parent: erasure.parent,
              parent_id: erasure.parentId,
              response_ids: owned.slice(i, i + CHUNK),
              reason: erasure.reason,
              key_id: erasure.keyId,
              erased_at: now.toISOString(),
            },
          },
          { occurred_at: now.toISOString(), actor: erasure.keyId ?? 'cli', ...(erasure.requestId ? { request_id: erasure.requestId } : {}) },
        ),
      ],
      'any',
    );
    await services.commands.awaitProjections(position);
  }
  return owned.length;
}

/** Every response id of a parent, from the read models (for erasure when the parent is deleted). */
export async function responseIdsOf(services: Services, parent: Erasure['parent'], parentId: string): Promise<string[]> {
  const docs = await services.readModels.find(RESPONSES, { [PARENT_FIELD[parent]]: parentId }, { sort: [['id', 1]] });
  return docs.map((doc) => doc.id);
}
