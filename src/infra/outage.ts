import { TRANSIENT, clientErrorType } from './event-store/kurrent-retry.js';

/**
 * Whether an error, or one it wraps, says a store could not be reached, was
 * not ready, or was held by another writer for longer than this process
 * waits: the request may succeed if sent again, which a 503 tells a client (a
 * 500 says the service is broken). Told apart by what each driver names them:
 * - SQLite's busy and locked codes (another process held the file's write
 *   lock past `busy_timeout`);
 * - the KurrentDB client's error types for an unreachable node, a node that
 *   is not the leader, a passed deadline (after the adapter's own retries), a
 *   call the server cancelled (a node stepping down or shutting down), and a
 *   node that answers it is not ready or too busy;
 * - the MongoDB driver's network, server selection and timeout errors, a
 *   write concern the majority did not confirm in time, a node that stepped
 *   down or shuts down, a read past its time limit, and any error the
 *   driver labels as worth another attempt (RetryableWriteError,
 *   TransientTransactionError, UnknownTransactionCommitResult: what was left
 *   when its own retries ran out).
 */
export function isStoreUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current && typeof current === 'object' && depth < 8; current = (current as { cause?: unknown }).cause, depth++) {
    const { code, name, message } = current as { code?: unknown; name?: unknown; message?: unknown };
    const type = clientErrorType(current);
    if (typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))) return true;
    if (typeof type === 'string' && (TRANSIENT.has(type) || type === 'cancelled')) return true;
    // The client reports a node's "not ready" and "too busy" answers as unknown errors that name them.
    if (type === 'unknown' && typeof message === 'string' && NOT_SERVING.test(message)) return true;
    if (typeof name === 'string' && MONGO_UNREACHABLE.has(name)) return true;
    if (hasLabel(current, MONGO_RETRY_LABELS)) return true;
    if (typeof name === 'string' && name.startsWith('Mongo') && typeof code === 'number' && MONGO_NOT_SERVING.has(code)) return true;
  }
  return false;
}

/** What KurrentDB answers when a node cannot take a call now (its RpcExceptions: "Server Is Not Ready", "Server Is Too Busy"). */
const NOT_SERVING = /Server Is (Not Ready|(Too )?Busy)/i;

const MONGO_UNREACHABLE = new Set([
  'MongoNetworkError',
  'MongoNetworkTimeoutError',
  'MongoServerSelectionError',
  'MongoNotConnectedError',
  'MongoOperationTimeoutError',
  'MongoWaitQueueTimeoutError',
  // The majority did not confirm the write within the write concern's wtimeout: the primary has it, the replica set has not.
  'MongoWriteConcernError',
]);

/**
 * Server codes of a node that cannot serve now (the driver's retryable-read
 * codes: stepped down, shutting down, unreachable) and of a read that ran past
 * the adapter's `maxTimeMS` (50, MaxTimeMSExpired), from the server's
 * error_codes.yml.
 */
const MONGO_NOT_SERVING = new Set([6, 7, 50, 89, 91, 189, 262, 9001, 10107, 11600, 11602, 13435, 13436]);

const MONGO_RETRY_LABELS = ['RetryableWriteError', 'TransientTransactionError', 'UnknownTransactionCommitResult'];

/** The driver's labels, asked the way it answers them (MongoError.hasErrorLabel), without importing the driver here. */
function hasLabel(error: object, labels: string[]): boolean {
  const ask = (error as { hasErrorLabel?: unknown }).hasErrorLabel;
  if (typeof ask !== 'function') return false;
  return labels.some((label) => ask.call(error, label) === true);
}
