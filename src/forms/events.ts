/**
 * The stored shapes of the form events, frozen: history is written in them
 * and must stay readable by every later version of the service. A change is a
 * new version of the event with an upcaster from the one before (and a
 * fixture of it in test/fixtures/events), never an edit of a shape here; a
 * shape two events share changes both. They state fields and types, not the
 * API's limits, and import nothing from the API's schemas: tightening a limit
 * there must not make history unreadable.
 *
 * The `version` field in the data is the form's own version (D7), which
 * counts changes to its questions; it is not the version of the event.
 */
import { z } from 'zod';
import { defineEvent, type EventOf } from '../event-catalog.js';
import type { JsonObject } from '../infra/event-store/port.js';

const Theme = z.object({ primaryColor: z.string(), backgroundColor: z.string() });

const Settings = z.object({
  allowed_domains: z.array(z.string()),
  closes_at: z.string().nullable(),
  max_responses: z.number().int().nullable(),
  rate_limit: z.object({ max: z.number().int(), window_seconds: z.number().int() }).nullable(),
  honeypot: z.boolean(),
  prevent_duplicates: z.boolean(),
});

const question = { id: z.string(), title: z.string(), required: z.boolean() };
const Question = z.discriminatedUnion('type', [
  z.object({ ...question, type: z.literal('star_rating'), starRatingSettings: z.object({ maxStars: z.number().int() }) }),
  z.object({ ...question, type: z.literal('nps') }),
  z.object({ ...question, type: z.literal('long_text') }),
  z.object({ ...question, type: z.literal('short_text') }),
  z.object({ ...question, type: z.literal('email') }),
  z.object({ ...question, type: z.literal('single_choice'), choices: z.array(z.object({ id: z.string(), label: z.string() })) }),
  z.object({ ...question, type: z.literal('severity') }),
  z.object({ ...question, type: z.literal('consent'), text: z.string() }),
]);

/** What the owner configures, stored whole at creation. */
const Configurable = {
  title: z.string(),
  description: z.string(),
  theme: Theme,
  thank_you_title: z.string(),
  thank_you_message: z.string(),
  settings: Settings,
  questions: z.array(Question),
};

const FormVersion = z.number().int();

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

export const FormCreated = defineEvent(
  'FormCreated',
  z.object({ form_id: z.string(), account_id: z.string(), ...Configurable, version: FormVersion, created_at: z.string() }),
  createdHistory,
);

/** `version` is the form's version after the change: it grows when the questions change (D7). */
export const FormUpdated = defineEvent(
  'FormUpdated',
  z.object({ form_id: z.string(), changes: z.object(Configurable).partial(), version: FormVersion, updated_at: z.string() }),
  updatedHistory,
);

export const FormPublished = defineEvent('FormPublished', z.object({ form_id: z.string(), published_at: z.string() }));
export const FormUnpublished = defineEvent('FormUnpublished', z.object({ form_id: z.string(), unpublished_at: z.string() }));
export const FormDeleted = defineEvent('FormDeleted', z.object({ form_id: z.string(), account_id: z.string(), deleted_at: z.string() }));

export const formEvents = [FormCreated, FormUpdated, FormPublished, FormUnpublished, FormDeleted];

export type FormEvent =
  | EventOf<typeof FormCreated>
  | EventOf<typeof FormUpdated>
  | EventOf<typeof FormPublished>
  | EventOf<typeof FormUnpublished>
  | EventOf<typeof FormDeleted>;
