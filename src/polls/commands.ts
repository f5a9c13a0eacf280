import { execute } from '../kernel/aggregate.js';
import type { Author } from '../embeddables/commands.js';
import { notFound, ID } from '../embeddables/kinds.js';
import { POLL } from '../embeddables/queries.js';
import { shownClosed } from '../embeddables/routes.js';
import type { Context } from '../kernel/context.js';
import { poll } from './poll.js';
import type { CreatePollBody, UpdatePollBody } from './schemas.js';

/* The poll commands, as the API and the dashboard both send them. */

const optionIds = (services: Context, n: number) => Array.from({ length: n }, () => services.ids('opt'));

export async function createPoll(services: Context, author: Author, body: CreatePollBody) {
  const id = services.ids('pol');
  const at = services.clock();
  const { state } = await execute(
    services.commands,
    poll,
    id,
    { type: 'CreatePoll', poll_id: id, account_id: author.accountId, body, option_ids: optionIds(services, body.options.length), at: at.toISOString() },
    { actor: author.actor, at, requestId: author.requestId },
  );
  if (state.status !== 'active') throw new Error('poll was not created');
  const { question, options, created_at } = state.poll;
  return { id, question, options, published: false as const, created_at };
}

export async function updatePoll(services: Context, author: Author, id: string, body: UpdatePollBody) {
  if (!ID.test(id)) throw notFound('poll');
  const at = services.clock();
  const { state } = await execute(
    services.commands,
    poll,
    id,
    {
      type: 'UpdatePoll',
      account_id: author.accountId,
      body,
      new_option_ids: optionIds(services, body.options?.length ?? 0),
      closed: await shownClosed(services, POLL, id, body.closed),
      at: at.toISOString(),
    },
    { actor: author.actor, at, requestId: author.requestId },
  );
  if (state.status !== 'active') throw notFound('poll');
  const { question, published, updated_at } = state.poll;
  return { id, question, published, updated_at };
}

export const deletePoll = (services: Context, id: string, author: Author, at: Date) =>
  execute(services.commands, poll, id, { type: 'DeletePoll', account_id: author.accountId, at: at.toISOString() }, { actor: author.actor, at, requestId: author.requestId });
