/**
 * When the KurrentDB adapter tries an append again. Kept apart from the
 * adapter (and from the client, whose errors it tells apart by their `type`,
 * the client's ErrorType) so that it can be checked without a server.
 *
 * Only errors after which the append may or may not have landed, and a later
 * attempt may succeed, are retried: the node is not the leader (the client
 * reconnects to the leader it names before the next call), the server is
 * unreachable or the connection broke (`unavailable`, which the client also
 * reports for INTERNAL and DATA_LOSS), the deadline passed, or the server gave
 * up waiting for the write to commit (`timeout`), and the node's refusals
 * of a batch append while it is not ready or too busy, which the client
 * reports as `unknown` errors that name the server's message (the server's
 * BatchAppend answers them with a status it packs no known details in; they
 * were not written). Every attempt carries the
 * same event ids, so an attempt after one that had in fact landed is taken by
 * the server as a repeat: with an expected revision it compares the ids
 * stored after that revision with the ones sent and answers success when they
 * are the same events; with `any` it looks the ids up in its cache of recent
 * writes, which catches a repeat this soon after the first attempt (KurrentDB:
 * "Optimistic concurrency and idempotence").
 */

/** Waits before each attempt after the first; as many attempts follow as there are waits. */
export const APPEND_RETRY_WAITS_MS = [100, 250, 500] as const;

/** The client's error types for a node out of reach, not the leader, or past the deadline: an append may have landed or not. */
export const TRANSIENT = new Set(['not-leader', 'unavailable', 'deadline-exceeded', 'timeout']);
const NOT_HANDLED = /Server Is (Not Ready|Busy)/;

/**
 * gRPC status codes (grpc-js `status`) of a call that never reached a node or
 * that the node cut short, by the client's error type for them. The client
 * converts most gRPC errors to its own types, but not all: an append through
 * its BatchAppend stream to a node out of reach fails with grpc-js's own
 * error (`code` 14, `details`, `metadata`), unconverted.
 */
const GRPC_TYPES = new Map<number, string>([
  [1, 'cancelled'],
  [4, 'deadline-exceeded'],
  [14, 'unavailable'],
]);

/** The client's error type of `error`, also for a raw gRPC error the client passed on unconverted. */
export function clientErrorType(error: unknown): string | undefined {
  if (error === null || typeof error !== 'object') return undefined;
  const { type, code, details, metadata } = error as { type?: unknown; code?: unknown; details?: unknown; metadata?: unknown };
  if (typeof type === 'string') return type;
  if (typeof code === 'number' && typeof details === 'string' && metadata !== null && typeof metadata === 'object') return GRPC_TYPES.get(code);
  return undefined;
}

/**
 * How long to wait before trying again, after `error` ended attempt number
 * `attempt` (from 1), or undefined: do not try again, throw the error.
 */
export function appendRetryWait(error: unknown, attempt: number): number | undefined {
  const type = clientErrorType(error);
  const { message } = (error ?? {}) as { message?: unknown };
  const transient = typeof type === 'string' && (TRANSIENT.has(type) || (type === 'unknown' && typeof message === 'string' && NOT_HANDLED.test(message)));
  return transient ? APPEND_RETRY_WAITS_MS[attempt - 1] : undefined;
}
