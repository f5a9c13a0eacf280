import { z } from 'zod';
import { RESPONSE_COUNTS, RESPONSES } from '../../projections/responses.js';
import { Pagination, pagination, window, type PaginationQuery } from '../http/pagination.js';
import type { Filter } from '../infra/read-models/port.js';
import { Answers } from '../questions.js';
import type { Services } from '../services.js';
import { ConsentRecord } from './events.js';
import { ResponseMetadata } from './metadata.js';

/** Spec 2.6: a response record as the API shows it (the owner's account id stays inside). */
export const ResponseRecord = z.object({
  id: z.string(),
  widget_id: z.string().optional(),
  form_id: z.string().optional(),
  answers: Answers,
  submitted_at: z.string(),
  metadata: ResponseMetadata,
  consent_record: ConsentRecord.optional(),
});

export const ResponseList = z.object({ responses: z.array(ResponseRecord), pagination: Pagination });

/** D9: newest first; equal timestamps keep a stable order by id. */
export async function listResponses(services: Services, parentId: string, filter: Filter, query: PaginationQuery): Promise<z.input<typeof ResponseList>> {
  const [docs, counter] = await Promise.all([
    services.readModels.find(RESPONSES, filter, { sort: [['submitted_at', -1], ['id', -1]], ...window(query) }),
    services.readModels.get(RESPONSE_COUNTS, parentId),
  ]);
  const total = typeof counter?.count === 'number' ? counter.count : await services.readModels.count(RESPONSES, filter);
  return { responses: docs as unknown as z.input<typeof ResponseRecord>[], pagination: pagination(query, total) };
}
