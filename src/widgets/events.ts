import { z } from 'zod';
import { defineEvent, type EventOf } from '../event-catalog.js';
import { WidgetConfig } from './schemas.js';

export const WidgetCreated = defineEvent(
  'WidgetCreated',
  WidgetConfig.extend({ widget_id: z.string(), account_id: z.string(), created_at: z.string() }),
);

/** `changes` holds the new value of every top-level field that changed (nested objects already merged). */
export const WidgetUpdated = defineEvent(
  'WidgetUpdated',
  z.object({ widget_id: z.string(), changes: WidgetConfig.omit({ widget_type: true }).partial(), updated_at: z.string() }),
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
