import { z } from 'zod';
import { AppError } from '../kernel/errors.js';
import { UnreadableEvent } from '../kernel/event-catalog.js';
import { storedJson, type FeedRecord, type StoredEvent } from '../infra/event-store/port.js';
import { parseLines, SEAL_STREAM, sealVersionOf, type SealLine } from '../seals/chain.js';
import { LogSealed } from '../seals/events.js';
import { erasedAfter, readPointInTime } from '../seals/point-in-time.js';
import type { Services } from '../services.js';

type Output = (line: string) => void;

export const auditCommand = {
  schema: z.object({
    object: z.string().regex(/^[A-Za-z0-9_-]{1,100}$/, 'is not a valid id'),
    format: z.enum(['ndjson', 'table'], { error: 'must be ndjson or table' }).default('ndjson'),
  }),
} as const;

export interface AuditEntry {
  position: string;
  recorded_at: string | null;
  type: string;
  stream: string;
  actor: string | null;
  request_id?: string;
  /** The object's own events in full; for its responses and votes, ids and counts only. */
  data: Record<string, unknown>;
  /** A submission whose events were erased: what the seals keep of it. */
  erased?: true;
}

const SUBMISSION_IDS: Record<string, string> = { ResponseSubmitted: 'response_id', ResponseProgressed: 'response_id', VoteCast: 'vote_id', SubmissionSlotReserved: 'response_id', SubmissionGuarded: 'response_id' };

/** The object an event concerns, if it concerns a widget, form or poll. */
function objectOf(data: Record<string, unknown>): unknown[] {
  return [data.widget_id, data.form_id, data.poll_id, data.target_id, data.parent_id];
}

/** Never a response's content: what happened to it, by whom, when. */
function summary(type: string, data: Record<string, unknown>): Record<string, unknown> {
  const id = SUBMISSION_IDS[type];
  if (id) return { [id]: data[id] };
  if (type === 'ResponsesErased' || type === 'ErasureRequested') {
    const ids = Array.isArray(data.response_ids) ? data.response_ids : [];
    return { ...data, count: ids.length };
  }
  return data;
}

/**
 * Every event of one widget, form or poll and of its responses or votes, in
 * feed order, including the creation of submissions erased since (from the
 * seals, which keep their ids and positions, never their content).
 */
export async function auditTrail(services: Pick<Services, 'events' | 'catalog'>, objectId: string, options: { erasedLater?: readonly string[] } = {}): Promise<AuditEntry[]> {
  return (await trail(services, objectId, options)).entries;
}

async function trail(
  services: Pick<Services, 'events' | 'catalog'>,
  objectId: string,
  options: { erasedLater?: readonly string[] },
): Promise<{ entries: AuditEntry[]; submissionOf?: string }> {
  /** The object whose response or vote the id is, when it is one's. */
  let submissionOf: string | undefined;
  const entries: AuditEntry[] = [];
  // On a point-in-time copy, what records after its moment erased: neither those records nor the submissions' events are in it.
  const erased = new Set<string>(options.erasedLater);
  const quoted = JSON.stringify(objectId);
  let after = 0n;
  for (;;) {
    const page = await services.events.readFeed({ after, limit: 5000 });
    if (page.length === 0) break;
    after = page[page.length - 1]!.position;
    for (const record of page) {
      if (!mayName(record.data, quoted)) continue;
      const stored = storedOf(record);
      if (!objectOf(stored.data).includes(objectId)) {
        submissionOf ??= namesSubmission(stored, objectId);
        continue;
      }
      entries.push(entryOf(services, stored));
      if (stored.type === 'ResponsesErased' && Array.isArray(stored.data.response_ids)) for (const id of stored.data.response_ids) erased.add(String(id));
    }
  }
  if (erased.size > 0) {
    // An event still stored (KurrentDB keeps deleted streams' events until a scavenge) is listed as read, once, and marked erased.
    const read = new Map(entries.map((entry) => [entry.position, entry]));
    for (const gone of await erasedSubmissions(services, erased)) {
      const stored = read.get(gone.position);
      if (stored) stored.erased = true;
      else entries.push(gone);
    }
  }
  entries.sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : 1));
  return submissionOf === undefined ? { entries } : { entries, submissionOf };
}

/** The widget, form or poll of the response or vote `id`, where the event records it or its erasure. */
function namesSubmission(stored: StoredEvent, id: string): string | undefined {
  const data = stored.data as Record<string, unknown>;
  const field = SUBMISSION_IDS[stored.type];
  const named = (field !== undefined && data[field] === id) || (stored.type === 'ResponsesErased' && Array.isArray(data.response_ids) && data.response_ids.includes(id));
  if (!named) return undefined;
  const parent = objectOf(data).find((value): value is string => typeof value === 'string');
  return parent ?? '';
}

/**
 * Whether an event's JSON text may hold the id as a value, looked at before
 * the text is parsed: most of a history concerns other objects, and parsing
 * every event took most of an audit (8.4 s for 1M events, 3.6 s now). An id
 * is letters, digits, `_` and `-`, which JSON writes as they are, so the
 * text holds it quoted, or spells it with `\u` escapes (which no writer of
 * this service uses, but JSON allows): such a text is parsed and looked at
 * whole. An event whose text does not name the id is not parsed, so one
 * that no longer parses stops the audit only if it names the id.
 */
const mayName = (text: string, quoted: string): boolean => text.includes(quoted) || text.includes('\\u');

/** As the store reads an event: one shape for every event, which parsing and projecting it are fastest on. */
function storedOf(record: FeedRecord): StoredEvent {
  return {
    id: record.id,
    streamId: record.streamId,
    revision: record.revision,
    position: record.position,
    type: record.type,
    data: storedJson(record.data, 'data', record.position, record.streamId) as StoredEvent['data'],
    metadata: storedJson(record.metadata, 'metadata', record.position, record.streamId) as StoredEvent['metadata'],
    recordedAt: record.recordedAt,
    dataText: record.data,
  };
}

function entryOf(services: Pick<Services, 'catalog'>, stored: StoredEvent): AuditEntry {
  let data = stored.data;
  try {
    // Upcast, so that older versions read as today's.
    data = (services.catalog.parse(stored)?.data as Record<string, unknown> | undefined) ?? data;
  } catch (error) {
    if (!(error instanceof UnreadableEvent)) throw error;
  }
  const metadata = stored.metadata as { actor?: unknown; request_id?: unknown };
  return {
    position: String(stored.position),
    recorded_at: stored.recordedAt,
    type: stored.type,
    stream: stored.streamId,
    actor: typeof metadata.actor === 'string' ? metadata.actor : null,
    ...(typeof metadata.request_id === 'string' ? { request_id: metadata.request_id } : {}),
    data: summary(stored.type, data),
  };
}

/**
 * The erased submissions' events as the seals keep them: each one's own line
 * (its id), then the lines of the events erasing it deleted with it, in its
 * stream and the others it names (a visitor's duplicate guard), which name
 * no submission themselves.
 */
async function erasedSubmissions(services: Pick<Services, 'events'>, ids: Set<string>): Promise<AuditEntry[]> {
  const found: AuditEntry[] = [];
  const entry = (line: SealLine, subject: string): AuditEntry => ({
    position: String(line.position),
    recorded_at: null,
    type: line.type,
    stream: line.stream,
    actor: null,
    data: { [SUBMISSION_IDS[line.type] ?? 'response_id']: subject },
    erased: true,
  });
  const deletedWith = new Map<string, string>();
  await eachSealLine(services, (line) => {
    if (line.subject === undefined || !ids.has(line.subject)) return;
    found.push(entry(line, line.subject));
    // A vote's guard is in the vote's own stream; a response's in a stream of its own, which the line names.
    for (const stream of [line.stream, ...(line.also ?? [])]) deletedWith.set(stream, line.subject);
  });
  if (deletedWith.size > 0) {
    await eachSealLine(services, (line) => {
      const subject = deletedWith.get(line.stream);
      if (subject !== undefined && line.subject === undefined) found.push(entry(line, subject));
    });
  }
  return found;
}

async function eachSealLine(services: Pick<Services, 'events'>, visit: (line: SealLine) => void): Promise<void> {
  for (let from = 0n; ; ) {
    const page = await services.events.readStream(SEAL_STREAM, { fromRevision: from, maxCount: 100 });
    for (const stored of page) {
      const seal = LogSealed.schema.safeParse(stored.data);
      const version = sealVersionOf(stored.metadata);
      if (!seal.success || version === undefined) continue;
      let lines: SealLine[];
      try {
        lines = parseLines(seal.data.events, version);
      } catch (error) {
        throw new Error(`seal ${seal.data.seal} (position ${stored.position}): ${(error as Error).message}; admin verify names the break`);
      }
      for (const line of lines) visit(line);
    }
    if (page.length < 100) return;
    from = page[page.length - 1]!.revision + 1n;
  }
}

export async function audit(services: Pick<Services, 'events' | 'catalog' | 'config'>, values: { object: string; format: 'ndjson' | 'table' }, out: Output): Promise<number> {
  const mark = services.events.kind === 'sqlite' ? readPointInTime(services.config.DATA_DIR) : undefined;
  const { entries, submissionOf } = await trail(services, values.object, mark ? { erasedLater: erasedAfter(mark, values.object) } : {});
  if (entries.length === 0) {
    // A response's or vote's id: its trail is its object's, which the message names.
    if (submissionOf !== undefined) {
      const parent = submissionOf === '' ? 'its widget, form or poll' : submissionOf;
      throw new AppError('validation_error', `${values.object} is a response's or vote's id: --object takes the id of a widget, form or poll; the trail of ${parent} lists it (admin audit --object ${submissionOf || 'ID'})`);
    }
    // Nothing in the history names it: a mistyped id, most likely, which an empty trail would pass over in silence.
    throw new AppError('not_found', `no event in the history concerns ${values.object}`);
  }
  if (values.format === 'ndjson') {
    for (const entry of entries) out(JSON.stringify(entry));
    return 0;
  }
  const rows = [
    ['POSITION', 'RECORDED AT', 'TYPE', 'ACTOR', 'DETAILS'],
    ...entries.map((e) => [e.position, e.recorded_at ?? '(erased)', e.type, e.actor ?? '-', JSON.stringify(e.data)]),
  ];
  const widths = [0, 1, 2, 3].map((i) => Math.max(...rows.map((row) => row[i]!.length)));
  for (const row of rows) out(row.map((cell, i) => (i < 4 ? cell.padEnd(widths[i]!) : cell)).join('  ').trimEnd());
  return 0;
}
