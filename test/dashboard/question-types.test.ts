import t from 'tap';
import { RESPONSE_SUMMARIES } from '../../projections/response-summaries.js';
import type { ObjectSummary } from '../../src/dashboard/summaries.js';
import type { App } from '../../src/app.js';
import { manualClock, owner, testApp, tokenFor, type Owner } from '../support/app.js';
import { EVERY_TYPE, SENT, STORED } from '../support/every-type.js';
import { signIn } from './support.js';

/** RFC 4180, strictly: quoted fields with doubled quotes, CRLF after every record. */
function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let field = '';
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('an unclosed quote');
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
    } else if (text[i] === '"' || text[i] === '\n' || text[i] === '\r') throw new Error(`a bare ${JSON.stringify(text[i])} outside quotes`);
    else field += text[i++];
  }
  if (field !== '' || record.length > 0) throw new Error('the last record does not end with CRLF');
  return records;
}

function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const int = (max: number) => Math.floor(next() * max);
  const shuffle = <T>(items: readonly T[]) => {
    const out = [...items];
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(i + 1);
      [out[i], out[j]] = [out[j]!, out[i]!];
    }
    return out;
  };
  return { next, int, pick: <T>(items: readonly T[]) => items[int(items.length)]!, shuffle };
}

type Answers = Record<string, unknown>;
interface Listed {
  id: string;
  answers: Answers;
  hidden?: Record<string, string>;
}

async function allResponses(app: App, who: Owner, form: string): Promise<Listed[]> {
  const out: Listed[] = [];
  for (let page = 1; ; page++) {
    const reply = (await app.inject({ method: 'GET', url: `/api/forms/${form}/responses?page=${page}&limit=100`, headers: who.headers })).json();
    out.push(...reply.responses);
    if (reply.responses.length < 100) return out;
  }
}

const halfUp = (sum: number, n: number) => (n === 0 ? null : Math.round((sum / n) * 100 + 1e-9) / 100);
const question = <T extends (typeof EVERY_TYPE)[number]['type']>(type: T) => EVERY_TYPE.find((q) => q.type === type) as Extract<(typeof EVERY_TYPE)[number], { type: T }>;

/** Each new type's figures, worked out from the listed responses alone. */
function recompute(responses: Listed[]) {
  const answers = (id: string) => responses.map((r) => r.answers[id]).filter((a) => a !== undefined);
  const choices = (id: string, values: Array<string | boolean>) => values.map((value) => ({ value, count: answers(id).filter((a) => a === value || (Array.isArray(a) && a.includes(value))).length }));
  const guests = answers('guests') as number[];
  const distinct = [...new Set(guests)].sort((a, b) => a - b).map((value) => ({ value, count: guests.filter((g) => g === value).length }));
  const calm = answers('calm') as number[];
  const order = answers('order') as string[][];
  const ranking = question('ranking').choices.map((c) => {
    const places = order.map((o) => o.indexOf(c.id) + 1);
    return { value: c.id, average_rank: halfUp(places.reduce((a, b) => a + b, 0), places.length), count: places.length };
  });
  ranking.sort((a, b) => (a.average_rank ?? Infinity) - (b.average_rank ?? Infinity));
  const grids = answers('grid') as Array<Record<string, string>>;
  const days = [...new Set(answers('arrival') as string[])].sort().map((day) => ({ day, count: answers('arrival').filter((a) => a === day).length }));
  return {
    guests: { answered: guests.length, number: { average: halfUp(guests.reduce((a, b) => a + b, 0), guests.length), distribution: distinct } },
    arrival: { answered: days.reduce((s, d) => s + d.count, 0), dates: days },
    extras: { answered: answers('extras').length, choices: choices('extras', ['breakfast', 'parking', 'late']) },
    calm: { answered: calm.length, rating: { average: halfUp(calm.reduce((a, b) => a + b, 0), calm.length), distribution: [1, 2, 3, 4, 5, 6, 7].map((value) => ({ value, count: calm.filter((c) => c === value).length })) } },
    again: { answered: answers('again').length, choices: choices('again', [true, false]) },
    order: { answered: order.length, ranking },
    grid: {
      answered: grids.length,
      matrix: question('matrix').rows.map((row) => {
        const columns = question('matrix').columns.map((c) => ({ value: c.id, count: grids.filter((g) => g[row.id] === c.id).length }));
        return { row: row.id, answered: columns.reduce((s, c) => s + c.count, 0), columns };
      }),
    },
  };
}

function randomAnswers(rnd: ReturnType<typeof random>): Answers {
  const answers: Answers = { name: 'Ann', consent: true };
  if (rnd.next() < 0.8) answers.guests = 1 + rnd.int(12);
  if (rnd.next() < 0.8) answers.arrival = rnd.pick(['2026-12-24', '2026-12-25', '2027-01-01', '2026-02-28']);
  if (rnd.next() < 0.8) answers.extras = rnd.shuffle(['breakfast', 'parking', 'late']).slice(0, 1 + rnd.int(2));
  if (rnd.next() < 0.8) answers.calm = 1 + rnd.int(7);
  if (rnd.next() < 0.8) answers.again = rnd.next() < 0.5;
  if (rnd.next() < 0.8) answers.order = rnd.shuffle(['price', 'location', 'quiet']);
  if (rnd.next() < 0.8) {
    const grid: Record<string, string> = {};
    for (const row of ['staff', 'food']) if (rnd.next() < 0.7) grid[row] = rnd.pick(['poor', 'fine', 'great']);
    if (Object.keys(grid).length > 0) answers.grid = grid;
  }
  return answers;
}

async function publishedForm(app: App, who: Owner): Promise<string> {
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: who.headers, payload: { title: 'Your stay', questions: EVERY_TYPE, hidden_fields: ['utm_source', 'user_id'] } });
  if (created.statusCode !== 201) throw new Error(created.body);
  const form = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: who.headers, payload: { published: true } });
  return form;
}

const submit = async (app: App, form: string, body: object, i: number) =>
  app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, remoteAddress: `198.51.100.${i + 1}`, headers: { 'user-agent': 'Mozilla/5.0 Firefox/120.0' }, payload: { ...body, _token: await tokenFor(app, 'forms', form) } });

for (const seed of [3, 4]) {
  t.test(`every type's summary equals a recomputation from the responses, after erasures and a rebuild (seed ${seed})`, async (t) => {
    const rnd = random(seed);
    const clock = manualClock('2026-09-01T08:00:00.000Z');
    const { app, services } = await testApp(t, { clock });
    const biz = await owner(services);
    const form = await publishedForm(app, biz);
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) {
      clock.advance(rnd.int(20) * 3_600_000);
      const reply = await submit(app, form, { answers: randomAnswers(rnd) }, i);
      t.equal(reply.statusCode, 200, reply.body);
      ids.push(reply.json().id);
    }
    const erased = ids.filter(() => rnd.next() < 0.3);
    t.match((await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: erased, formId: form } })).json(), { deleted: erased.length });

    const expected = recompute(await allResponses(app, biz, form));
    const { cookie } = await signIn(app, services, biz.accountId);
    const summaryOf = async () => (await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/summary`, headers: { cookie } })).json() as ObjectSummary;
    const live = await summaryOf();
    const byId = Object.fromEntries(live.questions.map((q) => [q.question_id, q]));
    for (const [id, figures] of Object.entries(expected)) t.match(byId[id], figures, `${id}: the recomputation`);
    t.strictSame(Object.keys(byId.intro!).sort(), ['question_id', 'title', 'type'], 'a statement has no figures');

    const before = await services.readModels.find(RESPONSE_SUMMARIES, {}, { sort: [['id', 1]] });
    await services.projections.rebuild();
    t.strictSame(await summaryOf(), live, 'the same summary after a rebuild');
    t.strictSame(await services.readModels.find(RESPONSE_SUMMARIES, {}, { sort: [['id', 1]] }), before, 'the same counters after a rebuild');
  });
}

t.test('the CSV of a form with every type parses by RFC 4180 with the documented columns; NDJSON holds every answer and hidden value', async (t) => {
  const clock = manualClock('2026-09-01T08:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const form = await publishedForm(app, biz);
  t.equal((await submit(app, form, { answers: SENT, hidden: { utm_source: 'news, "letter"', user_id: 'u-42' } }, 1)).statusCode, 200);
  clock.advance(1000);
  t.equal((await submit(app, form, { answers: { name: 'Bo', consent: true } }, 2)).statusCode, 200);
  const { cookie } = await signIn(app, services, biz.accountId);
  const csv = await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/responses.csv`, headers: { cookie } });
  const [header, full, empty] = parseCsv(csv.body);
  const titles = EVERY_TYPE.filter((q) => q.type !== 'statement' && q.type !== 'matrix').map((q) => q.title);
  t.strictSame(header!.slice(0, 2 + titles.length + 2 + 2), [
    'id',
    'submitted_at',
    ...titles.slice(0, titles.indexOf('Rank what matters most') + 1),
    'Rate each [Staff]',
    'Rate each [Food]',
    ...titles.slice(titles.indexOf('Rank what matters most') + 1),
    'hidden.utm_source',
    'hidden.user_id',
  ]);
  t.ok(header!.includes('metadata.browser'), 'the metadata columns follow');
  const cell = (row: string[] | undefined, column: string) => row![header!.indexOf(column)];
  t.equal(cell(full, 'Extras'), 'breakfast; late', 'multiple choice joined with "; "');
  t.equal(cell(full, 'Rank what matters most'), 'quiet; location; price', 'ranking joined with "; ", first = top');
  t.equal(cell(full, 'Rate each [Staff]'), 'great');
  t.equal(cell(full, 'Rate each [Food]'), 'fine');
  t.equal(cell(full, 'Tell us about it'), SENT.story, 'quotes, commas and line breaks survive');
  t.equal(cell(full, 'Phone'), "'+442079460958", 'E.164, kept from being read as a formula');
  t.equal(cell(full, 'Guests'), '2');
  t.equal(cell(full, 'Arrival'), '2026-12-24');
  t.equal(cell(full, 'Would you stay again?'), 'true');
  t.equal(cell(full, 'hidden.utm_source'), 'news, "letter"');
  t.equal(cell(full, 'hidden.user_id'), 'u-42');
  t.equal(cell(empty, 'Rate each [Staff]'), '', 'no answer, an empty cell');
  t.equal(cell(empty, 'hidden.user_id'), '');
  t.ok([full, empty].every((row) => row!.length === header!.length), 'every row has every column');

  const ndjson = await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/responses.ndjson`, headers: { cookie } });
  const [first] = ndjson.body.trim().split('\n').map((line) => JSON.parse(line));
  t.strictSame(first.answers, STORED);
  t.strictSame(first.hidden, { utm_source: 'news, "letter"', user_id: 'u-42' });
});
