import type { ReadModelOp } from '../src/infra/read-models/port.js';
import type { Projection } from './projection.js';

export const RESPONSES = 'responses';
/** How many responses each widget and form holds, so a page need not count them. */
export const RESPONSE_COUNTS = 'response_counts';

/** Response records as the API shows them (spec 2.6), plus the owner for checks. */
export const responsesProjection: Projection = {
  // v2 added response_counts: the new name replays it from zero on existing stores.
  name: 'responses_v2',
  collections: [
    {
      name: RESPONSES,
      indexes: [
        ['widget_id', 'submitted_at'],
        ['form_id', 'submitted_at'],
      ],
    },
    { name: RESPONSE_COUNTS, indexes: [] },
  ],
  project(event): ReadModelOp[] {
    switch (event.type) {
      case 'WidgetCreated':
        return [{ op: 'put', collection: RESPONSE_COUNTS, doc: { id: event.data.widget_id, count: 0 } }];
      case 'FormCreated':
        return [{ op: 'put', collection: RESPONSE_COUNTS, doc: { id: event.data.form_id, count: 0 } }];
      case 'WidgetDeleted':
        return [{ op: 'delete', collection: RESPONSE_COUNTS, where: { id: event.data.widget_id } }];
      case 'FormDeleted':
        return [{ op: 'delete', collection: RESPONSE_COUNTS, where: { id: event.data.form_id } }];
      case 'ResponseSubmitted': {
        const { response_id, ...record } = event.data;
        const parent = record.widget_id ?? record.form_id;
        return [
          { op: 'put', collection: RESPONSES, doc: { id: response_id, ...record } },
          ...(parent ? [{ op: 'increment' as const, collection: RESPONSE_COUNTS, id: parent, field: 'count', by: 1 }] : []),
        ];
      }
      case 'ResponsesErased':
        // Counted down by what is really deleted: after a rebuild the erased responses
        // were never there, so the count agrees either way.
        return event.data.response_ids.map((id) => ({
          op: 'delete',
          collection: RESPONSES,
          where: { id },
          countDown: { collection: RESPONSE_COUNTS, id: event.data.parent_id, field: 'count' },
        }));
      default:
        return [];
    }
  },
};
