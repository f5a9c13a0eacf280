/**
 * A MongoDB transaction with its retries bounded in time. The driver's
 * `withTransaction` (mongodb 7) tries a transaction again for up to 120 s,
 * a figure it fixes (its `timeoutMS` has no effect any more), so a projection
 * write, and the request that waits for it, could wait two minutes on a
 * replica set that is failing over. This runs the same steps the driver's
 * transactions specification gives `withTransaction`, with the caller's bound
 * instead: a callback failing with a TransientTransactionError runs again
 * from the start, a commit of unknown outcome is committed again, and once
 * the bound has passed the last error is thrown (its labels name it as worth
 * another attempt, which the HTTP layer answers with 503).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClientSession, TransactionOptions } from 'mongodb';

/** What to do after an error of a transaction's callback or commit. */
export type TransactionStep = 'run-again' | 'commit-again' | 'throw';

/** The driver's backoff between attempts (transactions spec): 5 ms growing by half each time, at most 500 ms, with jitter. */
export function backoffMs(attempt: number, random: number): number {
  return random * Math.min(5 * 1.5 ** attempt, 500);
}

/**
 * The decision after `error` ended the callback (`phase` 'callback') or the
 * commit, at `now`, for a transaction that may try again until `deadline`.
 */
export function afterError(error: unknown, phase: 'callback' | 'commit', now: number, deadline: number): TransactionStep {
  if (now >= deadline) return 'throw';
  const labelled = (label: string) => typeof (error as { hasErrorLabel?: unknown } | null)?.hasErrorLabel === 'function' && (error as { hasErrorLabel: (label: string) => boolean }).hasErrorLabel(label);
  // A commit that ran past its own time limit (MaxTimeMSExpired) is not committed again: it would wait as long again.
  if (phase === 'commit' && labelled('UnknownTransactionCommitResult') && (error as { code?: unknown }).code !== 50) return 'commit-again';
  if (labelled('TransientTransactionError')) return 'run-again';
  return 'throw';
}

/**
 * Runs `fn` in a transaction on `session` and commits it, trying again as
 * `afterError` says for up to `boundMs`. A callback that aborts the
 * transaction itself has its value returned as is, as with withTransaction.
 */
export async function transact<T>(session: ClientSession, fn: (session: ClientSession) => Promise<T>, options: TransactionOptions, boundMs: number, now: () => number = Date.now): Promise<T> {
  const deadline = now() + boundMs;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) await sleep(backoffMs(attempt, Math.random()));
    session.startTransaction(options);
    let result: T;
    try {
      result = await fn(session);
    } catch (error) {
      if (session.inTransaction()) await session.abortTransaction().catch(() => undefined);
      if (afterError(error, 'callback', now(), deadline) === 'run-again') continue;
      throw error;
    }
    if (!session.inTransaction()) return result;
    for (;;) {
      try {
        await session.commitTransaction();
        return result;
      } catch (error) {
        const step = afterError(error, 'commit', now(), deadline);
        if (step === 'commit-again') continue;
        if (step === 'run-again') break;
        throw error;
      }
    }
  }
}
