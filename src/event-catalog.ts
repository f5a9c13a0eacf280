import { z } from 'zod';
import type { JsonObject, StoredEvent } from './infra/event-store/port.js';

/**
 * Events are defined once, as a zod schema per type, and validated both when
 * they are appended and when they are read back. `version` goes into each
 * event's metadata so a later schema can upcast older events.
 */
export interface EventDefinition<T extends string = string, S extends z.ZodObject = z.ZodObject> {
  type: T;
  version: number;
  schema: S;
}

export function defineEvent<T extends string, S extends z.ZodObject>(
  type: T,
  schema: S,
  version = 1,
): EventDefinition<T, S> {
  return { type, schema, version };
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
};

export const EventMetadata = z.object({
  schema_version: z.number().int().positive(),
  /** When the command that produced the event ran (the injected clock). */
  occurred_at: z.string(),
  /** Who caused it: `cli`, an API key id, or `public` for anonymous visitors. */
  actor: z.string(),
  request_id: z.string().optional(),
});
export type EventMetadata = z.infer<typeof EventMetadata>;

export class EventCatalog<E extends { type: string; data: unknown } = { type: string; data: unknown }> {
  private readonly byType = new Map<string, EventDefinition>();

  constructor(definitions: EventDefinition[]) {
    for (const definition of definitions) {
      if (this.byType.has(definition.type)) throw new Error(`event type defined twice: ${definition.type}`);
      this.byType.set(definition.type, definition);
    }
  }

  /** Validates an event before it is appended; throws on a schema violation (a bug, not bad input). */
  serialize(event: E, metadata: Omit<EventMetadata, 'schema_version'>): { type: string; data: JsonObject; metadata: JsonObject } {
    const definition = this.definition(event.type);
    const data = definition.schema.parse(event.data) as JsonObject;
    return { type: event.type, data, metadata: { schema_version: definition.version, ...metadata } };
  }

  /** The domain event, or undefined for types this catalog does not know (system or foreign events). */
  parse(stored: StoredEvent): Recorded<E> | undefined {
    const definition = this.byType.get(stored.type);
    if (!definition) return undefined;
    const data = definition.schema.parse(stored.data);
    const metadata = EventMetadata.parse(stored.metadata);
    return {
      type: stored.type,
      data,
      streamId: stored.streamId,
      revision: stored.revision,
      position: stored.position,
      metadata,
      recordedAt: stored.recordedAt,
    } as unknown as Recorded<E>;
  }

  private definition(type: string): EventDefinition {
    const definition = this.byType.get(type);
    if (!definition) throw new Error(`unknown event type: ${type}`);
    return definition;
  }
}
