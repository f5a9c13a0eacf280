import type { DomainEvent } from '../src/domain-events.js';
import type { WidgetEvent } from '../src/widgets/events.js';
import type { Projection } from '../src/kernel/feed/projection.js';
import { withSummaries, type EmbeddableDocOf, type Summaries } from './embeddables.js';

export const WIDGETS = 'widgets';
/** The small fields of each widget, for lists and the cheap checks of public requests. */
export const WIDGET_SUMMARIES: Summaries = { collection: 'widget_summaries', fields: ['account_id', 'title', 'description', 'widget_type', 'published', 'settings', 'slots_taken', 'created_at', 'updated_at'] };

type WidgetCreated = Extract<WidgetEvent, { type: 'WidgetCreated' }>['data'];

/** A widget as its read model holds it. */
export type WidgetDoc = EmbeddableDocOf<WidgetCreated, 'widget_id'>;

export const widgetsProjection: Projection<DomainEvent> = withSummaries(WIDGET_SUMMARIES, WIDGETS, {
  name: 'widgets',
  // 2: the summaries collection beside the documents; themes hold text_color and mode.
  // 3: hidden fields and the redirect.
  // 4: pages, rules and endings.
  // 5: the language and translations.
  version: 5,
  collections: [{ name: WIDGETS, indexes: [] }],
  project(event) {
    switch (event.type) {
      case 'WidgetCreated': {
        const { widget_id, created_at, ...config } = event.data;
        return [
          {
            op: 'put',
            collection: WIDGETS,
            doc: { id: widget_id, ...config, published: false, slots_taken: 0, created_at, updated_at: created_at } satisfies WidgetDoc,
          },
        ];
      }
      case 'WidgetUpdated':
        return [{ op: 'patch', collection: WIDGETS, where: { id: event.data.widget_id }, set: { ...event.data.changes, updated_at: event.data.updated_at } }];
      case 'WidgetPublished':
        return [{ op: 'patch', collection: WIDGETS, where: { id: event.data.widget_id }, set: { published: true, updated_at: event.data.published_at } }];
      case 'WidgetUnpublished':
        return [{ op: 'patch', collection: WIDGETS, where: { id: event.data.widget_id }, set: { published: false, updated_at: event.data.unpublished_at } }];
      case 'WidgetDeleted':
        return [{ op: 'delete', collection: WIDGETS, where: { id: event.data.widget_id } }];
      // Slots, not responses: response events leave the store when erased, slots never do,
      // so this count is the same live and after a rebuild.
      case 'SubmissionSlotReserved':
        return event.data.target === 'widget'
          ? [{ op: 'increment', collection: WIDGETS, id: event.data.target_id, field: 'slots_taken', by: 1 }]
          : [];
      default:
        return [];
    }
  },
});
