import { z } from 'zod';
import { defineEvent, type EventOf } from '../event-catalog.js';
import { PollConfig } from './schemas.js';

export const PollCreated = defineEvent('PollCreated', PollConfig.extend({ poll_id: z.string(), account_id: z.string(), created_at: z.string() }));
export const PollUpdated = defineEvent('PollUpdated', z.object({ poll_id: z.string(), changes: PollConfig.partial(), updated_at: z.string() }));
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
  z.object({ vote_id: z.string(), poll_id: z.string(), account_id: z.string(), option_ids: z.array(z.string()).min(1), cast_at: z.string() }),
);

export const pollEvents = [PollCreated, PollUpdated, PollPublished, PollUnpublished, PollDeleted, VoteCast];

export type PollEvent =
  | EventOf<typeof PollCreated>
  | EventOf<typeof PollUpdated>
  | EventOf<typeof PollPublished>
  | EventOf<typeof PollUnpublished>
  | EventOf<typeof PollDeleted>
  | EventOf<typeof VoteCast>;
