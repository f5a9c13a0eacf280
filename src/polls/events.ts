/**
 * The stored shapes of the poll and vote events, frozen: history is written
 * in them and must stay readable by every later version of the service. A
 * change is a new version of the event with an upcaster from the one before
 * (and a fixture of it in test/fixtures/events), never an edit of a shape
 * here; a shape two events share changes both. They state fields and types,
 * not the API's limits, and import nothing from the API's schemas: tightening
 * a limit there must not make history unreadable.
 */
import { z } from 'zod';
import { defineEvent, type EventOf } from '../event-catalog.js';
import type { JsonObject } from '../infra/event-store/port.js';

const Settings = z.object({
  allowed_domains: z.array(z.string()),
  closes_at: z.string().nullable(),
  max_responses: z.number().int().nullable(),
  rate_limit: z.object({ max: z.number().int(), window_seconds: z.number().int() }).nullable(),
  honeypot: z.boolean(),
  prevent_duplicates: z.boolean(),
});

/** What the owner configures, stored whole at creation. */
const Configurable = {
  question: z.string(),
  options: z.array(z.object({ id: z.string(), text: z.string() })),
  allow_multiple: z.boolean(),
  settings: Settings,
};

/**
 * Settings grew `rate_limit`, `honeypot` and `prevent_duplicates` after
 * events of version 1 were first stored, and version 1 events written before
 * then lack them (those written since carry them, still as version 1). Absent
 * was always read as null, false and false; version 2 states all six, and
 * these upcasters fill in what version 1 left out.
 */
const settingsOfVersion1 = (settings: unknown): JsonObject => ({ rate_limit: null, honeypot: false, prevent_duplicates: false, ...(settings as JsonObject) });
const createdHistory = { version: 2, upcasters: { 1: (data: JsonObject) => ({ ...data, settings: settingsOfVersion1(data.settings) }) } };
const updatedHistory = {
  version: 2,
  upcasters: {
    1: (data: JsonObject) => {
      const changes = data.changes as JsonObject | undefined;
      return changes?.settings === undefined ? data : { ...data, changes: { ...changes, settings: settingsOfVersion1(changes.settings) } };
    },
  },
};

export const PollCreated = defineEvent(
  'PollCreated',
  z.object({ poll_id: z.string(), account_id: z.string(), ...Configurable, created_at: z.string() }),
  createdHistory,
);
export const PollUpdated = defineEvent(
  'PollUpdated',
  z.object({ poll_id: z.string(), changes: z.object(Configurable).partial(), updated_at: z.string() }),
  updatedHistory,
);
export const PollPublished = defineEvent('PollPublished', z.object({ poll_id: z.string(), published_at: z.string() }));
export const PollUnpublished = defineEvent('PollUnpublished', z.object({ poll_id: z.string(), unpublished_at: z.string() }));
export const PollDeleted = defineEvent('PollDeleted', z.object({ poll_id: z.string(), account_id: z.string(), deleted_at: z.string() }));

/**
 * One vote, in a stream of its own named by the poll and the voter's hashed
 * fingerprint. It carries only what results and the duplicate check need:
 * no metadata about the voter.
 */
export const VoteCast = defineEvent(
  'VoteCast',
  z.object({ vote_id: z.string(), poll_id: z.string(), account_id: z.string(), option_ids: z.array(z.string()), cast_at: z.string() }),
);

export const pollEvents = [PollCreated, PollUpdated, PollPublished, PollUnpublished, PollDeleted, VoteCast];

export type PollEvent =
  | EventOf<typeof PollCreated>
  | EventOf<typeof PollUpdated>
  | EventOf<typeof PollPublished>
  | EventOf<typeof PollUnpublished>
  | EventOf<typeof PollDeleted>
  | EventOf<typeof VoteCast>;
