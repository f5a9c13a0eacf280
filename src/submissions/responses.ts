import { z } from 'zod';
import { RESPONSES } from '../../projections/responses.js';
import { Pagination, pagination, window, type PaginationQuery } from '../http/pagination.js';
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

/** D9: newest first, in the order the service recorded them; any page costs what page 1 costs. */
export async function listResponses(services: Services, parentId: string, query: PaginationQuery): Promise<z.input<typeof ResponseList>> {
  const { docs, total } = await services.readModels.newestFirst(RESPONSES, parentId, window(query));
  return { responses: docs as unknown as z.input<typeof ResponseRecord>[], pagination: pagination(query, total) };
}
