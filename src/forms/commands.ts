import { execute } from '../kernel/aggregate.js';
import type { Author } from '../embeddables/commands.js';
import { notFound, ID } from '../embeddables/kinds.js';
import { FORM } from '../embeddables/queries.js';
import { shownClosed } from '../embeddables/routes.js';
import type { Context } from '../kernel/context.js';
import { form } from './form.js';
import type { CreateFormBody, UpdateFormBody } from './schemas.js';

/* The form commands, as the API and the dashboard both send them. */

export async function createForm(services: Context, author: Author, body: CreateFormBody) {
  const id = services.ids('frm');
  const at = services.clock();
  const { state } = await execute(services.commands, form, id, { type: 'CreateForm', form_id: id, account_id: author.accountId, body, at: at.toISOString() }, { actor: author.actor, at, requestId: author.requestId });
  if (state.status !== 'active') throw new Error('form was not created');
  return { id, title: state.form.title, published: false as const, version: 1 as const, created_at: state.form.created_at };
}

export async function updateForm(services: Context, author: Author, id: string, body: UpdateFormBody) {
  if (!ID.test(id)) throw notFound('form');
  const at = services.clock();
  const closed = await shownClosed(services, FORM, id, body.closed);
  const { state } = await execute(services.commands, form, id, { type: 'UpdateForm', account_id: author.accountId, body, closed, at: at.toISOString() }, { actor: author.actor, at, requestId: author.requestId });
  if (state.status !== 'active') throw notFound('form');
  const { title, published, version, updated_at } = state.form;
  return { id, title, published, version, updated_at };
}

export const deleteForm = (services: Context, id: string, author: Author, at: Date) =>
  execute(services.commands, form, id, { type: 'DeleteForm', account_id: author.accountId, at: at.toISOString() }, { actor: author.actor, at, requestId: author.requestId });
