import type { Services } from '../services.js';
import { POLL_VOTERS } from '../../projections/polls.js';
import { RESPONSES } from '../../projections/responses.js';
import type { Doc } from '../infra/read-models/port.js';

export interface Erasure {
  accountId: string;
  parent: 'widget' | 'form' | 'poll';
  parentId: string;
  /** Candidates; only those that belong to the parent are erased. */
  responseIds: string[];
  reason: 'bulk_delete' | 'parent_deleted';
  keyId: string | null;
  /** Who the audit event names when no key asked (default `cli`). */
  actor?: string;
  requestId?: string;
}

/** Where each parent's submissions are listed, and the stream each one lives in. */
const SUBMISSIONS = {
  widget: { collection: RESPONSES, field: 'widget_id', stream: (doc: Doc) => `response-${doc.id}` },
  form: { collection: RESPONSES, field: 'form_id', stream: (doc: Doc) => `response-${doc.id}` },
  poll: { collection: POLL_VOTERS, field: 'poll_id', stream: (doc: Doc) => String(doc.stream) },
} as const;
const CHUNK = 1000;

/**
 * Erases responses for good: their streams leave the event store, and an
 * audit event in the account's erasure stream records which ids went, when
 * and by which key, never what they said. The read models drop them when
 * they apply that event, so a rebuild cannot bring them back.
 */
export async function eraseResponses(services: Services, erasure: Erasure): Promise<number> {
  const { collection, field, stream } = SUBMISSIONS[erasure.parent];
  const owned: Doc[] = [];
  for (const id of new Set(erasure.responseIds)) {
    const doc = await services.readModels.get(collection, id);
    if (doc && doc[field] === erasure.parentId && doc.account_id === erasure.accountId) owned.push(doc);
  }
  if (owned.length === 0) return 0;
  for (const doc of owned) {
    await services.events.deleteStream(stream(doc));
    if (typeof doc.duplicate_guard === 'string') await services.events.deleteStream(doc.duplicate_guard);
  }
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
              response_ids: owned.slice(i, i + CHUNK).map((doc) => doc.id),
              reason: erasure.reason,
              key_id: erasure.keyId,
              erased_at: now.toISOString(),
            },
          },
          { occurred_at: now.toISOString(), actor: erasure.keyId ?? erasure.actor ?? 'cli', ...(erasure.requestId ? { request_id: erasure.requestId } : {}) },
        ),
      ],
      'any',
    );
    await services.commands.awaitProjections(position);
  }
  // Last, once the read models dropped them too: the files must not keep the deleted bytes.
  await Promise.all([services.events.expunge(), services.readModels.expunge()]);
  return owned.length;
}

/** Every response (or vote) id of a parent, from the read models (for erasure when the parent is deleted). */
export async function responseIdsOf(services: Services, parent: Erasure['parent'], parentId: string): Promise<string[]> {
  if (parent === 'poll') {
    const { collection, field } = SUBMISSIONS.poll;
    return (await services.readModels.find(collection, { [field]: parentId }, { sort: [['id', 1]] })).map((doc) => doc.id);
  }
  const { docs } = await services.readModels.newestFirst(RESPONSES, parentId, { offset: 0, limit: Number.MAX_SAFE_INTEGER });
  return docs.map((doc) => doc.id);
}

/**
 * A submission that passed its checks just as its parent was being deleted
 * can be recorded after the deletion listed what to erase. So the submitter
 * looks at the parent again once its own event is in: a deletion recorded
 * before that event is seen here, and one recorded after it listed the
 * submission itself. When the parent is gone, the submission is erased like
 * every other of that parent, and the answer is true.
 */
export async function eraseIfOrphaned(
  services: Services,
  submission: { accountId: string; parent: Erasure['parent']; parentId: string; id: string; requestId?: string },
  parentExists: () => Promise<boolean>,
): Promise<boolean> {
  if (await parentExists()) return false;
  const { id, ...rest } = submission;
  await eraseResponses(services, { ...rest, responseIds: [id], reason: 'parent_deleted', keyId: null, actor: 'service' });
  return true;
}
