/**
 * The stored shapes of the widget events, frozen: history is written in them
 * and must stay readable by every later version of the service. A change is a
 * new version of the event with an upcaster from the one before (and a
 * fixture of it in test/fixtures/events), never an edit of a shape here; a
 * shape two events share changes both. They state fields and types, not the
 * API's limits, and import nothing from the API's schemas: tightening a limit
 * there must not make history unreadable.
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
]);

const TriggerConfig = z.object({
  position: z.enum(['bottom-right', 'bottom-left', 'top-right', 'top-left']),
  icon: z.enum(['chat', 'feedback', 'help', 'star', 'heart']),
  text: z.string(),
  showText: z.boolean(),
  triggerMode: z.enum(['click_toggle', 'scroll', 'exit_intent', 'time_delay']),
  scrollPercentage: z.number(),
  timeDelay: z.number(),
});

/** What the owner configures, stored whole at creation; only the type is fixed then. */
const Configurable = {
  title: z.string(),
  description: z.string(),
  theme: Theme,
  thank_you_title: z.string(),
  thank_you_message: z.string(),
  settings: Settings,
  questions: z.array(Question),
  trigger_config: TriggerConfig,
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

export const WidgetCreated = defineEvent(
  'WidgetCreated',
  z.object({
    widget_id: z.string(),
    account_id: z.string(),
    widget_type: z.enum(['feedback', 'nps', 'contact', 'bug_report', 'custom']),
    ...Configurable,
    created_at: z.string(),
  }),
  createdHistory,
);

/** `changes` holds the new value of every top-level field that changed (nested objects already merged). */
export const WidgetUpdated = defineEvent(
  'WidgetUpdated',
  z.object({ widget_id: z.string(), changes: z.object(Configurable).partial(), updated_at: z.string() }),
  updatedHistory,
);

export const WidgetPublished = defineEvent('WidgetPublished', z.object({ widget_id: z.string(), published_at: z.string() }));
export const WidgetUnpublished = defineEvent('WidgetUnpublished', z.object({ widget_id: z.string(), unpublished_at: z.string() }));
export const WidgetDeleted = defineEvent(
  'WidgetDeleted',
  z.object({ widget_id: z.string(), account_id: z.string(), deleted_at: z.string() }),
);

export const widgetEvents = [WidgetCreated, WidgetUpdated, WidgetPublished, WidgetUnpublished, WidgetDeleted];

export type WidgetEvent =
  | EventOf<typeof WidgetCreated>
  | EventOf<typeof WidgetUpdated>
  | EventOf<typeof WidgetPublished>
  | EventOf<typeof WidgetUnpublished>
  | EventOf<typeof WidgetDeleted>;
