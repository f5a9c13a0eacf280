import t from 'tap';
import { FORM_SUMMARIES, FORMS, formsProjection } from '../../projections/forms.js';
import type { Recorded } from '../../src/kernel/event-catalog.js';
import type { DomainEvent } from '../../src/domain-events.js';

const recorded = (type: string, data: object, revision = 0n) => ({ type, data, streamId: 'form-x', revision, position: 1n, metadata: {} }) as unknown as Recorded<DomainEvent>;
const summaryOps = (event: Recorded<DomainEvent>) => formsProjection.project(event).filter((op) => op.collection === FORM_SUMMARIES.collection);
const settings = { allowed_domains: [], closes_at: null, max_responses: 3, rate_limit: null, honeypot: false, prevent_duplicates: false, network_limit_per_hour: null };

t.test('a form’s summary holds its small fields and follows every change of them', async (t) => {
  const created = summaryOps(recorded('FormCreated', { form_id: 'frm_1', account_id: 'acc_1', title: 'T', description: 'D', questions: [{ id: 'q', type: 'nps', title: 'Q', required: false }], theme: {}, thank_you_title: 'a', thank_you_message: 'b', settings, version: 1, created_at: '2026-11-22T10:00:00.000Z' }));
  t.strictSame(created, [{ op: 'put', collection: 'form_summaries', doc: { account_id: 'acc_1', title: 'T', description: 'D', published: false, version: 1, settings, slots_taken: 0, created_at: '2026-11-22T10:00:00.000Z', updated_at: '2026-11-22T10:00:00.000Z', revision: 0, id: 'frm_1' } }], 'created: every summary field, no questions');
  t.strictSame(summaryOps(recorded('FormUpdated', { form_id: 'frm_1', changes: { questions: [], title: 'U' }, version: 2, updated_at: 'later' }, 1n)), [{ op: 'patch', collection: 'form_summaries', where: { id: 'frm_1' }, set: { title: 'U', version: 2, updated_at: 'later', revision: 1 } }], 'updated: the summary fields of the change, and the revision');
  t.strictSame(summaryOps(recorded('FormUpdated', { form_id: 'frm_1', changes: { questions: [] }, version: 3, updated_at: 'later' }, 2n)), [{ op: 'patch', collection: 'form_summaries', where: { id: 'frm_1' }, set: { version: 3, updated_at: 'later', revision: 2 } }], 'questions alone: the revision still moves');
  t.strictSame(summaryOps(recorded('SubmissionSlotReserved', { target: 'form', target_id: 'frm_1', response_id: 'rsp_1' })), [{ op: 'increment', collection: 'form_summaries', id: 'frm_1', field: 'slots_taken', by: 1 }], 'a slot taken');
  t.strictSame(summaryOps(recorded('FormDeleted', { form_id: 'frm_1', account_id: 'acc_1', deleted_at: 'later' })), [{ op: 'delete', collection: 'form_summaries', where: { id: 'frm_1' } }], 'deleted');
  t.ok(formsProjection.project(recorded('FormDeleted', { form_id: 'frm_1', account_id: 'acc_1', deleted_at: 'later' })).some((op) => op.collection === FORMS), 'the whole document as before');
  t.match(formsProjection.collections.find((c) => c.name === 'form_summaries'), { indexes: [['account_id', 'created_at']] }, 'indexed for the lists');
});
