import { z } from 'zod';
import { defineEvent, type EventOf } from '../event-catalog.js';
import { FormConfig } from './schemas.js';

const Version = z.number().int().positive();

export const FormCreated = defineEvent(
  'FormCreated',
  FormConfig.extend({ form_id: z.string(), account_id: z.string(), version: Version, created_at: z.string() }),
);

/** `version` is the form's version after the change: it grows when the questions change (D7). */
export const FormUpdated = defineEvent(
  'FormUpdated',
  z.object({ form_id: z.string(), changes: FormConfig.partial(), version: Version, updated_at: z.string() }),
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
