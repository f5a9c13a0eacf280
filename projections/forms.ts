import type { DomainEvent } from '../src/domain-events.js';
import type { FormEvent } from '../src/forms/events.js';
import type { Projection } from '../src/kernel/feed/projection.js';
import { withSummaries, type EmbeddableDocOf, type Summaries } from './embeddables.js';

export const FORMS = 'forms';
/** The small fields of each form, for lists and the cheap checks of public requests. */
export const FORM_SUMMARIES: Summaries = { collection: 'form_summaries', fields: ['account_id', 'title', 'description', 'published', 'version', 'settings', 'slots_taken', 'created_at', 'updated_at'] };

type FormCreated = Extract<FormEvent, { type: 'FormCreated' }>['data'];

/** A form as its read model holds it. */
export type FormDoc = EmbeddableDocOf<FormCreated, 'form_id'>;

export const formsProjection: Projection<DomainEvent> = withSummaries(FORM_SUMMARIES, FORMS, {
  name: 'forms',
  // 2: the summaries collection beside the documents; themes hold text_color and mode.
  // 3: hidden fields and the redirect.
  // 4: pages, rules, endings, the presentation and keep_partial.
  // 5: the language and translations.
  version: 5,
  collections: [{ name: FORMS, indexes: [] }],
  project(event) {
    switch (event.type) {
      case 'FormCreated': {
        const { form_id, created_at, ...config } = event.data;
        return [{ op: 'put', collection: FORMS, doc: { id: form_id, ...config, published: false, slots_taken: 0, created_at, updated_at: created_at } satisfies FormDoc }];
      }
      case 'FormUpdated':
        return [{ op: 'patch', collection: FORMS, where: { id: event.data.form_id }, set: { ...event.data.changes, version: event.data.version, updated_at: event.data.updated_at } }];
      case 'FormPublished':
        return [{ op: 'patch', collection: FORMS, where: { id: event.data.form_id }, set: { published: true, updated_at: event.data.published_at } }];
      case 'FormUnpublished':
        return [{ op: 'patch', collection: FORMS, where: { id: event.data.form_id }, set: { published: false, updated_at: event.data.unpublished_at } }];
      case 'FormDeleted':
        return [{ op: 'delete', collection: FORMS, where: { id: event.data.form_id } }];
      case 'SubmissionSlotReserved':
        return event.data.target === 'form' ? [{ op: 'increment', collection: FORMS, id: event.data.target_id, field: 'slots_taken', by: 1 }] : [];
      default:
        return [];
    }
  },
});
