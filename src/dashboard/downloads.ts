import { stringify } from 'csv-stringify/sync';
import { z } from 'zod';
import { RESPONSES } from '../../projections/responses.js';
import type { Plan } from '../accounts/plans.js';
import type { Doc, ReadModelStore, Scalar } from '../infra/read-models/port.js';
import { RECORDED_FIELDS } from '../submissions/metadata.js';
import { inOrder, shown, StatusQuery, statusFilter, TimeRange, type ResponseStatus } from '../submissions/responses.js';

/** `since`, `until` and `status` as the responses list takes them (complete responses by default). */
export const DownloadQuery = inOrder(TimeRange.extend(StatusQuery.shape).strict());
/** As sent: without `status`, complete responses. */
export type DownloadQuery = Omit<z.infer<typeof DownloadQuery>, 'status'> & { status?: ResponseStatus };

/** Read-model documents with their sealed personal fields opened, the erased ones left out (Context.personal). */
export type Reveal = (docs: Doc[]) => Promise<Doc[]>;

/** Responses read per query: a page of the index, never the whole set. */
export const PAGE_SIZE = 500;

/** Oldest first, the id breaking ties: the order of the read model's index on (parent_id, submitted_at, id), and on (listing, submitted_at, id) for one status. */
const ORDER = [['submitted_at', 1], ['id', 1]] satisfies Array<[string, 1]>;

/**
 * Every response of a parent within `since`/`until`, page by page in keyset
 * order: each page starts strictly after the last one's final response, so
 * memory holds one page, every page costs what the first does, and a response
 * arriving or erased meanwhile never shifts what follows.
 */
export async function* responsePages(store: ReadModelStore, parentId: string, query: DownloadQuery, pageSize = PAGE_SIZE, reveal: Reveal = async (docs) => docs): AsyncGenerator<Doc[]> {
  const range = { field: 'submitted_at', ...(query.since ? { gte: query.since } : {}), ...(query.until ? { lte: query.until } : {}) };
  const { filter } = statusFilter(parentId, query.status ?? 'complete');
  let after: Scalar[] | undefined;
  for (;;) {
    const page = await store.find(RESPONSES, filter, { sort: ORDER, range, limit: pageSize, ...(after ? { after } : {}) });
    // Opened as served: the read model keeps the personal fields sealed; an erased one is left out.
    const opened = await reveal(page);
    if (opened.length > 0) yield opened;
    if (page.length < pageSize) return;
    const last = page.at(-1)!;
    after = [String(last.submitted_at), last.id];
  }
}

/**
 * A spreadsheet runs a cell that starts with `=`, `+`, `-` or `@` (and some
 * with tab or CR) as a formula: such a cell gets a `'` in front, which
 * spreadsheets show as text and hide. A spreadsheet that splits a line on
 * another separator than the comma (`;` in German, French or Dutch
 * settings, a tab, a pipe) would start a cell after it, quotes or not: a
 * formula sign after any separator (spaces between allowed) gets a `'` in
 * front as well. Everything else is left as it is.
 */
export function neutralise(cell: string): string {
  const inner = cell.replace(/([,;\t|\r\n][ ]*)([=+\-@])/g, "$1'$2");
  return /^[=+\-@\t\r]/.test(inner) ? `'${inner}` : inner;
}

const text = (value: unknown): string => (value === undefined || value === null ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value));

export interface Column {
  header: string;
  cell(response: Doc): unknown;
}

interface StoredQuestion {
  id: string;
  title: string;
  type?: string;
  rows?: Array<{ id: string; label: string }>;
}

/** A list answer (multiple choice, ranking) in one cell: its choice ids in order, joined by `; `. */
export const LIST_SEPARATOR = '; ';

/** What of the object, and of the download, shapes the CSV's columns besides its questions and the plan. */
export interface CsvShape {
  /** The object's declared hidden fields, a column each. */
  hiddenFields?: readonly string[];
  /** The object has endings of its own: an `ending` column. */
  endings?: boolean;
  /** The download holds partial responses: `status` and `last_page` columns. */
  partial?: boolean;
  /** The object has translations: a `language` column. */
  languages?: boolean;
}

/**
 * The CSV's columns: `id`, `submitted_at`, one per current question headed
 * by its title (a matrix one per row, headed `<title> [<row label>]`; a
 * statement, which takes no answer, none), `hidden.<name>` for each declared
 * hidden field, then `metadata.<field>` for each metadata field the
 * account's plan records (a field of a higher plan would be a column empty in
 * every row; a response kept from a time on a higher plan has those fields in
 * the NDJSON download). An object with endings of its own has an `ending`
 * column after the hidden fields: the id of the ending each response reached,
 * empty for the default one. An object with translations has a
 * `language` column after it: the language each response was given in
 * (the answers of every language share their question's column, by id). A title two
 * columns share (two questions, or a question named like another column) is
 * followed by its question id in parentheses, so every header names one
 * column. Answers to questions the object no longer has are in the NDJSON
 * download, which holds every answer as stored. A download that holds
 * partial responses (`status` partial or all) has `status` and `last_page`
 * columns after `submitted_at`.
 */
export function csvColumns(questions: StoredQuestion[], plan: Plan, { hiddenFields = [], endings = false, partial = false, languages = false }: CsvShape = {}): Column[] {
  const fields = RECORDED_FIELDS[plan];
  const hiddenHeaders = hiddenFields.map((name) => `hidden.${name}`);
  const fixed = ['id', 'submitted_at', ...(partial ? ['status', 'last_page'] : []), ...hiddenHeaders, ...(endings ? ['ending'] : []), ...(languages ? ['language'] : []), ...fields.map((field) => `metadata.${field}`)];
  const answered = questions.filter((q) => q.type !== 'statement');
  const uses = new Map<string, number>();
  for (const title of [...fixed, ...answered.map((q) => q.title)]) uses.set(title, (uses.get(title) ?? 0) + 1);
  // Own answers only: a question id may be the name of something every object inherits (toString, constructor).
  const own = (record: unknown, id: string) => {
    const values = (record ?? {}) as Record<string, unknown>;
    return typeof values === 'object' && Object.hasOwn(values, id) ? values[id] : undefined;
  };
  const answerTo = (response: Doc, id: string) => {
    const answer = own(response.answers, id);
    return Array.isArray(answer) ? answer.join(LIST_SEPARATOR) : answer;
  };
  const metadata = (response: Doc) => (response.metadata ?? {}) as Record<string, unknown>;
  const questionColumns = (q: StoredQuestion): Column[] => {
    const header = uses.get(q.title)! > 1 ? `${q.title} (${q.id})` : q.title;
    if (q.type === 'matrix') return (q.rows ?? []).map((row) => ({ header: `${header} [${row.label}]`, cell: (r) => own(own(r.answers, q.id), row.id) }));
    return [{ header, cell: (r) => answerTo(r, q.id) }];
  };
  return [
    { header: 'id', cell: (r) => r.id },
    { header: 'submitted_at', cell: (r) => r.submitted_at },
    ...(partial ? [{ header: 'status', cell: (r: Doc) => r.status ?? 'complete' } satisfies Column, { header: 'last_page', cell: (r: Doc) => r.last_page ?? null } satisfies Column] : []),
    ...answered.flatMap(questionColumns),
    ...hiddenFields.map((name, i): Column => ({ header: hiddenHeaders[i]!, cell: (r) => own(r.hidden, name) })),
    ...(endings ? [{ header: 'ending', cell: (r: Doc) => r.ending ?? null } satisfies Column] : []),
    // Responses recorded before objects had languages were given in English.
    ...(languages ? [{ header: 'language', cell: (r: Doc) => r.language ?? 'en' } satisfies Column] : []),
    ...fields.map((field): Column => ({ header: `metadata.${field}`, cell: (r) => metadata(r)[field] })),
  ];
}

/**
 * RFC 4180 with CRLF between records, and every field quoted, empty ones
 * too: a spreadsheet reads a quoted field as one cell whatever separator it
 * splits lines on.
 */
const CSV = { record_delimiter: 'windows', quoted: true, quoted_empty: true } as const;

const row = (cells: unknown[]): string[] => cells.map((cell) => neutralise(text(cell)));

/** The CSV download, as text chunks: the header, then one chunk per page of responses. */
export async function* csvChunks(
  store: ReadModelStore,
  reveal: Reveal,
  parentId: string,
  questions: StoredQuestion[],
  query: DownloadQuery,
  plan: Plan,
  shape: Omit<CsvShape, 'partial'> = {},
): AsyncGenerator<string> {
  const columns = csvColumns(questions, plan, { ...shape, partial: (query.status ?? 'complete') !== 'complete' });
  yield stringify([row(columns.map((c) => c.header))], CSV);
  for await (const page of responsePages(store, parentId, query, PAGE_SIZE, reveal)) {
    yield stringify(page.map((response) => row(columns.map((c) => c.cell(response)))), CSV);
  }
}

/** A response as the API shows it (spec 2.6), without the read model's own fields. */
function record(doc: Doc): Record<string, unknown> {
  const { id, widget_id, form_id, answers, hidden, ending, status, last_page, language, submitted_at, metadata, consent_record } = shown(doc);
  return { id, widget_id, form_id, answers, hidden, ending, status, last_page, language, submitted_at, metadata, consent_record };
}

/** The NDJSON download: one response per line, as the API shows it. */
export async function* ndjsonChunks(store: ReadModelStore, reveal: Reveal, parentId: string, query: DownloadQuery): AsyncGenerator<string> {
  for await (const page of responsePages(store, parentId, query, PAGE_SIZE, reveal)) {
    yield page.map((doc) => `${JSON.stringify(record(doc))}\n`).join('');
  }
}
