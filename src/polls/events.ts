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
import { PageSettings, createdHistory, pageCreatedHistory, pageUpdatedHistory, updatedHistory } from '../embeddables/stored.js';

/** What the owner configures, stored whole at creation. */
const Configurable = {
  question: z.string(),
  options: z.array(z.object({ id: z.string(), text: z.string() })),
  allow_multiple: z.boolean(),
  settings: PageSettings,
};

export const PollCreated = defineEvent(
  'PollCreated',
  z.object({ poll_id: z.string(), account_id: z.string(), ...Configurable, created_at: z.string() }),
  pageCreatedHistory(createdHistory),
);
export const PollUpdated = defineEvent(
  'PollUpdated',
  z.object({ poll_id: z.string(), changes: z.object(Configurable).partial(), updated_at: z.string() }),
  pageUpdatedHistory(updatedHistory),
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
