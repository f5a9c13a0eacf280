import { z } from 'zod';
import { exactShape, type ExactShape } from './exact-shape.js';
import type { JsonObject, StoredEvent } from '../infra/event-store/port.js';

/**
 * Events are defined once, as a zod schema per type, and validated both when
 * they are appended and when they are read back. A stored event keeps the
 * version it was written in (`schema_version` in its metadata) for ever; a
 * reader upcasts older versions step by step to the one it knows, so the
 * schema of a version never changes once events of it may be stored.
 */

/** Turns the data of one version of an event into the data of the next. */
export type Upcaster = (data: JsonObject, metadata: EventMetadata) => JsonObject;

export interface EventDefinition<T extends string = string, S extends z.ZodObject = z.ZodObject> {
  type: T;
  /** The version `serialize` writes and `parse` upcasts to. */
  version: number;
  /** The stored shape of the current version. */
  schema: S;
  /** `upcasters[v]` turns version v into version v + 1, for every v below `version`. */
  upcasters: Readonly<Record<number, Upcaster>>;
}

export function defineEvent<T extends string, S extends z.ZodObject>(
  type: T,
  schema: S,
  history: { version: number; upcasters: Record<number, Upcaster> } = { version: 1, upcasters: {} },
): EventDefinition<T, S> {
  const { version, upcasters } = history;
  if (!Number.isInteger(version) || version < 1) throw new Error(`${type}: version must be a whole number from 1`);
  const expected = Array.from({ length: version - 1 }, (_, i) => String(i + 1));
  if (JSON.stringify(Object.keys(upcasters).sort((a, b) => Number(a) - Number(b))) !== JSON.stringify(expected)) {
    throw new Error(`${type}: version ${version} needs one upcaster from each older version (${expected.join(', ') || 'none'})`);
  }
  return { type, schema, version, upcasters };
}

/** The domain shape of one event: its type and its validated data. */
export type EventOf<D> = D extends EventDefinition<infer T, infer S> ? { type: T; data: z.output<S> } : never;

/** A domain event as read from the store, with where and when it was recorded. */
export type Recorded<E> = E & {
  streamId: string;
  revision: bigint;
  position: bigint;
  metadata: EventMetadata;
  recordedAt: string;
  /**
   * `data` as JSON text, as the store holds it, when the store gave its text
   * and `data` is that text read back unchanged: stored in the current
   * version, with no field the schema drops or adds. A projection that
   * writes the data out again may build on it rather than serialise it.
   */
  dataText: string | undefined;
  /** The sealed envelope the personal fields were stored in (kernel/personal.ts), for a read model that keeps it rather than them. */
  sealed?: StoredEvent['sealed'];
};

export const EventMetadata = z.object({
  /** The version the data was written in (not the one it was upcast to); events from before versions were recorded are version 1. */
  schema_version: z.number().int().positive().default(1),
  /** When the command that produced the event ran (the injected clock). */
  occurred_at: z.string(),
  /** Who caused it: `cli`, an API key id, or `public` for anonymous visitors. */
  actor: z.string(),
  request_id: z.string().optional(),
});
export type EventMetadata = z.infer<typeof EventMetadata>;

/** A stored event of a known type that this version of the code cannot turn into its current shape. */
export class UnreadableEvent extends Error {
  readonly position: bigint;
  readonly streamId: string;
  readonly type: string;

  constructor(
    event: Pick<StoredEvent, 'position' | 'streamId' | 'type'>,
    /** Why, in one line naming fields and versions, never their values. */
    readonly reason: string,
  ) {
    super(`${event.type} at position ${event.position} of ${event.streamId} cannot be read: ${reason}`);
    this.name = 'UnreadableEvent';
    this.position = event.position;
    this.streamId = event.streamId;
    this.type = event.type;
  }
}

const issues = (error: z.ZodError): string =>
  error.issues.map((issue) => `${issue.path.map(String).join('.') || '(the whole object)'}: ${issue.message}`).join('; ');

/**
 * The object paths the parsed value lacks but the input holds: fields the
 * schema does not know. Walked in place into one list, the path kept as a
 * stack and written out only for a field found: every append of every
 * event comes through here.
 */
function dropped(input: unknown, output: unknown, path: Array<string | number> = [], found: string[] = []): string[] {
  if (Array.isArray(input) && Array.isArray(output)) {
    for (let i = 0; i < input.length; i++) {
      path.push(i);
      dropped(input[i], output[i], path, found);
      path.pop();
    }
    return found;
  }
  if (!input || !output || typeof input !== 'object' || typeof output !== 'object' || Array.isArray(output)) return found;
  for (const key in input) {
    if (!Object.hasOwn(input, key)) continue;
    const value = (input as Record<string, unknown>)[key];
    if (value === undefined) continue;
    if (!Object.hasOwn(output, key)) found.push([...path, key].join('.'));
    else if (value !== null && typeof value === 'object') {
      path.push(key);
      dropped(value, (output as Record<string, unknown>)[key], path, found);
      path.pop();
    }
  }
  return found;
}

/**
 * Whether a schema's output holds exactly what its input held: the same
 * fields, none dropped or added, each value the same. A schema that only
 * checks hands every value through as it was, so a walk of the objects
 * tells; a transform or default shows as a value or field that differs.
 * (`dropped` names the fields a schema drops, for an error message; this
 * only answers, on every read, and sees what a default adds too.)
 */
function sameJson(input: unknown, output: unknown): boolean {
  if (input === output) return true;
  if (input === null || output === null || typeof input !== 'object' || typeof output !== 'object') return false;
  if (Array.isArray(input)) {
    if (!Array.isArray(output) || input.length !== output.length) return false;
    for (let i = 0; i < input.length; i++) if (input[i] !== output[i] && !sameJson(input[i], output[i])) return false;
    return true;
  }
  if (Array.isArray(output)) return false;
  const fields = Object.keys(input);
  if (fields.length !== Object.keys(output).length) return false;
  for (const field of fields) {
    // A field the output lacks reads as undefined, which no JSON value is (nor an inherited method).
    const value = (input as Record<string, unknown>)[field];
    if (value !== (output as Record<string, unknown>)[field] && !sameJson(value, (output as Record<string, unknown>)[field])) return false;
  }
  return true;
}

let exactMetadata: ExactShape | undefined | null = null;

/** An event's metadata read as EventMetadata (kept as stored when it is already of its shape), or the event is unreadable. */
function readMetadata(stored: StoredEvent): { data: EventMetadata } {
  if (exactMetadata === null) exactMetadata = exactShape(EventMetadata);
  if (exactMetadata?.(stored.metadata)) return { data: stored.metadata as unknown as EventMetadata };
  const metadata = EventMetadata.safeParse(stored.metadata);
  if (!metadata.success) throw new UnreadableEvent(stored, `its metadata does not fit: ${issues(metadata.error)}`);
  return metadata;
}

export class EventCatalog<E extends { type: string; data: unknown } = { type: string; data: unknown }> {
  private readonly byType = new Map<string, EventDefinition>();
  /**
   * The readings of frozen stored events: a store freezes an event it hands
   * to several readers as the one object (SQLite's live feed, to the
   * projections, erasure and webhooks), each of which reads it here. Readers
   * take a reading as it is and never change it.
   */
  private readonly shared = new WeakMap<StoredEvent, Recorded<E>>();
  /** Per type, the check that its stored data is already of its shape (exact-shape.ts), made when the type is first read. */
  private readonly exact = new Map<string, ExactShape | undefined>();

  constructor(definitions: EventDefinition[]) {
    for (const definition of definitions) {
      if (this.byType.has(definition.type)) throw new Error(`event type defined twice: ${definition.type}`);
      this.byType.set(definition.type, definition);
    }
  }

  /** Every (type, version) that stored events may hold, current or older. */
  versions(): Array<{ type: string; version: number }> {
    return [...this.byType.values()].flatMap(({ type, version }) => Array.from({ length: version }, (_, i) => ({ type, version: i + 1 })));
  }

  /**
   * Validates an event before it is appended, in the current version; throws
   * on a schema violation (a bug, not bad input), and on a field the schema
   * does not know, which would otherwise be dropped from the history unseen.
   */
  serialize(event: E, metadata: Omit<EventMetadata, 'schema_version'>): { type: string; data: JsonObject; metadata: JsonObject } {
    const definition = this.definition(event.type);
    const data = definition.schema.parse(event.data) as JsonObject;
    const unknown = dropped(event.data, data);
    if (unknown.length > 0) throw new Error(`${event.type} version ${definition.version} has no field ${unknown.join(', ')}: a new field is a new version`);
    return { type: event.type, data, metadata: { schema_version: definition.version, ...metadata } };
  }

  /**
   * The domain event in the current version of its type, or undefined for
   * types this catalog does not know (system or foreign events). Throws
   * UnreadableEvent when the stored event cannot be brought to that version.
   */
  parse(stored: StoredEvent): Recorded<E> | undefined {
    if (!Object.isFrozen(stored)) return this.read(stored);
    let recorded = this.shared.get(stored);
    if (!recorded) {
      recorded = this.read(stored);
      if (recorded) this.shared.set(stored, recorded);
    }
    return recorded;
  }

  private read(stored: StoredEvent): Recorded<E> | undefined {
    const definition = this.byType.get(stored.type);
    if (!definition) {
      // The store's own events (KurrentDB's `$metadata`, …) are not the service's business.
      if (stored.type.startsWith('$')) return undefined;
      // A type this version does not know was written by a newer one (as a version past the known is): never passed over.
      throw new UnreadableEvent(stored, `its type ${stored.type} is not one this version of the service knows`);
    }
    const metadata = readMetadata(stored);
    const from = metadata.data.schema_version;
    if (from > definition.version) throw new UnreadableEvent(stored, `it is version ${from}, and this service knows versions up to ${definition.version}`);
    let data = stored.data;
    for (let version = from; version < definition.version; version++) {
      try {
        data = definition.upcasters[version]!(data, metadata.data);
      } catch (error) {
        throw new UnreadableEvent(stored, `upcasting it from version ${version} failed: ${(error as Error).message}`);
      }
    }
    // Data already of the shape is kept as it is: zod would hand back an equal copy.
    const kept = this.exactShapeOf(definition)?.(data) === true;
    const parsed = kept ? { success: true as const, data } : definition.schema.safeParse(data);
    if (!parsed.success) throw new UnreadableEvent(stored, `its data does not fit version ${definition.version}: ${issues(parsed.error)}`);
    return {
      type: stored.type,
      data: parsed.data,
      streamId: stored.streamId,
      revision: stored.revision,
      position: stored.position,
      metadata: metadata.data,
      recordedAt: stored.recordedAt,
      dataText: stored.dataText !== undefined && data === stored.data && (kept || sameJson(data, parsed.data)) ? stored.dataText : undefined,
      ...(stored.sealed ? { sealed: stored.sealed } : {}),
    } as unknown as Recorded<E>;
  }

  private exactShapeOf(definition: EventDefinition): ExactShape | undefined {
    if (!this.exact.has(definition.type)) this.exact.set(definition.type, exactShape(definition.schema));
    return this.exact.get(definition.type);
  }

  private definition(type: string): EventDefinition {
    const definition = this.byType.get(type);
    if (!definition) throw new Error(`unknown event type: ${type}`);
    return definition;
  }
}
