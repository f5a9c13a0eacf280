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
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';
import {
  Settings,
  Theme,
  conditionalQuestionTypes,
  themedCreatedHistory,
  themedUpdatedHistory,
  Followups,
  questionedCreatedHistory,
  questionedUpdatedHistory,
  Flow,
  flowCreatedHistory,
  flowUpdatedHistory,
  Languages,
  languageCreatedHistory,
  languageUpdatedHistory,
} from '../embeddables/stored.js';

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
  ...Followups,
  questions: z.array(z.discriminatedUnion('type', [...conditionalQuestionTypes])),
  trigger_config: TriggerConfig,
  ...Flow,
  ...Languages,
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
  languageCreatedHistory(flowCreatedHistory(questionedCreatedHistory(themedCreatedHistory), 'widget')),
);

/** `changes` holds the new value of every top-level field that changed (nested objects already merged). */
export const WidgetUpdated = defineEvent(
  'WidgetUpdated',
  z.object({ widget_id: z.string(), changes: z.object(Configurable).partial(), updated_at: z.string() }),
  languageUpdatedHistory(flowUpdatedHistory(questionedUpdatedHistory(themedUpdatedHistory), 'widget')),
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
