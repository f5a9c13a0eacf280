import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { changePlan } from '../../src/accounts/commands.js';
import { responsePages } from '../../src/dashboard/downloads.js';
import type { App } from '../../src/app.js';
import type { Doc } from '../../src/infra/read-models/port.js';
import { manualClock, owner, testApp, tokenFor, type Owner } from '../support/app.js';
import { signIn as signedIn } from './support.js';

/** RFC 4180 read back independently of the writer: quoted fields, doubled quotes, CRLF between records. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (text[i] === '"' && text[i + 1] === '"') {
          field += '"';
          i += 2;
        } else if (text[i] === '"') {
          i++;
          break;
        } else field += text[i++];
      }
    } else if (text[i] === ',') {
      record.push(field);
      field = '';
      i++;
    } else if (text[i] === '\r' && text[i + 1] === '\n') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      i += 2;
    } else field += text[i++];
  }
  if (field !== '' || record.length > 0) throw new Error('the last record does not end with CRLF');
  return records;
}

const QUESTIONS = [
  { id: 'nps', type: 'nps', title: 'Score' },
  { id: 'c1', type: 'short_text', title: 'Comment' },
  { id: 'c2', type: 'long_text', title: 'Comment' },
  { id: 'f', type: 'short_text', title: '=HYPERLINK("x")' },
];
const TEXTS = ['=cmd()', '+1', '-2', '@SUM(A1)', '\tx', '\rx', 'line one\nline two', 'a "quoted" word, and a comma', 'plain', 'zażółć 🎉', "ok;=cmd|' /C calc'!A0", 'a\t+b', 'x, -1; y| @z'];

async function formWithResponses(t: Test, app: App, who: Owner, count: number, clock: ReturnType<typeof manualClock>) {
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: who.headers, payload: { title: 'Survey', questions: QUESTIONS } });
  const form = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: who.headers, payload: { published: true } });
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    clock.advance(3_600_000);
    const reply = await app.inject({
      method: 'POST',
      url: `/api/forms/${form}/submit`,
      remoteAddress: `198.51.100.${i + 1}`,
      payload: { answers: { nps: i % 11, c1: TEXTS[i % TEXTS.length], c2: `second ${i}`, f: 'x' }, _token: await tokenFor(app, 'forms', form), metadata: { pageTitle: '=page()' } },
    });
    t.equal(reply.statusCode, 200, reply.body);
    ids.push(reply.json().id);
  }
  return { form, ids };
}


t.test('a CSV download: one row per response of the summary total, RFC 4180, formulas neutralised, titles told apart', async (t) => {
  const clock = manualClock('2026-11-01T00:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const { form, ids } = await formWithResponses(t, app, biz, 24, clock);
  await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: ids.slice(0, 4), formId: form } });
  const { cookie } = await signedIn(app, services, biz.accountId);

  const reply = await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/responses.csv`, headers: { cookie } });
  t.equal(reply.statusCode, 200);
  t.equal(reply.headers['content-type'], 'text/csv; charset=utf-8');
  t.equal(reply.headers['content-disposition'], `attachment; filename="form-${form}-responses.csv"`);
  const [header, ...rows] = parseCsv(reply.body);
  const summary = (await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/summary`, headers: { cookie } })).json();
  t.equal(summary.total, 20);
  t.equal(rows.length, summary.total, 'as many rows as the summary counts');
  t.strictSame(header!.slice(0, 6), ['id', 'submitted_at', 'Score', 'Comment (c1)', 'Comment (c2)', `'=HYPERLINK("x")`], 'a shared title names its question; a formula title is neutralised');
  t.ok(header!.includes('metadata.browser') && header!.includes('metadata.country'), 'metadata columns');
  t.ok(rows.every((row) => row.length === header!.length), 'every row has every column');
  t.strictSame(rows.map((row) => row[0]), ids.slice(4), 'oldest first; erased responses are gone');
  const comments = rows.map((row) => row[3]);
  for (const [text, expected] of [['=cmd()', "'=cmd()"], ['+1', "'+1"], ['-2', "'-2"], ['@SUM(A1)', "'@SUM(A1)"], ['\tx', "'\tx"], ['\rx', "'\rx"], ['line one\nline two', 'line one\nline two'], ['a "quoted" word, and a comma', 'a "quoted" word, and a comma'], ["ok;=cmd|' /C calc'!A0", "ok;'=cmd|' /C calc'!A0"], ['a\t+b', "a\t'+b"], ['x, -1; y| @z', "x, '-1; y| '@z"]]) {
    t.ok(comments.includes(expected!), `${JSON.stringify(text)} comes out as ${JSON.stringify(expected)}`);
  }
  t.notOk(comments.includes('=cmd()'), 'no cell starts a formula');
  // Split on any separator a spreadsheet might use, no piece starts a formula.
  const formulas = [...header!, ...rows.flat()].filter((cell) => cell.split(/[,;\t|\r\n]/).some((piece) => /^[=+\-@]/.test(piece.trimStart())));
  t.strictSame(formulas, [], 'no formula after a separator either');
  const quoted = (records: string[][]) => records.map((record) => `${record.map((field) => `"${field.replaceAll('"', '""')}"`).join(',')}\r\n`).join('');
  t.equal(reply.body, quoted([header!, ...rows]), 'every field is quoted, empty ones too');
  t.ok(rows.every((row) => row[header!.indexOf('metadata.page_title')] === "'=page()"), 'metadata cells are neutralised too');

  const since = rows[5]![1]!;
  const until = rows[9]![1]!;
  const window = parseCsv((await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/responses.csv?since=${since}&until=${until}`, headers: { cookie } })).body);
  t.strictSame(window.slice(1).map((row) => row[0]), rows.slice(5, 10).map((row) => row[0]), 'since and until are inclusive bounds on submitted_at');
  t.match((await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/responses.csv?since=yesterday`, headers: { cookie } })).json(), { statusCode: 400, code: 'validation_error' });
});

t.test('a CSV download has the metadata columns its account\'s plan records, no column always empty', async (t) => {
  const clock = manualClock('2026-11-01T00:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const free = ['browser', 'browser_version', 'device', 'os', 'ip_hash', 'language', 'completion_time_ms', 'page_url', 'page_title'];
  const pro = [...free, 'screen_width', 'screen_height', 'fingerprint_hash', 'referer', 'referer_domain'];
  const business = [...pro, 'country', 'region', 'city', 'timezone', 'utm_source', 'utm_medium', 'utm_campaign', 'is_proxy'];
  for (const [plan, fields] of [['free', free], ['pro', pro], ['business', business]] as const) {
    const who = await owner(services);
    const created = await app.inject({ method: 'POST', url: '/api/forms', headers: who.headers, payload: { title: 'Survey', questions: QUESTIONS } });
    const form = created.json().id as string;
    await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: who.headers, payload: { published: true } });
    await changePlan(services, who.accountId, plan);
    const sent = await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, payload: { answers: { nps: 5 }, _token: await tokenFor(app, 'forms', form) } });
    t.equal(sent.statusCode, 200, sent.body);
    const { cookie } = await signedIn(app, services, who.accountId);
    const [header, row] = parseCsv((await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/responses.csv`, headers: { cookie } })).body);
    const metadata = header!.filter((name) => name.startsWith('metadata.'));
    t.strictSame(metadata, fields.map((field) => `metadata.${field}`), `${plan}: the columns of what the plan records`);
    const stored = JSON.parse((await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/responses.ndjson`, headers: { cookie } })).body).metadata as Record<string, unknown>;
    t.strictSame(Object.keys(stored).sort(), [...fields].sort(), `${plan}: each of them is a field its responses hold`);
    t.equal(row!.length, header!.length);
  }
});

t.test('a question whose id every object inherits (toString, constructor) left unanswered is an empty cell, not what the object inherits', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const questions = ['toString', 'constructor', 'valueOf', '__defineGetter__'].map((id) => ({ id, type: 'short_text', title: `Q ${id}` }));
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Names', questions } });
  t.equal(created.statusCode, 201, created.body);
  const form = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: biz.headers, payload: { published: true } });
  const sent = await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, payload: { answers: { valueOf: 'given' }, _token: await tokenFor(app, 'forms', form) } });
  t.equal(sent.statusCode, 200, sent.body);
  const { cookie } = await signedIn(app, services, biz.accountId);
  const [header, row] = parseCsv((await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/responses.csv`, headers: { cookie } })).body);
  const cell = (id: string) => row![header!.indexOf(`Q ${id}`)];
  t.equal(cell('valueOf'), 'given');
  for (const id of ['toString', 'constructor', '__defineGetter__']) t.equal(cell(id), '', `${id}: empty`);
});

t.test('an NDJSON download: one response per line as the API shows it', async (t) => {
  const clock = manualClock('2026-11-01T00:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const { form, ids } = await formWithResponses(t, app, biz, 5, clock);
  const { cookie } = await signedIn(app, services, biz.accountId);
  const reply = await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/responses.ndjson`, headers: { cookie } });
  t.equal(reply.headers['content-type'], 'application/x-ndjson');
  t.equal(reply.headers['content-disposition'], `attachment; filename="form-${form}-responses.ndjson"`);
  const lines = reply.body.split('\n');
  t.equal(lines.pop(), '', 'every line ends with a newline');
  const records = lines.map((line) => JSON.parse(line));
  const listed = (await app.inject({ method: 'GET', url: `/api/forms/${form}/responses?limit=100`, headers: biz.headers })).json().responses;
  t.strictSame(records, [...listed].reverse(), 'the API’s records, oldest first');
  t.strictSame(records.map((r) => r.id), ids);
});

t.test('downloads and summaries: another account’s object is not found, no session is refused', async (t) => {
  const clock = manualClock('2026-11-01T00:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const other = await owner(services);
  const { form } = await formWithResponses(t, app, biz, 1, clock);
  const { cookie } = await signedIn(app, services, other.accountId);
  for (const path of ['responses.csv', 'responses.ndjson', 'summary']) {
    t.match((await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/${path}`, headers: { cookie } })).json(), { statusCode: 404, code: 'form_not_found' }, path);
    t.match((await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/${path}` })).json(), { statusCode: 401, code: 'session_required' }, path);
  }
  t.match((await app.inject({ method: 'GET', url: '/dashboard/api/widgets/not-an-id/summary', headers: { cookie } })).json(), { statusCode: 404, code: 'widget_not_found' });
  t.match((await app.inject({ method: 'GET', url: '/dashboard/api/overview', headers: { cookie } })).json(), { totals: { widgets: 0, forms: 0, polls: 0, responses: 0 }, latest: [] }, 'the other account sees none of it');
  const own = (await app.inject({ method: 'GET', url: '/dashboard/api/overview', headers: { cookie: (await signedIn(app, services, biz.accountId)).cookie } })).json();
  t.match(own, { totals: { forms: 1, responses: 1 }, latest: [{ kind: 'form', parent_id: form, parent_title: 'Survey' }] });
  t.equal(own.per_day.length, 90);
  t.match(own.per_day.at(-1), { day: '2026-11-01', count: 1 }, 'today last');
});

t.test('responses are read in keyset pages, each strictly after the one before', async (t) => {
  const clock = manualClock('2026-11-01T00:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const { form, ids } = await formWithResponses(t, app, biz, 11, clock);
  const pages: Doc[][] = [];
  for await (const page of responsePages(services.readModels, form, {}, 4)) pages.push(page);
  t.strictSame(pages.map((page) => page.length), [4, 4, 3]);
  t.strictSame(pages.flat().map((doc) => doc.id), ids);
});

t.test('a download that fails midway is cut off, never ended as if complete', async (t) => {
  const clock = manualClock('2026-11-01T00:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const { form } = await formWithResponses(t, app, biz, 1, clock);
  const { cookie } = await signedIn(app, services, biz.accountId);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  const download = () =>
    new Promise<{ status: number; complete: boolean; body: string }>((resolve) => {
      get({ port, host: '127.0.0.1', path: `/dashboard/api/forms/${form}/responses.csv`, headers: { cookie } }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('error', () => {});
        res.on('close', () => resolve({ status: res.statusCode!, complete: res.complete, body }));
      });
    });
  t.match(await download(), { status: 200, complete: true }, 'whole: the transfer completes');

  // A full first page, then the read model fails.
  const find = services.readModels.find.bind(services.readModels);
  let calls = 0;
  services.readModels.find = async (...args) => {
    calls++;
    if (calls === 1) return Array.from({ length: 500 }, (_, i) => ({ id: `rsp_${i}`, submitted_at: '2026-11-01T00:00:00.000Z', answers: {}, metadata: {} }));
    if (calls === 2) throw new Error('the read model is gone');
    return find(...args);
  };
  const cut = await download();
  t.equal(cut.status, 200, 'the status went out with the first rows');
  t.equal(cut.complete, false, 'the client sees an incomplete transfer');
  t.equal(parseCsv(cut.body.slice(0, cut.body.lastIndexOf('\r\n') + 2)).length, 501, 'what arrived is the header and the first page');
});
