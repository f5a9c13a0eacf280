import { z } from 'zod';
import { adapterOf, PersonalEventStore } from '../kernel/personal-store.js';
import { UnreadableRecord } from '../infra/event-store/port.js';
import type { SqliteEventStore } from '../infra/event-store/sqlite.js';
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
  const head = embedded ? await services.events.headPosition() : 0n;
  // Threads take ranges of positions: where positions are mostly gaps (an event
  // put far past the others by hand), most ranges would be empty, and a walk here
  // reads only what is there.
  const threaded = head >= THREADED_FROM && head <= 2n * BigInt((adapterOf(services.events) as SqliteEventStore).countEvents());
  const mark = embedded ? readPointInTime(services.config.DATA_DIR) : undefined;
  const erasedLater = mark ? erasedAfter(mark) : undefined;
  let result;
  try {
    result = await verifyHistory(services.events, {
      ...(values.expect === undefined ? {} : { expect: values.expect }),
      ...(threaded ? { leaves: leavesInThreads(services.config.DATA_DIR) } : {}),
      ...(erasedLater ? { erasedLater } : {}),
    });
  } catch (error) {
    // A row no reader can take for an event (a hand edit): the walk ends there, and names it as it names any break.
    if (!(error instanceof UnreadableRecord)) throw error;
    return broke({ position: error.position, stream: error.streamId, type: '(unreadable)', problem: error.reason }, {}, out, err);
  }
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
    // Said whenever a point-in-time copy's list was taken: those ids count as erased on its word alone, which no seal checks.
    ...(mark && erasedLater ? { point_in_time: { until: mark.until, erased_after: erasedLater.length } } : {}),
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
  const broken = result.firstBreak ?? (embedded ? await cutOff(adapterOf(services.events) as SqliteEventStore) : undefined) ?? (await encryptedLater(services.events));
  if (!broken) {
    out(JSON.stringify({ verified: true, ...figures }));
    return 0;
  }
  return broke(broken, figures, out, err);
}

function broke(broken: { position: bigint; stream: string; type: string; problem: string }, figures: object, out: Output, err: Output): number {
  const at = { position: String(broken.position), stream: broken.stream, type: broken.type, problem: broken.problem };
  out(JSON.stringify({ verified: false, break: at, ...figures }));
  err(`admin: the history is broken at position ${at.position} (stream ${at.stream}, ${at.type}): ${at.problem}`);
  return 1;
}

/**
 * The embedded store never gives a position twice, and remembers the last it
 * gave: events missing after the last one stored (the last seal and what
 * followed, or every event) were removed, as no erasure ends the history
 * with a deletion (its record follows it).
 */
async function cutOff(events: SqliteEventStore): Promise<{ position: bigint; stream: string; type: string; problem: string } | undefined> {
  const [head, end] = await Promise.all([events.headPosition(), events.endPosition()]);
  if (end <= head) return undefined;
  return {
    position: head + 1n,
    stream: '(gone)',
    type: '(gone)',
    problem: `the store gave out positions up to ${end} and holds none after ${head}: the events there were removed`,
  };
}

/** Events read a page to check those encrypted in place. */
const PAGE = 2000;

/**
 * The first submission encrypted in place (`admin encrypt-existing`) whose
 * envelope does not hold the text whose digest the seals took
 * (PersonalCodec.encryptedLaterBreaks).
 */
async function encryptedLater(events: Services['events']): Promise<{ position: bigint; stream: string; type: string; problem: string } | undefined> {
  if (!(events instanceof PersonalEventStore)) return undefined;
  for (let after = 0n; ; ) {
    const page = await events.readFeed({ after, limit: PAGE });
    if (page.length === 0) return undefined;
    const [first] = await events.codec.encryptedLaterBreaks(page);
    if (first) return { position: first.record.position, stream: first.record.streamId, type: first.record.type, problem: first.problem };
    after = page.at(-1)!.position;
  }
}

/** `admin seal`: seals everything stored now, without waiting for the server's next seal. */
export async function seal(services: Pick<Services, 'seals'>, out: Output): Promise<number> {
  out(JSON.stringify({ seals: await services.seals.sealAll() }));
  return 0;
}
