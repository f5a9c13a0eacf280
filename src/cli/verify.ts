import { z } from 'zod';
import { leavesInThreads } from '../seals/leaves.js';
import { erasedAfter, readPointInTime } from '../seals/point-in-time.js';
import { verifyHistory } from '../seals/verify.js';
import type { Services } from '../services.js';

type Output = (line: string) => void;

/**
 * The head position from which the embedded store's history is read and hashed on two
 * threads (most of a walk), not here: a thread takes 0.3-0.4 s to start,
 * the time the walk here takes for about this many events. A 1M-event walk
 * took 3.8-5.5 s on threads against 4.5-6.9 s here (alternating runs), for
 * a third more CPU.
 */
const THREADED_FROM = 50_000n;

/** `admin verify [--expect HASH]`: exit 0 when the history is what was sealed, 1 naming the first break. */
export const verifyCommand = {
  schema: z.object({ expect: z.string().regex(/^[0-9a-f]{64}$/, 'must be a seal hash as verify printed it (64 hex digits)').optional() }),
} as const;

export async function verify(services: Pick<Services, 'events' | 'config'>, values: { expect?: string | undefined }, out: Output, err: Output): Promise<number> {
  const started = performance.now();
  const embedded = services.events.kind === 'sqlite';
  const threaded = embedded && (await services.events.headPosition()) >= THREADED_FROM;
  const mark = embedded ? readPointInTime(services.config.DATA_DIR) : undefined;
  const erasedLater = mark && erasedAfter(mark);
  const result = await verifyHistory(services.events, {
    ...(values.expect === undefined ? {} : { expect: values.expect }),
    ...(threaded ? { leaves: leavesInThreads(services.config.DATA_DIR) } : {}),
    ...(erasedLater ? { erasedLater } : {}),
  });
  const seconds = (performance.now() - started) / 1000;
  const figures = {
    events: result.events,
    sealed: result.sealed,
    erased: result.erased,
    unsealed: result.unsealed,
    seals: result.seals,
    last_sealed_position: String(result.lastSealedPosition),
    last_seal_hash: result.lastSealHash,
    seconds: Number(seconds.toFixed(3)),
    events_per_second: seconds > 0 ? Math.round(result.events / seconds) : null,
    ...(result.erasedSinceExpected
      ? {
          erased_since_expected: result.erasedSinceExpected.map((record) => ({
            position: String(record.position),
            stream: record.stream,
            parent_id: record.parentId ?? null,
            submissions: record.submissions,
            actor: record.actor ?? null,
            occurred_at: record.occurredAt ?? null,
          })),
        }
      : {}),
  };
  const broken = result.firstBreak;
  if (!broken) {
    out(JSON.stringify({ verified: true, ...figures }));
    return 0;
  }
  const at = { position: String(broken.position), stream: broken.stream, type: broken.type, problem: broken.problem };
  out(JSON.stringify({ verified: false, break: at, ...figures }));
  err(`admin: the history is broken at position ${at.position} (stream ${at.stream}, ${at.type}): ${at.problem}`);
  return 1;
}

/** `admin seal`: seals everything stored now, without waiting for the server's next seal. */
export async function seal(services: Pick<Services, 'seals'>, out: Output): Promise<number> {
  out(JSON.stringify({ seals: await services.seals.sealAll() }));
  return 0;
}
