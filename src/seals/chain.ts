import { hash } from 'node:crypto';
import type { FeedRecord } from '../infra/event-store/port.js';

/**
 * The hash chain, as pure functions of what the store holds.
 *
 * Each event has a leaf: SHA-256 over its position, stream, type, id, the
 * time the store recorded it, the SHA-256 of its data as stored, and its
 * metadata as stored. A seal lists, in feed order, one line per event it
 * covers. Seals of version 2 (LogSealed) write
 *
 *     position TAB leaf TAB stream TAB revision TAB type [TAB subject TAB stream...]
 *
 * and those of version 1 the same without the revision (the event's place in
 * its stream), which they therefore do not seal. A submission (a response or
 * a vote) adds its id and the other streams erasing it deletes, so that a
 * verifier can tell an event removed by a recorded erasure from one removed
 * by anyone else after the event itself is gone. The seal's hash covers its
 * version (from 2 on), its number, the previous seal's hash, the range, its
 * time (from 3 on) and every line: changing, inserting, removing or
 * reordering an event, or a seal, changes a hash that a later seal (or the
 * auditor's note of the last one) pins. Seals of version 3 lay out their
 * lines as those of version 2.
 *
 * The leaf keeps version 1's make, so that one leaf per event serves seals of
 * either version.
 */

export const SEAL_STREAM = 'seals';

export interface SealLine {
  position: bigint;
  /** base64url SHA-256 of the event as stored. */
  leaf: string;
  stream: string;
  /** The event's revision in its stream; lines of version 1 do not hold it. */
  revision?: bigint;
  type: string;
  /** The response or vote the event records, when erasure may remove it. */
  subject?: string;
  /** Streams besides its own that erasing the subject deletes. */
  also?: string[];
}

/** The version of LogSealed, which says how its lines are laid out and what its hash covers. */
export type SealVersion = 1 | 2 | 3;

export interface SealContent {
  version: SealVersion;
  seal: number;
  previous: string | null;
  from: bigint;
  through: bigint;
  /** The seal's `sealed_at`, which its hash covers from version 3 on. */
  sealedAt?: string;
  events: string;
}

/** The SHA-256 of an event's data as stored: what erasure removes and the seals keep. */
export const payloadDigest = (data: string): string => hash('sha256', data, 'hex');

/** Where a submission stored plain was encrypted later (kernel/personal.ts), its data's digest is the one of the text it replaced. */
const ENCRYPTED_LATER = '"digest":"';

/** The submissions, whose personal fields may be encrypted in place. */
const SUBMISSIONS = new Set(['ResponseSubmitted', 'ResponseProgressed', 'VoteCast']);

/**
 * The digest a leaf holds of an event's data: of the text stored, or, for a
 * submission encrypted in place, of the text it replaced, which its envelope
 * names (`admin verify` checks the name against the text it opens).
 */
export function storedDigest(type: string, data: string): string {
  if (SUBMISSIONS.has(type) && data.includes(ENCRYPTED_LATER)) {
    try {
      const digest = (JSON.parse(data) as { sealed?: { digest?: unknown } }).sealed?.digest;
      if (typeof digest === 'string') return digest;
    } catch {
      // Not JSON: hashed as it is, and the chain tells what it is.
    }
  }
  return payloadDigest(data);
}

const leafText = (event: FeedRecord): string =>
  `${event.position}\n${event.streamId}\n${event.type}\n${event.id}\n${event.recordedAt}\n${storedDigest(event.type, event.data)}\n${event.metadata}`;

export const leafOf = (event: FeedRecord): string => hash('sha256', leafText(event), 'base64url');

/** The leaf's 32 bytes, one character each: a string of them costs far less to make than a Buffer. */
export const leafLatin1 = (event: FeedRecord): string => hash('sha256', leafText(event), 'binary');

/** Tabs and line ends would split a line; stream names from elsewhere (KurrentDB) may hold them. */
const escape = (text: string): string => (/[%\t\n\r]/.test(text) ? text.replace(/[%\t\n\r]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, '0')}`) : text);
const unescape = (text: string): string => (text.includes('%') ? text.replace(/%([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16))) : text);

/** A line as a seal of `version` writes it; a line of version 2 or later needs the event's revision. */
export function formatLine(line: SealLine, version: SealVersion): string {
  const fields = [String(line.position), line.leaf, escape(line.stream)];
  if (version >= 2) {
    if (line.revision === undefined) throw new Error(`the line of position ${line.position} has no revision`);
    fields.push(String(line.revision));
  }
  fields.push(escape(line.type));
  if (line.subject !== undefined) fields.push(escape(line.subject), ...(line.also ?? []).map(escape));
  return fields.join('\t');
}

/** Parses the `events` of a seal of `version`; throws on a line that is not one (a seal changed by hand). */
export function parseLines(events: string, version: SealVersion): SealLine[] {
  if (events === '') return [];
  return events.split('\n').map((text, i) => {
    const fields = text.split('\t');
    const [position, leaf, stream] = fields;
    const revision = version >= 2 ? fields[3] : undefined;
    const [type, subject, ...also] = fields.slice(version >= 2 ? 4 : 3);
    if (!position || !/^\d+$/.test(position) || !leaf || stream === undefined || type === undefined || (version >= 2 && !/^\d+$/.test(revision ?? ''))) {
      throw new Error(`line ${i + 1} of the seal is malformed`);
    }
    return {
      position: BigInt(position),
      leaf,
      stream: unescape(stream),
      ...(revision !== undefined ? { revision: BigInt(revision) } : {}),
      type: unescape(type),
      ...(subject !== undefined ? { subject: unescape(subject), also: also.map(unescape) } : {}),
    };
  });
}

export function sealHash(content: SealContent): string {
  if (content.version >= 3 && content.sealedAt === undefined) throw new Error(`a seal of version ${content.version} hashes its time, and this one has none`);
  const time = content.version >= 3 ? `${content.sealedAt}\n` : '';
  const sealed = `${content.seal}\n${content.previous ?? ''}\n${content.from}\n${content.through}\n${time}${content.events}`;
  // Version 1 hashed no version; a text starting with "v" cannot be one of its texts, which start with a digit.
  return hash('sha256', content.version === 1 ? sealed : `v${content.version}\n${sealed}`, 'hex');
}

/** The version a seal was written in, from its metadata as stored; what cannot be read there is version 1, as events from before versions were recorded are. */
export function sealVersionOf(metadata: unknown): SealVersion | undefined {
  const version = (metadata as { schema_version?: unknown } | null)?.schema_version ?? 1;
  return version === 1 || version === 2 || version === 3 ? version : undefined;
}
