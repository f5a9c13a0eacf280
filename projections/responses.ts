import type { ReadModelOp } from '../src/infra/read-models/port.js';
import type { Projection } from './projection.js';

export const RESPONSES = 'responses';

/** Response records as the API shows them (spec 2.6), plus the owner for checks. */
export const responsesProjection: Projection = {
  name: 'responses',
  collections: [
    {
      name: RESPONSES,
      indexes: [
        ['widget_id', 'submitted_at'],
        ['form_id', 'submitted_at'],
      ],
    },
  ],
  project(event): ReadModelOp[] {
    switch (event.type) {
      case 'ResponseSubmitted': {
        const { response_id, ...record } = event.data;
        return [{ op: 'put', collection: RESPONSES, doc: { id: response_id, ...record } }];
      }
      case 'ResponsesErased':
        return event.data.response_ids.map((id) => ({ op: 'delete', collection: RESPONSES, where: { id } }));
      default:
        return [];
    }
  },
};
