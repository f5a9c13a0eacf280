import type { ReadModelOp } from '../src/infra/read-models/port.js';
import type { Projection } from './projection.js';

export const RESPONSES = 'responses';

/**
 * Response records as the API shows them (spec 2.6), plus the owner and the
 * parent (widget or form) for checks. Ranked within the parent in the order
 * they were recorded, so every page of a list costs the same.
 */
export const responsesProjection: Projection = {
  name: 'responses',
  // 3 ranks responses within their parent; 4 keeps the indexed fields in columns (a rebuild puts a million of them).
  version: 4,
  // The index serves cursor pages and date filters: a page after any response costs what the first costs.
  collections: [{ name: RESPONSES, indexes: [['parent_id', 'submitted_at', 'id']], rankWithin: 'parent_id', indexedColumns: true }],
  project(event): ReadModelOp[] {
    switch (event.type) {
      case 'ResponseSubmitted': {
        const { response_id, ...record } = event.data;
        const parent_id = record.widget_id ?? record.form_id;
        return parent_id ? [{ op: 'put', collection: RESPONSES, doc: { id: response_id, parent_id, ...record } }] : [];
      }
      case 'ResponsesErased':
        // A poll's erased ids are votes, which were never responses here.
        if (event.data.parent === 'poll') return [];
        return event.data.response_ids.map((id) => ({ op: 'delete', collection: RESPONSES, where: { id } }));
      default:
        return [];
    }
  },
};
