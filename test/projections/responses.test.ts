import t from 'tap';
import { RESPONSES, responsesProjection } from '../../projections/responses.js';
import { catalog, type DomainEvent } from '../../src/domain-events.js';
import type { Recorded } from '../../src/event-catalog.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import type { Doc, ReadModelOp } from '../../src/infra/read-models/port.js';
import { tempDir } from '../support/services.js';

const metadata = { browser: 'Firefox', browser_version: '131.0', device: 'Mobile' as const, os: 'Android', ip_hash: 'ab'.repeat(32), language: 'fr', completion_time_ms: 5100, page_url: 'https://shop.example/é?q="x"', page_title: 'Boutique\n"été"' };
const response = {
  response_id: 'rsp_01JBX0000000000000000000',
  account_id: 'acc_01JBX0000000000000000000',
  form_id: 'frm_01JBX0000000000000000000',
  answers: { q1: 9, q2: 'Très bien, "merci"', q3: true },
  metadata,
  submitted_at: '2026-11-22T10:00:00.000Z',
  consent_record: { consent_given: true, timestamp: '2026-11-22T10:00:00.000Z', ip_hash: 'cd'.repeat(32), user_agent: 'Mozilla/5.0', consent_text: 'I agree', form_version: 3 },
  duplicate_guard: 'guard-frm_01JBX-v1',
};

/** The response put the projection makes of an event. */
const put = (event: Recorded<DomainEvent>) => responsesProjection.project(event).find((op): op is Extract<ReadModelOp, { op: 'put' }> => op.op === 'put' && op.collection === RESPONSES)!;

t.test('a response read from the embedded store is written as its event’s own text, which holds the very document', async (t) => {
  const events = openSqliteEventStore(tempDir(t));
  t.teardown(() => events.close());
  const serialized = catalog.serialize({ type: 'ResponseSubmitted', data: response }, { occurred_at: '2026-11-22T10:00:00.000Z', actor: 'public' });
  await events.append(`response-${response.response_id}`, [serialized], 'no_stream');
  const [stored] = await events.readAll({ after: 0n, limit: 10 });
  const { doc, json } = put(catalog.parse(stored!)!);
  t.type(json, 'string', 'the text given');
  t.strictSame(JSON.parse(json!) as Doc, doc, 'the same fields and values as the document');
  t.strictSame(JSON.parse(json!) as Doc, JSON.parse(JSON.stringify(doc)) as Doc, 'as the document written out would read');
  t.equal(doc.id, response.response_id);
  t.notOk('response_id' in (JSON.parse(json!) as Doc), 'the response id only as the id');
});

t.test('without the text as the catalog writes it, the document is written out as before', async (t) => {
  const event = (dataText: string | undefined) => ({ type: 'ResponseSubmitted', data: response, streamId: 'response-x', revision: 0n, position: 1n, metadata: { schema_version: 1, occurred_at: 'x', actor: 'x' }, recordedAt: 'x', dataText }) as unknown as Recorded<DomainEvent>;
  t.equal(put(event(undefined)).json, undefined, 'no text from the store');
  const { response_id, ...rest } = response;
  t.equal(put(event(JSON.stringify({ ...rest, response_id }))).json, undefined, 'the response id not first');
  t.equal(put(event(JSON.stringify({ response_id: 'rsp_other', ...rest }))).json, undefined, 'another response id first');
  t.equal(put(event(`{ "response_id": ${JSON.stringify(response_id)}, ${JSON.stringify(rest).slice(1)}`)).json, undefined, 'spaced otherwise');
  t.type(put(event(JSON.stringify(response))).json, 'string', 'and given when it is');
});
