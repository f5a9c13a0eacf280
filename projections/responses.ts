import type { DomainEvent } from '../src/domain-events.js';
import type { Recorded } from '../src/kernel/event-catalog.js';
import type { ReadModelOp } from '../src/infra/read-models/port.js';
import type { Projection } from '../src/kernel/feed/projection.js';
import { SEALED } from '../src/kernel/personal.js';
import { countersCollection, RESPONSE_SUMMARIES, responseCounted, responseCounters, uncount } from './response-summaries.js';

export const RESPONSES = 'responses';

/** Where a form's partial responses are ranked, apart from its complete ones (which rank under the parent's id). */
export const partialListing = (parentId: string): string => `partial:${parentId}`;

/**
 * Response records as the API shows them (spec 2.6), plus the owner and the
 * parent (widget or form) for checks. Ranked within their `listing` in the
 * order they were recorded, so every page of a list costs the same: a
 * parent's complete responses rank under its id, a form's partial ones
 * (`status: "partial"`, from `ResponseProgressed`) under
 * `partial:<form id>`; the submission that completes a partial response
 * moves it to the parent's listing, as its newest. The counters live beside
 * them in `response_summaries`, counted from complete responses only.
 */
export const responsesProjection: Projection<DomainEvent> = {
  name: 'responses',
  // 3 ranks responses within their parent; 4 keeps the indexed fields in columns (a rebuild puts a million of them);
  // 5 keeps the summaries' counters, each response listing its own (one row a response, where a record beside it halved a rebuild);
  // 6 lists them no more (an erasure works them out from the response), and its text leaves out what the columns hold: a third less to write in a rebuild.
  // 7 counts list and matrix answers (choices, places, rows) and keeps the day a date answer names.
  // 8 ranks within the listing (complete or partial) and keeps partial responses.
  // 9 counts responses by language.
  // 10 keeps a sealed response's personal fields sealed, as the event stores them (opened when served).
  version: 10,
  collections: [
    {
      name: RESPONSES,
      // Cursor pages, date filters and an object's first and last (all, or by status); an account's latest for the overview.
      indexes: [
        ['parent_id', 'submitted_at', 'id'],
        ['listing', 'submitted_at', 'id'],
        ['account_id', 'submitted_at', 'id'],
      ],
      rankWithin: 'listing',
      indexedColumns: true,
      // A sealed response's document is about 1.2 kB.
      largeDocuments: true,
      counted: responseCounters,
    },
    countersCollection(RESPONSE_SUMMARIES),
  ],
  project(event): ReadModelOp[] {
    switch (event.type) {
      case 'ResponseSubmitted': {
        const data = event.data;
        const parent_id = data.widget_id ?? data.form_id;
        if (!parent_id) return [];
        const { ops } = responseCounted(data, parent_id);
        const { response_id: id, account_id, submitted_at } = data;
        // Not first in its stream: a partial response before it, which this one replaces in the parent's listing.
        const completes: ReadModelOp[] = event.revision > 0n ? [{ op: 'delete', collection: RESPONSES, where: { id } }] : [];
        if (event.sealed) {
          // What a person sent stays sealed at rest here too: only the fields that place the response are plain.
          const { response_id: _id, answers: _answers, hidden: _hidden, metadata: _metadata, consent_record: _consent, ...plain } = data;
          // The counters it counted in are listed, as an erasure cannot work them out from sealed answers.
          const counted = ops.map((op) => op.doc.id);
          return [...completes, { op: 'put', collection: RESPONSES, doc: { id, parent_id, listing: parent_id, ...plain, counted, [SEALED]: event.sealed } }, ...ops];
        }
        const json = textOf(event, id, account_id, submitted_at);
        // With its text, the document needs only what the store keeps in columns (the port's put): a rebuild puts a million.
        if (json !== undefined) return [...completes, { op: 'put', collection: RESPONSES, doc: { id, parent_id, listing: parent_id, account_id, submitted_at }, json }, ...ops];
        const { response_id, ...record } = data;
        return [...completes, { op: 'put', collection: RESPONSES, doc: { id: response_id, parent_id, listing: parent_id, ...record } }, ...ops];
      }
      case 'ResponseProgressed': {
        // The latest page replaces the one before; it counts in no summary. Without the account's id, the account's latest responses
        // (read by its index) are complete ones only.
        const { response_id, form_id, page, answers, hidden, progressed_at } = event.data;
        const placed = { id: response_id, parent_id: form_id, listing: partialListing(form_id), form_id, status: 'partial', last_page: page };
        // Sealed, its answers stay sealed here as the event stores them (opened when served).
        const doc = event.sealed ? { ...placed, [SEALED]: event.sealed, submitted_at: progressed_at } : { ...placed, answers, ...(hidden ? { hidden } : {}), submitted_at: progressed_at };
        return [{ op: 'put', collection: RESPONSES, doc }];
      }
      case 'ResponsesErased':
        // A poll's erased ids are votes, which were never responses here.
        if (event.data.parent === 'poll') return [];
        return uncount(RESPONSE_SUMMARIES, RESPONSES, event.data.response_ids);
      default:
        return [];
    }
  },
};

/**
 * The record's JSON text made from the event's own, as stored, without the
 * fields the store keeps beside it in columns (the port's put): the
 * response id taken off its front with the account's, and the time taken
 * out. Writing out a response's answers and metadata again was a fifth of
 * the work of preparing a rebuild, and each field stored once rather than
 * twice is less to write. Undefined, for the record to be written out
 * whole, where the store gave no text or it is not laid out as the
 * catalog's own serialisation lays it out.
 */
function textOf(event: Recorded<DomainEvent>, id: string, account: string, submittedAt: string): string | undefined {
  const stored = event.dataText;
  if (stored === undefined) return undefined;
  const head = `{"response_id":${JSON.stringify(id)},"account_id":${JSON.stringify(account)},`;
  if (!stored.startsWith(head)) return undefined;
  // The last one is the event's own: the answers and metadata come before it, and what may follow
  // (consent record, duplicate guard) has no field of that name.
  const time = `,"submitted_at":${JSON.stringify(submittedAt)}`;
  const at = stored.lastIndexOf(time);
  const next = stored.charCodeAt(at + time.length);
  if (at < head.length || (next !== COMMA && next !== CLOSE)) return undefined;
  return `{${stored.slice(head.length, at)}${stored.slice(at + time.length)}`;
}

const COMMA = 44;
const CLOSE = 125;
