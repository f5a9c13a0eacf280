import type { Clock } from '../infra/ids.js';
import type { CollectionSpec, ReadModelStore } from '../infra/read-models/port.js';

/** Activity closer than this is not written again: idle expiry is counted in minutes. */
const EVERY_MS = 60_000;

/**
 * When each dashboard session was last used. A request is not a domain fact
 * worth an event (as key usage is not), so it lives in its own collection,
 * outside every projection (a rebuild leaves it alone), where every instance
 * reads it; written at most once a minute per session.
 */
export class SessionActivity {
  static readonly COLLECTION = 'dashboard_session_activity';
  static readonly collections: CollectionSpec[] = [{ name: SessionActivity.COLLECTION, indexes: [] }];

  constructor(
    private readonly readModels: ReadModelStore,
    private readonly clock: Clock,
  ) {}

  async lastActive(sessionId: string): Promise<Date | null> {
    const doc = await this.readModels.get(SessionActivity.COLLECTION, sessionId);
    return typeof doc?.last_active_at === 'string' ? new Date(doc.last_active_at) : null;
  }

  /** Records a request of the session, given when it was last recorded; answers the activity now on record. */
  async touch(sessionId: string, recorded: Date): Promise<Date> {
    const now = this.clock();
    if (now.getTime() - recorded.getTime() < EVERY_MS) return recorded;
    await this.readModels.write([{ op: 'put', collection: SessionActivity.COLLECTION, doc: { id: sessionId, last_active_at: now.toISOString() } }]);
    return now;
  }
}
