/**
 * When notifications go out: pure functions of the recorded times and the
 * time now, which the notifier is given (tests move it by hand).
 */

/** At most one email (or Slack message) a minute for an object and a member. */
export const BATCH_INTERVAL_MS = 60_000;
/** How long the first response of a quiet object waits for others that arrive with it, so a burst is one email. */
export const DEFAULT_GATHER_MS = 10_000;

/** When a batch that starts with a response at `at` goes out: after the gathering wait, and a minute after the last one sent. */
export function batchDue(at: number, lastSentAt: number | null, gatherMs: number): number {
  return Math.max(at + gatherMs, lastSentAt === null ? 0 : lastSentAt + BATCH_INTERVAL_MS);
}

const formats = new Map<string, Intl.DateTimeFormat>();
function hourMinute(timeZone: string, at: number): [number, number] {
  let format = formats.get(timeZone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-GB', { timeZone, hour: 'numeric', minute: 'numeric', hourCycle: 'h23' });
    formats.set(timeZone, format);
  }
  const parts = format.formatToParts(at);
  return [Number(parts.find((p) => p.type === 'hour')!.value), Number(parts.find((p) => p.type === 'minute')!.value)];
}

/** Whether a name is an IANA time zone this runtime knows. */
export function knownTimeZone(name: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const QUARTER = 15 * 60_000;

/**
 * The first moment strictly after `after` when the clock of `timeZone` reads
 * `hour`:00, found by stepping quarter hours (every offset in use is a
 * multiple of one). A day when that hour does not exist (a daylight-saving
 * change skips it) gets its digest at the next hour that does.
 */
export function nextDigestAt(hour: number, timeZone: string, after: number): number {
  let at = Math.floor(after / QUARTER) * QUARTER + QUARTER;
  for (let step = 0; step < 4 * 50; step += 1, at += QUARTER) {
    const [h, m] = hourMinute(timeZone, at);
    if (m === 0 && h === hour) return at;
    // Skipped by a daylight-saving change: the first whole hour after it.
    if (m === 0 && h === (hour + 1) % 24 && hourMinute(timeZone, at - 60 * 60_000)[0] !== hour && hourMinute(timeZone, at - QUARTER)[0] === (hour + 23) % 24) return at;
  }
  return after + 24 * 60 * 60_000;
}

/** A due time that never comes: nothing waits (sorts after every real one). */
export const NEVER = '9999-12-31T23:59:59.999Z';

/** What waits to be sent to one member (or the object's Slack) about one object. */
export interface Pending {
  count: number;
  /** The first responses' ids (the answers an email shows, when asked for). */
  response_ids: string[];
  since: string | null;
  until: string | null;
  due_at: string;
  last_sent_at: string | null;
}

/** Answers shown in one email at most; the rest are counted. */
export const ANSWERS_SHOWN = 10;

/**
 * A response added to what waits: counted, its id kept among the first
 * few, and, for a batch that was empty, due once the gathering wait and
 * the minute since the last one are over. A digest keeps its hour.
 */
export function addResponse(pending: Pending, responseId: string, at: string, mode: 'each' | 'digest', gatherMs: number): Pending {
  const due = mode === 'each' && pending.count === 0 ? new Date(batchDue(Date.parse(at), pending.last_sent_at === null ? null : Date.parse(pending.last_sent_at), gatherMs)).toISOString() : pending.due_at;
  return {
    ...pending,
    count: pending.count + 1,
    response_ids: pending.response_ids.length < ANSWERS_SHOWN ? [...pending.response_ids, responseId] : pending.response_ids,
    since: pending.since ?? at,
    until: at,
    due_at: due,
  };
}

/** Once sent (or a digest's hour came with nothing to tell): empty, next due `next`. */
export function sent(pending: Pending, now: string, next: string): Pending {
  return { count: 0, response_ids: [], since: null, until: null, due_at: next, last_sent_at: pending.count > 0 ? now : pending.last_sent_at };
}
