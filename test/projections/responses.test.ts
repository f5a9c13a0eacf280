import t from 'tap';
import { RESPONSES, responsesProjection } from '../../projections/responses.js';
import { catalog, type DomainEvent } from '../../src/domain-events.js';
import type { Recorded } from '../../src/kernel/event-catalog.js';
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

/** The whole response record of an event's data, as the projection writes it without a text. */
const record = (data: typeof response | Omit<typeof response, 'consent_record' | 'duplicate_guard'>): Doc => {
  const { response_id, ...rest } = data;
  return JSON.parse(JSON.stringify({ id: response_id, parent_id: data.form_id, listing: data.form_id, ...rest })) as Doc;
};

/** The document a put stands for: its text's fields, and the string fields its `doc` holds that the text leaves out (the port's put). */
const whole = (op: Extract<ReadModelOp, { op: 'put' }>): Doc => {
  const doc = JSON.parse(op.json!) as Doc;
  for (const [field, value] of Object.entries(op.doc)) if (typeof value === 'string' && !Object.hasOwn(doc, field)) doc[field] = value;
  return doc;
};

t.test('a response read from the embedded store is written as its event’s own text, less what the columns hold, which stands for the very document', async (t) => {
  const events = openSqliteEventStore(tempDir(t));
  t.teardown(() => events.close());
  const serialized = catalog.serialize({ type: 'ResponseSubmitted', data: response }, { occurred_at: '2026-11-22T10:00:00.000Z', actor: 'public' });
  await events.append(`response-${response.response_id}`, [serialized], 'no_stream');
  const [stored] = await events.readAll({ after: 0n, limit: 10 });
  const op = put(catalog.parse(stored!)!);
  t.type(op.json, 'string', 'the text given');
  const text = JSON.parse(op.json!) as Doc;
  for (const field of ['id', 'response_id', 'parent_id', 'account_id', 'submitted_at']) t.notOk(field in text, `no ${field} in the text`);
  t.strictSame(whole(op), record(response), 'the text and the key fields: the same fields and values as the whole record');
  t.strictSame(op.doc, { id: response.response_id, parent_id: response.form_id, listing: response.form_id, account_id: response.account_id, submitted_at: response.submitted_at }, 'beside it, only what the columns hold');
});

t.test('the time taken out of the text is the response’s own, wherever it stands, never an answer’s', async (t) => {
  const event = (data: object) => ({ type: 'ResponseSubmitted', data, streamId: 'response-x', revision: 0n, position: 1n, metadata: { schema_version: 1, occurred_at: 'x', actor: 'x' }, recordedAt: 'x', dataText: JSON.stringify(data) }) as unknown as Recorded<DomainEvent>;
  const { consent_record: _c, duplicate_guard: _d, ...last } = response;
  const answered = { ...response, answers: { ...response.answers, submitted_at: response.submitted_at } };
  for (const [what, data] of [['last', last], ['before the consent record', response], ['also an answer', answered]] as const) {
    const op = put(event(data));
    t.type(op.json, 'string', what);
    t.notOk('submitted_at' in (JSON.parse(op.json!) as Doc), `${what}: taken out`);
    t.strictSame(whole(op), record(data), `${what}: the record whole`);
  }
});

t.test('without the text as the catalog writes it, the document is written out as before', async (t) => {
  const event = (dataText: string | undefined) => ({ type: 'ResponseSubmitted', data: response, streamId: 'response-x', revision: 0n, position: 1n, metadata: { schema_version: 1, occurred_at: 'x', actor: 'x' }, recordedAt: 'x', dataText }) as unknown as Recorded<DomainEvent>;
  t.equal(put(event(undefined)).json, undefined, 'no text from the store');
  t.strictSame(JSON.parse(JSON.stringify(put(event(undefined)).doc)), record(response), 'the record whole in the document');
  const { response_id, ...rest } = response;
  t.equal(put(event(JSON.stringify({ ...rest, response_id }))).json, undefined, 'the response id not first');
  t.equal(put(event(JSON.stringify({ response_id: 'rsp_other', ...rest }))).json, undefined, 'another response id first');
  const { account_id, ...others } = rest;
  t.equal(put(event(JSON.stringify({ response_id, ...others, account_id }))).json, undefined, 'the account not second');
  t.equal(put(event(JSON.stringify({ response_id, ...rest, submitted_at: '2026-11-22T10:00:00.001Z' }))).json, undefined, 'no time as the record holds it');
  t.equal(put(event(`{ "response_id": ${JSON.stringify(response_id)}, ${JSON.stringify(rest).slice(1)}`)).json, undefined, 'spaced otherwise');
  t.type(put(event(JSON.stringify(response))).json, 'string', 'and given when it is');
});
