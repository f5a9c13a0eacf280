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
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';
import {
  ConditionalConsentQuestion,
  Theme,
  conditionalQuestionTypes,
  themedCreatedHistory,
  themedUpdatedHistory,
  FormSettings,
  pageCreatedHistory,
  pageUpdatedHistory,
  Followups,
  questionedCreatedHistory,
  questionedUpdatedHistory,
  Flow,
  Presentation,
  flowCreatedHistory,
  flowUpdatedHistory,
  Languages,
  languageCreatedHistory,
  languageUpdatedHistory,
} from '../embeddables/stored.js';

/** What the owner configures, stored whole at creation. */
const Configurable = {
  title: z.string(),
  description: z.string(),
  theme: Theme,
  thank_you_title: z.string(),
  thank_you_message: z.string(),
  settings: FormSettings,
  ...Followups,
  questions: z.array(z.discriminatedUnion('type', [...conditionalQuestionTypes, ConditionalConsentQuestion])),
  ...Flow,
  presentation: Presentation,
  ...Languages,
};

const FormVersion = z.number().int();

export const FormCreated = defineEvent(
  'FormCreated',
  z.object({ form_id: z.string(), account_id: z.string(), ...Configurable, version: FormVersion, created_at: z.string() }),
  languageCreatedHistory(flowCreatedHistory(questionedCreatedHistory(pageCreatedHistory(themedCreatedHistory)), 'form')),
);

/** `version` is the form's version after the change: it grows when the questions change (D7). */
export const FormUpdated = defineEvent(
  'FormUpdated',
  z.object({ form_id: z.string(), changes: z.object(Configurable).partial(), version: FormVersion, updated_at: z.string() }),
  languageUpdatedHistory(flowUpdatedHistory(questionedUpdatedHistory(pageUpdatedHistory(themedUpdatedHistory)), 'form')),
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
