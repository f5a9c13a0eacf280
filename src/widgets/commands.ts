import { execute } from '../kernel/aggregate.js';
import type { Author } from '../embeddables/commands.js';
import { notFound, ID } from '../embeddables/kinds.js';
import { WIDGET } from '../embeddables/queries.js';
import { shownClosed } from '../embeddables/routes.js';
import type { Context } from '../kernel/context.js';
import type { CreateWidgetBody, UpdateWidgetBody } from './schemas.js';
import { widget } from './widget.js';

/* The widget commands, as the API and the dashboard both send them. */

export async function createWidget(services: Context, author: Author, body: CreateWidgetBody) {
  const id = services.ids('wgt');
  const at = services.clock();
  const { state } = await execute(services.commands, widget, id, { type: 'CreateWidget', widget_id: id, account_id: author.accountId, body, at: at.toISOString() }, { actor: author.actor, at, requestId: author.requestId });
  if (state.status !== 'active') throw new Error('widget was not created');
  const { title, widget_type, created_at } = state.widget;
  return { id, title, widget_type, published: false as const, created_at };
}

export async function updateWidget(services: Context, author: Author, id: string, body: UpdateWidgetBody) {
  if (!ID.test(id)) throw notFound('widget');
  const at = services.clock();
  const closed = await shownClosed(services, WIDGET, id, body.closed);
  const { state } = await execute(services.commands, widget, id, { type: 'UpdateWidget', account_id: author.accountId, body, closed, at: at.toISOString() }, { actor: author.actor, at, requestId: author.requestId });
  if (state.status !== 'active') throw notFound('widget');
  const { title, published, updated_at } = state.widget;
  return { id, title, published, updated_at };
}

export const deleteWidget = (services: Context, id: string, author: Author, at: Date) =>
  execute(services.commands, widget, id, { type: 'DeleteWidget', account_id: author.accountId, at: at.toISOString() }, { actor: author.actor, at, requestId: author.requestId });
