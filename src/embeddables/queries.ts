import { FORM_SUMMARIES, FORMS, type FormDoc } from '../../projections/forms.js';
import { POLL_SUMMARIES, POLLS, type PollDoc } from '../../projections/polls.js';
import { WIDGET_SUMMARIES, WIDGETS, type WidgetDoc } from '../../projections/widgets.js';
import type { Doc } from '../infra/read-models/port.js';
import type { Context } from '../kernel/context.js';
import type { Settings } from './settings.js';
import { ID, notFound, type Kind } from './kinds.js';

/** The stored fields every embeddable read model has. */
export interface EmbeddableDoc extends Doc {
  account_id: string;
  published: boolean;
  settings: Settings;
  /** Submissions accepted so far under `max_responses` (slots, never erased). */
  slots_taken?: number;
}

export interface Embeddable<D extends EmbeddableDoc> {
  kind: Kind;
  collection: string;
  /** The collection of the same documents' small fields (see EmbeddableSummary). */
  summaries: string;
  /** `/api/widgets` and the like. */
  path: string;
}

/** The three kinds of object a site owner embeds, where they are stored and served. */
export const WIDGET: Embeddable<WidgetDoc & EmbeddableDoc> = { kind: 'widget', collection: WIDGETS, summaries: WIDGET_SUMMARIES.collection, path: '/api/widgets' };
export const FORM: Embeddable<FormDoc & EmbeddableDoc> = { kind: 'form', collection: FORMS, summaries: FORM_SUMMARIES.collection, path: '/api/forms' };
export const POLL: Embeddable<PollDoc & EmbeddableDoc> = { kind: 'poll', collection: POLLS, summaries: POLL_SUMMARIES.collection, path: '/api/polls' };

export const EMBEDDABLES = { widget: WIDGET, form: FORM, poll: POLL } as const;

/** A stored object by id, or null; malformed ids never reach a store. */
export async function findEmbeddable<D extends EmbeddableDoc>(services: Context, what: Embeddable<D>, id: string): Promise<D | null> {
  if (!ID.test(id)) return null;
  return (await services.readModels.get(what.collection, id)) as D | null;
}

/**
 * The fields of an object every public request is first checked against
 * (owner, published, settings), read without its definition, whose questions
 * may weigh half a megabyte: the rate, the publication and the token are
 * checked on this before the whole object is read or loaded.
 */
export type EmbeddableSummary = Pick<EmbeddableDoc, 'id' | 'account_id' | 'published' | 'settings' | 'slots_taken'> & {
  /** The revision of the object's stream its read model shows. */
  revision: number;
};

/** An object's summary by id, or null; malformed ids never reach a store. */
export async function findSummary<D extends EmbeddableDoc>(services: Context, what: Embeddable<D>, id: string): Promise<EmbeddableSummary | null> {
  if (!ID.test(id)) return null;
  return (await services.readModels.get(what.summaries, id)) as EmbeddableSummary | null;
}

/**
 * An object's summary for a public request's first checks (rate, publication,
 * token, limits): read afresh after this process's own writes, and at most
 * a moment old after another's (RecentDocs). What it lets through is checked
 * again against the object's own stream before anything is recorded.
 */
export async function recentSummary<D extends EmbeddableDoc>(services: Context, what: Embeddable<D>, id: string): Promise<EmbeddableSummary | null> {
  if (!ID.test(id)) return null;
  return (await services.recent.get(what.summaries, id)) as EmbeddableSummary | null;
}

/** The caller's own object's summary, or the kind's 404 (D5: another account's object does not exist for the caller). */
export async function ownEmbeddable<D extends EmbeddableDoc>(services: Context, what: Embeddable<D>, id: string, accountId: string): Promise<EmbeddableSummary> {
  const summary = await findSummary(services, what, id);
  if (!summary || summary.account_id !== accountId) throw notFound(what.kind);
  return summary;
}
