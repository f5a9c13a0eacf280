import { TRANSIENT } from './event-store/kurrent-retry.js';

/**
 * Whether an error, or one it wraps, says a store could not be reached or
 * was held by another writer for longer than this process waits: the
 * request may succeed if sent again, which a 503 tells a client (a 500 says
 * the service is broken). Told apart by what each driver names them:
 * SQLite's busy and locked codes (another process held the file's write
 * lock past `busy_timeout`), the KurrentDB client's error types for an
 * unreachable node, a node that is not the leader and a passed deadline
 * (after the adapter's own retries), and the MongoDB driver's network,
 * server selection and timeout errors.
 */
export function isStoreUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 8; current = (current as { cause?: unknown }).cause, depth++) {
    const { code, type, name } = current as { code?: unknown; type?: unknown; name?: unknown };
    if (typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) return true;
    if (typeof type === 'string' && TRANSIENT.has(type)) return true;
    if (typeof name === 'string' && MONGO_UNREACHABLE.has(name)) return true;
  }
  return false;
}

const MONGO_UNREACHABLE = new Set(['MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoServerSelectionError', 'MongoNotConnectedError', 'MongoOperationTimeoutError']);
