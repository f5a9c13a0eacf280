import type { EventStore, FeedRecord } from '../infra/event-store/port.js';
import { parseLines, SEAL_STREAM, sealHash, sealVersionOf, type SealLine } from './chain.js';
import { LogSealed } from './events.js';
import { leafPage, type LeafFeed, type LeafPage } from './leaves.js';

/** The first place where the history is not what was sealed. */
export interface Break {
  position: bigint;
  stream: string;
  type: string;
  /** What changed, in one sentence. */
  problem: string;
}

export interface Verification {
  /** The earliest break, or none: the history is what was sealed. */
  firstBreak: Break | undefined;
  /** Events read from the store. */
  events: number;
  /** Of those, events found as their seal recorded them. */
  sealed: number;
  /** Sealed events no longer stored because a recorded erasure removed their stream. */
  erased: number;
  /** Events after the last seal, which no seal covers yet. */
  unsealed: number;
  seals: number;
  lastSealedPosition: bigint;
  lastSealHash: string | null;
  /**
   * With `expect`: the erasure records after what that seal covers which
   * account for events it covers being gone. Anyone able to write the store can forge
   * such a record as well as a lawful erasure writes one, so these are what
   * an auditor holds against the erasures they know were asked for.
   */
  erasedSinceExpected?: ErasureRecord[];
}

/** A `ResponsesErased` event, as verify lists it: where it is, what it names, who recorded it, when. */
export interface ErasureRecord {
  position: bigint;
  stream: string;
  parentId: string | undefined;
  submissions: number;
  actor: string | undefined;
  occurredAt: string | undefined;
}

export interface VerifyOptions {
  /** A seal hash noted earlier (outside the store): the chain must still hold it. */
  expect?: string;
  pageSize?: number;
  /**
   * Where the events up to the head (as it stood when the walk began) are
   * read and hashed, other than here page by page: on threads of their own
   * (leavesInThreads, the embedded store). Those appended since are read here.
   */
  leaves?: LeafFeed;
  /**
   * Ids of submissions erased by `ResponsesErased` records this history does
   * not hold: those recorded after the moment of a point-in-time copy
   * (`admin rebuild --until`), whose erasures reached back into it.
   */
  erasedLater?: readonly string[];
}

interface Seen {
  position: bigint;
  stream: string;
  type: string;
}

function changed(line: SealLine, event: Seen): string {
  if (event.stream !== line.stream) return `sealed as an event of ${line.stream} (${line.type}), it is now one of ${event.stream} (${event.type}): events were moved, swapped or replaced`;
  if (event.type !== line.type) return `sealed as ${line.type}, it is now ${event.type}`;
  return 'its data, metadata, id or recording time changed since it was sealed';
}

const renumbered = (line: SealLine, now: bigint): string =>
  `sealed as revision ${line.revision} of ${line.stream}, it is now revision ${now}: the stream's events were renumbered or reordered`;

/**
 * The events read since the last seal met, in feed order: what the next
 * seals must cover. A backlog sealed at once (`admin seal`) puts every seal
 * after all the events, so this may hold the whole history: each event is
 * kept as its position and its leaf's 32 bytes in flat arrays rather than as
 * objects and strings, which the garbage collector would copy and mark
 * again and again. Its stream and type are read back from the store only
 * for an event found broken.
 */
class Pending {
  private positions = new BigUint64Array(4096);
  private revisions = new BigUint64Array(4096);
  private leaves = Buffer.alloc(4096 * 32);
  /** Where the next seal's events start: the covered ones before it are dropped only once most of the arrays are behind. */
  start = 0;
  end = 0;

  /** Takes the leaf as its 32 bytes, from `leaves` at `offset`: a string per event would be one more object to keep. */
  push(position: bigint, revision: bigint, leaves: Buffer, offset: number): void {
    if (this.end === this.positions.length) {
      const positions = new BigUint64Array(this.positions.length * 2);
      positions.set(this.positions);
      this.positions = positions;
      const revisions = new BigUint64Array(this.revisions.length * 2);
      revisions.set(this.revisions);
      this.revisions = revisions;
      const grown = Buffer.alloc(this.leaves.length * 2);
      this.leaves.copy(grown);
      this.leaves = grown;
    }
    this.positions[this.end] = position;
    this.revisions[this.end] = revision;
    leaves.copy(this.leaves, this.end * 32, offset, offset + 32);
    this.end++;
  }

  position(i: number): bigint {
    return this.positions[i]!;
  }

  revision(i: number): bigint {
    return this.revisions[i]!;
  }

  /** The leaf as the seals write it (base64url). */
  leaf(i: number): string {
    return this.leaves.toString('base64url', i * 32, i * 32 + 32);
  }

  /** Drops the events before `start` once they are most of what is held. */
  compact(): void {
    if (this.start <= 4096 || this.start * 2 <= this.end) return;
    this.positions.copyWithin(0, this.start, this.end);
    this.revisions.copyWithin(0, this.start, this.end);
    this.leaves.copy(this.leaves, 0, this.start * 32, this.end * 32);
    this.end -= this.start;
    this.start = 0;
  }
}

/** A break at an event read earlier, told in full once its stream and type are read back. */
type Found = Break | { position: bigint; problem: (event: Seen) => string };

/** The break with the stream and type of its event, read back from the store. */
async function described(store: EventStore, found: Found): Promise<Break> {
  if (typeof found.problem === 'string') return found as Break;
  const [record] = await store.readFeed({ after: found.position > 0n ? found.position - 1n : 0n, limit: 1 });
  // Gone since it was read (an erasure running beside the verify): its seal line says what it was.
  const event: Seen = record?.position === found.position ? { position: found.position, stream: record.streamId, type: record.type } : { position: found.position, stream: '(no longer stored)', type: '(no longer stored)' };
  return { ...event, problem: found.problem(event) };
}

/**
 * The submissions a `ResponsesErased` record names, and the widget, form or
 * poll they belonged to, read from its stored text as verify reads it:
 * nothing from a text that no longer parses (its own leaf says it changed).
 */
export function erasedBy(record: FeedRecord): { ids: string[]; parentId: string | undefined } {
  let data: { response_ids?: unknown; parent_id?: unknown };
  try {
    data = JSON.parse(record.data) as typeof data;
  } catch {
    return { ids: [], parentId: undefined };
  }
  const ids = Array.isArray(data.response_ids) ? data.response_ids.filter((id): id is string => typeof id === 'string') : [];
  return { ids, parentId: typeof data.parent_id === 'string' ? data.parent_id : undefined };
}

/** The version of a seal as stored, from its metadata's text; undefined where that is not JSON or names a version this code does not know. */
function sealVersion(metadata: string) {
  try {
    return sealVersionOf(JSON.parse(metadata));
  } catch {
    return undefined;
  }
}

/** The fields of a seal, every version. */
const SEAL_FIELDS = new Set(Object.keys(LogSealed.schema.shape));
/** A position as a seal writes it: a decimal number, no sign, no leading zero. */
const POSITION = /^(0|[1-9][0-9]*)$/;

/** Later than any position: where the record of an erasure a point-in-time copy's mark names would be. */
const BEYOND = 2n ** 64n;

const INSERTED = 'inserted: no seal covers this event, though it lies inside a sealed range';

/** Who recorded an event and when, from its metadata as stored; nothing from a text that no longer parses. */
function recordedBy(metadata: string): { actor: string | undefined; occurredAt: string | undefined } {
  try {
    const { actor, occurred_at } = JSON.parse(metadata) as { actor?: unknown; occurred_at?: unknown };
    return { actor: typeof actor === 'string' ? actor : undefined, occurredAt: typeof occurred_at === 'string' ? occurred_at : undefined };
  } catch {
    return { actor: undefined, occurredAt: undefined };
  }
}

/**
 * Walks the whole history once, against the seals met on the way (a seal
 * follows every event it covers): recomputes every event's leaf and every
 * seal's hash and link, and finds events inserted into, or missing from, a
 * sealed range. The events are read as stored (unparsed), so an event or a
 * seal whose bytes no longer parse is reported like any other change.
 *
 * A missing event is a lawful erasure only when a `ResponsesErased` in the
 * history names the submission it belonged to (the seal line of the
 * submission keeps its id and the streams erasing it deletes): any other
 * missing event is a break.
 */
export async function verifyHistory(store: EventStore, options: VerifyOptions = {}): Promise<Verification> {
  const pageSize = options.pageSize ?? 1000;
  /** Each erased id, with the position of the last record naming it: past every position for the ids a copy's mark names, whose records it does not hold. */
  const erasedAt = new Map<string, bigint>((options.erasedLater ?? []).map((id) => [id, BEYOND]));
  /** The first record naming each erased id (ids a copy's mark names have none here). */
  const erasedIn = new Map<string, ErasureRecord>();
  let firstBreak: Found | undefined;
  const report = (found: Found) => {
    if (!firstBreak || found.position < firstBreak.position) firstBreak = found;
  };
  const missing: SealLine[] = [];
  const pending = new Pending();
  let events = 0;
  let sealed = 0;
  let seals = 0;
  let previous: string | null = null;
  let through = 0n;
  /** Where the last seal that followed its predecessor is, and what the expected one covers. */
  let lastSealAt = 0n;
  let expected: { through: bigint } | undefined;

  const checkSeal = (record: FeedRecord) => {
    const at = { position: record.position, stream: SEAL_STREAM, type: record.type };
    let data: unknown;
    try {
      data = JSON.parse(record.data);
    } catch {
      data = undefined;
    }
    const parsed = LogSealed.schema.safeParse(data);
    const version = sealVersion(record.metadata);
    let lines: SealLine[] | undefined;
    if (record.type === LogSealed.type && parsed.success && version !== undefined) {
      try {
        lines = parseLines(parsed.data.events, version);
      } catch (error) {
        report({ ...at, problem: `seal ${seals}: ${(error as Error).message}` });
      }
    } else {
      report({ ...at, problem: `seal ${seals} is not a readable LogSealed event: it was changed or replaced` });
    }
    if (!parsed.success || !lines || version === undefined) return;
    const seal = parsed.data;
    // What the hash does not cover must still be as the service writes it: a field more, or a range spelt otherwise, changes the last seal unseen.
    const extra = Object.keys(data as object).filter((key) => !SEAL_FIELDS.has(key));
    if (extra.length > 0) report({ ...at, problem: `seal ${seal.seal} was changed after it was made: it holds ${extra.map((key) => JSON.stringify(key)).join(', ')}, which no seal has` });
    if (!POSITION.test(seal.from) || !POSITION.test(seal.through)) {
      report({ ...at, problem: `seal ${seal.seal} was changed after it was made: its range (${JSON.stringify(seal.from)} to ${JSON.stringify(seal.through)}) is not written as positions` });
      // What BigInt reads otherwise (hexadecimal, leading zeros) is still checked as that; what it cannot read says nothing more.
      if (!/^\s*(0x[0-9a-f]+|[0-9]+)\s*$/i.test(seal.from) || !/^\s*(0x[0-9a-f]+|[0-9]+)\s*$/i.test(seal.through)) {
        // The noted seal is there, damaged: the damage is the break, not a chain that lost it.
        if (seal.hash === options.expect) expected = { through };
        return;
      }
    }
    const from = BigInt(seal.from);
    const end = BigInt(seal.through);
    const whole = sealHash({ version, seal: seal.seal, previous: seal.previous, from, through: end, sealedAt: seal.sealed_at, events: seal.events }) === seal.hash;
    if (whole && end >= record.position) {
      // Its lines name events not read yet: judged here, they would all count as missing, and the first break named would be an event before it that is intact.
      report({ ...at, problem: `seal ${seal.seal} covers events up to position ${end}, which is not before it: seals were moved or swapped` });
      return;
    }
    let i = pending.start;
    /** Lines of a seal that no longer hashes to its hash say nothing of the events: the seal is the break, not an intact event its changed line no longer matches. */
    let judged = true;
    if (seal.seal !== seals || seal.previous !== previous || from !== through) {
      report({ ...at, problem: `seal ${seal.seal} does not follow seal ${seals - 1}: a seal was removed, inserted or changed` });
      // Covered by the seals that are gone: the removed seal is the break (its line here is missing), not these.
      while (i < pending.end && pending.position(i) <= from) i++;
    } else if (!whole) {
      report({ ...at, problem: `seal ${seal.seal} was changed after it was made: its hash does not match its contents` });
      judged = false;
    } else if (seal.count !== lines.length) {
      // The hash covers the lines, not this figure beside them, which `status` shows.
      report({ ...at, problem: `seal ${seal.seal} was changed after it was made: it says it covers ${seal.count} events, and lists ${lines.length}` });
    }
    if (seal.hash === options.expect) expected = { through: end };

    for (const line of judged ? lines : []) {
      while (i < pending.end && pending.position(i) < line.position) report({ position: pending.position(i++), problem: () => INSERTED });
      if (i < pending.end && pending.position(i) === line.position) {
        if (pending.leaf(i) !== line.leaf) report({ position: line.position, problem: (event) => changed(line, event) });
        else if (line.revision !== undefined && pending.revision(i) !== line.revision) {
          const now = pending.revision(i);
          report({ position: line.position, stream: line.stream, type: line.type, problem: renumbered(line, now) });
        } else sealed++;
        i++;
      } else {
        missing.push(line);
      }
    }
    while (i < pending.end && pending.position(i) <= end) {
      if (judged) report({ position: pending.position(i), problem: () => INSERTED });
      i++;
    }
    pending.start = i;
    pending.compact();
    previous = seal.hash;
    through = end;
    lastSealAt = record.position;
    seals++;
  };

  const take = (page: LeafPage) => {
    // A thread's page arrives as a plain Uint8Array: one Buffer over its bytes, so that each leaf is copied without a view of its own.
    const leaves = Buffer.from(page.leaves.buffer, page.leaves.byteOffset, page.leaves.byteLength);
    let next = 0;
    for (let i = 0; i < page.count; i++) {
      events++;
      const record = page.records[next]?.[0] === i ? page.records[next++]![1] : undefined;
      if (record?.type === 'ResponsesErased') {
        const { ids, parentId } = erasedBy(record);
        const erasure: ErasureRecord = { position: record.position, stream: record.streamId, parentId, submissions: ids.length, ...recordedBy(record.metadata) };
        for (const id of ids) {
          if ((erasedAt.get(id) ?? 0n) < record.position) erasedAt.set(id, record.position);
          if (!erasedIn.has(id)) erasedIn.set(id, erasure);
        }
      }
      if (record?.streamId === SEAL_STREAM) checkSeal(record);
      pending.push(page.positions[i]!, page.revisions[i]!, leaves, i * 32);
    }
  };

  let after = 0n;
  if (options.leaves) {
    const head = await store.headPosition();
    for await (const page of options.leaves(after, head)) take(page);
    after = head;
  }
  for (;;) {
    const records = await store.readFeed({ after, limit: pageSize });
    if (records.length === 0) break;
    after = records[records.length - 1]!.position;
    take(leafPage(records));
  }

  // Erasures are recorded after what they erase: the missing are judged once every record is read.
  /** Per stream an erasure deleted, the last record that erased a submission in it: events after that record are not its. */
  const erasedStreams = new Map<string, bigint>();
  for (const line of missing) {
    const at = line.subject === undefined ? undefined : erasedAt.get(line.subject);
    if (at === undefined || at < line.position) continue;
    for (const stream of [line.stream, ...(line.also ?? [])]) if ((erasedStreams.get(stream) ?? 0n) < at) erasedStreams.set(stream, at);
  }
  let erased = 0;
  for (const line of missing) {
    // Erased by a record after it: one naming its submission, or one erasing a submission its stream held.
    const own = line.subject === undefined ? undefined : erasedAt.get(line.subject);
    const stream = erasedStreams.get(line.stream);
    if ((own !== undefined && own > line.position) || (stream !== undefined && stream > line.position)) erased++;
    else report({ position: line.position, stream: line.stream, type: line.type, problem: 'deleted: the event was sealed, and no recorded erasure removed its stream' });
  }
  if (options.expect !== undefined && expected === undefined) {
    report({ position: lastSealAt, stream: SEAL_STREAM, type: LogSealed.type, problem: `the chain no longer holds the seal ${options.expect}: seals were removed or rewritten` });
  }
  const verification: Verification = { firstBreak: firstBreak && (await described(store, firstBreak)), events, sealed, erased, unsealed: pending.end - pending.start, seals, lastSealedPosition: through, lastSealHash: previous };
  if (expected) {
    const since = new Map<bigint, ErasureRecord>();
    for (const line of missing) {
      const erasure = line.subject === undefined ? undefined : erasedIn.get(line.subject);
      // After what the seal covers, not after the seal itself: where a seal sits is sealed by the next one only, so the events between are as unsealed as those after it.
      if (line.position <= expected.through && erasure && erasure.position > expected.through) since.set(erasure.position, erasure);
    }
    verification.erasedSinceExpected = [...since.values()].sort((a, b) => (a.position < b.position ? -1 : 1));
  }
  return verification;
}
