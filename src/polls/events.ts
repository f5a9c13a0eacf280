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
import { defineEvent, type EventOf } from '../kernel/event-catalog.js';
import { createdHistory, updatedHistory, Theme, PageSettings, pageCreatedHistory, pageUpdatedHistory, Languages, languageCreatedHistory, languageUpdatedHistory } from '../embeddables/stored.js';
import type { JsonObject } from '../infra/event-store/port.js';

/** What the owner configures, stored whole at creation. Version 3 added `theme` and the address limit in `settings`; version 4 `settings.indexable`. */
const Configurable = {
  question: z.string(),
  options: z.array(z.object({ id: z.string(), text: z.string() })),
  allow_multiple: z.boolean(),
  settings: PageSettings,
  theme: Theme,
  ...Languages,
};

/** Polls stored before they had a theme showed the embed's default colours, in light mode unless the page said otherwise. */
const THEME_OF_VERSION_2: JsonObject = { primaryColor: '#4f46e5', backgroundColor: '#ffffff', text_color: null, mode: 'light' };

/**
 * Version 3 added `theme` and `settings.network_limit_per_hour` together:
 * polls stored before had no address limit (null) and the default colours.
 */
const pollCreatedHistory = {
  version: 3,
  upcasters: { 1: createdHistory.upcasters[1], 2: (data: JsonObject) => ({ ...createdHistory.upcasters[2](data), theme: THEME_OF_VERSION_2 }) },
};
/** An update of version 2 never changed the theme: only its settings, when it has them, gain the null address limit. */
const pollUpdatedHistory = updatedHistory;

export const PollCreated = defineEvent(
  'PollCreated',
  z.object({ poll_id: z.string(), account_id: z.string(), ...Configurable, created_at: z.string() }),
  languageCreatedHistory(pageCreatedHistory(pollCreatedHistory)),
);
export const PollUpdated = defineEvent(
  'PollUpdated',
  z.object({ poll_id: z.string(), changes: z.object(Configurable).partial(), updated_at: z.string() }),
  languageUpdatedHistory(pageUpdatedHistory(pollUpdatedHistory)),
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
