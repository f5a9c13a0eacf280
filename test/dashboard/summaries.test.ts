import t from 'tap';
import { RESPONSE_SUMMARIES } from '../../projections/response-summaries.js';
import { average, npsScore, objectSummary, overview, window, type ObjectSummary } from '../../src/dashboard/summaries.js';
import type { App } from '../../src/app.js';
import { manualClock, owner, testApp, tokenFor, type Owner } from '../support/app.js';
import { signIn } from './support.js';

/** A small seeded generator, so a failure names the seed that shows it. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  return { next, int: (max: number) => Math.floor(next() * max), pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]! };
}

const AGENTS = [
  'Mozilla/5.0 (X11; Linux x86_64; rv:120.0) Gecko/20100101 Firefox/120.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (iPad; CPU OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36',
  undefined,
];
const COUNTRIES = ['DE', 'FR', 'PL', null];

/** Answers in every language are counted by id, together: the figures below are recomputed by id whatever the language. */
const TRANSLATIONS = {
  de: { title: 'Umfrage', questions: { plan: { title: 'Tarif', choices: { a: 'A (de)', b: 'B (de)' } }, ok: { text: 'Ich stimme zu' } } },
  fr: { title: 'Enquête', questions: { sev: { title: 'Gravité' } } },
};
const LANGUAGE_SENT = ['en', 'de', 'fr', undefined];

const QUESTIONS = [
  { id: 'nps', type: 'nps', title: 'How likely…' },
  { id: 'stars', type: 'star_rating', title: 'Stars', starRatingSettings: { maxStars: 4 } },
  { id: 'plan', type: 'single_choice', title: 'Plan', choices: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }, { id: 'c', label: 'C' }] },
  { id: 'sev', type: 'severity', title: 'Severity' },
  { id: 'ok', type: 'consent', title: 'Consent', text: 'I agree' },
  { id: 'why', type: 'short_text', title: 'Why' },
];

interface Stored {
  id: string;
  answers: Record<string, string | number | boolean>;
  submitted_at: string;
  metadata: Record<string, unknown>;
  language?: string;
}

/** Every response of the form as the API lists them. */
async function allResponses(app: App, who: Owner, form: string): Promise<Stored[]> {
  const out: Stored[] = [];
  for (let page = 1; ; page++) {
    const reply = (await app.inject({ method: 'GET', url: `/api/forms/${form}/responses?page=${page}&limit=100`, headers: who.headers })).json();
    out.push(...reply.responses);
    if (reply.responses.length < 100) return out;
  }
}

/** sum/n to 2 decimals, half up, in exact integers: floor((200·sum + n) / 2n) hundredths. */
const halfUpHundredths = (sum: number, n: number) => Number((200n * BigInt(sum) + BigInt(n)) / (2n * BigInt(n))) / 100;

/** The summary as a plain recomputation from the responses themselves. */
function recompute(responses: Stored[], now: Date): Omit<ObjectSummary, 'questions'> & { questions: unknown[] } {
  const times = responses.map((r) => r.submitted_at).sort();
  const count = (match: (r: Stored) => boolean) => responses.filter(match).length;
  const answers = (q: string) => responses.map((r) => r.answers[q]).filter((a) => a !== undefined);
  const nps = answers('nps') as number[];
  const stars = answers('stars') as number[];
  const breakdown = (field: string) => {
    const counts = new Map<string | null, number>();
    for (const r of responses) {
      if (!Object.hasOwn(r.metadata, field)) continue;
      const value = (r.metadata[field] ?? null) as string | null;
      counts.set(value, (counts.get(value) ?? 0) + 1);
    }
    return [...counts].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || String(a.value).localeCompare(String(b.value)));
  };
  const promoters = nps.filter((v) => v >= 9).length;
  const detractors = nps.filter((v) => v <= 6).length;
  const languages = new Map<string, number>();
  for (const r of responses) languages.set(r.language ?? 'en', (languages.get(r.language ?? 'en') ?? 0) + 1);
  const choice = (q: string, values: Array<string | boolean>) => values.map((value) => ({ value, count: answers(q).filter((a) => a === value).length }));
  return {
    total: responses.length,
    first_at: times[0] ?? null,
    last_at: times.at(-1) ?? null,
    per_day: window(now).map((day) => ({ day, count: count((r) => r.submitted_at.startsWith(day)) })),
    questions: [
      { question_id: 'nps', answered: nps.length, nps: { score: nps.length ? Math.round(Math.abs((100 * (promoters - detractors)) / nps.length)) * Math.sign(promoters - detractors) : null, promoters, passives: nps.length - promoters - detractors, detractors } },
      {
        question_id: 'stars',
        answered: stars.length,
        rating: { average: stars.length ? halfUpHundredths(stars.reduce((a, b) => a + b, 0), stars.length) : null, distribution: [1, 2, 3, 4].map((value) => ({ value, count: stars.filter((s) => s === value).length })) },
      },
      { question_id: 'plan', choices: choice('plan', ['a', 'b', 'c']) },
      { question_id: 'sev', choices: choice('sev', ['low', 'medium', 'high', 'critical']) },
      { question_id: 'ok', choices: choice('ok', [true, false]) },
      { question_id: 'why' },
    ],
    breakdowns: {
      device: breakdown('device'),
      browser: breakdown('browser'),
      country: breakdown('country'),
      language: [...languages].map(([value, count]) => ({ value, count })).sort((a, b) => b.count - a.count || a.value.localeCompare(b.value)),
    },
  };
}

async function summaryOf(app: App, cookie: string, form: string): Promise<ObjectSummary> {
  const reply = await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/summary`, headers: { cookie } });
  if (reply.statusCode !== 200) throw new Error(`no summary: ${reply.body}`);
  return reply.json();
}

for (const seed of [1, 2]) {
  t.test(`summary figures equal a recomputation from the responses, after erasures and after a rebuild (seed ${seed})`, async (t) => {
    const rnd = random(seed);
    const clock = manualClock('2026-09-01T08:00:00.000Z');
    const { app, services } = await testApp(t, { clock, geo: async () => ({ country: rnd.pick(COUNTRIES), region: null, city: null, timezone: null }) });
    const biz = await owner(services);
    const created = await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Survey', questions: QUESTIONS, translations: TRANSLATIONS } });
    t.equal(created.statusCode, 201, created.body);
    const form = created.json().id as string;
    await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: biz.headers, payload: { published: true } });

    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      clock.advance(rnd.int(40) * 3_600_000);
      const answers: Record<string, unknown> = {};
      if (rnd.next() < 0.9) answers.nps = rnd.int(11);
      if (rnd.next() < 0.8) answers.stars = 1 + rnd.int(4);
      if (rnd.next() < 0.8) answers.plan = rnd.pick(['a', 'b', 'c']);
      if (rnd.next() < 0.7) answers.sev = rnd.pick(['low', 'medium', 'high', 'critical']);
      if (rnd.next() < 0.7) answers.ok = rnd.next() < 0.5;
      // Text answers, one a single word that looks like a choice id: never shown as a figure.
      if (rnd.next() < 0.5) answers.why = rnd.pick(['b', 'because it is good', '=cmd()']);
      const agent = rnd.pick(AGENTS);
      const language = rnd.pick(LANGUAGE_SENT);
      const reply = await app.inject({
        method: 'POST',
        url: `/api/forms/${form}/submit`,
        remoteAddress: `198.51.100.${i + 1}`,
        headers: agent ? { 'user-agent': agent } : {},
        payload: { answers, _token: await tokenFor(app, 'forms', form), ...(language ? { language } : {}) },
      });
      t.equal(reply.statusCode, 200, reply.body);
      ids.push(reply.json().id);
    }
    const erased = ids.filter(() => rnd.next() < 0.3);
    const erasure = await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: erased, formId: form } });
    t.match(erasure.json(), { success: true, deleted: erased.length });

    const expected = recompute(await allResponses(app, biz, form), clock());
    t.equal(expected.total, ids.length - erased.length);
    const { cookie } = await signIn(app, services, biz.accountId);
    const live = await summaryOf(app, cookie, form);
    t.match(live, expected, 'the summary is the recomputation');
    t.strictSame(live.breakdowns.language, expected.breakdowns.language, 'responses per language, by the language each records');
    t.ok(live.breakdowns.language.length >= 2, 'more than one language answered');
    t.match(live.questions.find((q) => q.question_id === 'plan'), { title: 'Plan', choices: [{ value: 'a', label: 'A' }, { value: 'b', label: 'B' }, { value: 'c', label: 'C' }] }, 'one figure per choice id, under the default labels');
    t.strictSame(live.per_day.length, 90);

    const before = await services.readModels.find(RESPONSE_SUMMARIES, {}, { sort: [['id', 1]] });
    const overviewBefore = await overview(services.readModels, biz.accountId, clock());
    t.equal(overviewBefore.totals.responses, expected.total);
    t.equal(overviewBefore.totals.forms, 1);
    t.strictSame(overviewBefore.per_day, expected.per_day, 'one object: the account per day is the object’s');

    await services.projections.rebuild();
    t.strictSame(await summaryOf(app, cookie, form), live, 'the same summary after a rebuild');
    t.strictSame(await services.readModels.find(RESPONSE_SUMMARIES, {}, { sort: [['id', 1]] }), before, 'the same documents after a rebuild');
    t.strictSame(await overview(services.readModels, biz.accountId, clock()), overviewBefore, 'the same overview after a rebuild');
  });
}

t.test('a poll: votes per option, taken back when a vote is erased', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const poll = (await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Tea or coffee?', options: [{ text: 'Tea' }, { text: 'Coffee' }] } })).json();
  await app.inject({ method: 'PUT', url: `/api/polls/${poll.id}`, headers: biz.headers, payload: { published: true } });
  const vote = async (option: number, i: number) =>
    app.inject({ method: 'POST', url: `/api/polls/${poll.id}/vote`, remoteAddress: `198.51.100.${i}`, payload: { option_ids: [poll.options[option].id], _token: await tokenFor(app, 'polls', poll.id), metadata: { fingerprint: `v${i}` } } });
  for (const [i, option] of [0, 1, 1].entries()) t.equal((await vote(option, i + 1)).statusCode, 200);
  const summary = async () => objectSummary(services.readModels, 'poll', (await services.readModels.get('polls', poll.id))!, services.clock());
  t.match(await summary(), { total: 3, questions: [{ title: 'Tea or coffee?', type: 'poll', choices: [{ label: 'Tea', count: 1 }, { label: 'Coffee', count: 2 }] }] });
  const [cast] = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((e) => e.type === 'VoteCast' && (e.data as { option_ids: string[] }).option_ids[0] === poll.options[1].id);
  await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: [(cast!.data as { vote_id: string }).vote_id], pollId: poll.id } });
  t.match(await summary(), { total: 2, questions: [{ choices: [{ count: 1 }, { count: 1 }] }] });
  t.match(await overview(services.readModels, biz.accountId, services.clock()), { totals: { polls: 1, responses: 2 }, latest: [{ kind: 'poll', parent_title: 'Tea or coffee?' }, { kind: 'poll' }] });
});

t.test('NPS score: an integer, rounded half away from zero; averages to 2 decimals, half up', async (t) => {
  t.equal(npsScore(1, 0, 8), 13, '12.5 → 13');
  t.equal(npsScore(0, 1, 8), -13, '−12.5 → −13');
  t.equal(npsScore(1, 2, 3), -33);
  t.equal(npsScore(0, 0, 0), null, 'no answers: no score');
  t.equal(average(201, 200), 1.01, '1.005 → 1.01');
  t.equal(average(7, 3), 2.33);
  t.equal(average(0, 0), null);
});

t.test("a question's figures leave out answers it would not take as it is now; the responses keep them", async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const stars = (maxStars: number) => ({ id: 'r', type: 'star_rating', title: 'R', starRatingSettings: { maxStars } });
  const created = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'custom', title: 'Stars', questions: [stars(5)] } });
  const widget = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { published: true } });
  for (const [i, r] of [5, 5, 1].entries()) {
    const sent = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, headers: { 'x-forwarded-for': `10.0.0.${i + 1}` }, payload: { answers: { r }, _token: await tokenFor(app, 'widgets', widget) } });
    t.equal(sent.statusCode, 200, sent.body);
  }
  const { cookie } = await signIn(app, services, biz.accountId);
  const summary = async () => (await app.inject({ method: 'GET', url: `/dashboard/api/widgets/${widget}/summary`, headers: { cookie } })).json().questions[0];
  t.match(await summary(), { question_id: 'r', answered: 3, rating: { average: 3.67 } });
  t.equal((await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { questions: [stars(3)] } })).statusCode, 200);
  t.match(await summary(), { question_id: 'r', answered: 1, rating: { average: 1, distribution: [{ value: 1, count: 1 }, { value: 2, count: 0 }, { value: 3, count: 0 }] } }, 'the two 5s are past the scale');
  const listed = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json();
  t.same(listed.responses.map((r: { answers: { r: number } }) => r.answers.r).sort(), [1, 5, 5]);
});

t.test('a number question: the average of the largest numbers it takes is finite, never a failed summary', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const form = (await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Amounts', questions: [{ id: 'amount', type: 'number', title: 'Amount' }] } })).json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: biz.headers, payload: { published: true } });
  const { cookie } = await signIn(app, services, biz.accountId);
  const summary = async () => app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/summary`, headers: { cookie } });
  const answers = [1.7e308, 1.7e308, -1e307, 2];
  for (const [i, amount] of answers.entries()) {
    const sent = await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, headers: { 'x-forwarded-for': `10.0.1.${i + 1}` }, payload: { answers: { amount }, _token: await tokenFor(app, 'forms', form) } });
    t.equal(sent.statusCode, 200, sent.body);
    const reply = await summary();
    t.equal(reply.statusCode, 200, `after ${amount}: ${reply.statusCode === 200 ? 'summarised' : reply.body}`);
  }
  const average = (await summary()).json().questions[0].number.average as number;
  const expected = answers.reduce((m, a) => m + a / answers.length, 0);
  t.ok(Number.isFinite(average) && Math.abs(average - expected) / expected < 1e-12, `${average} is the mean (${expected})`);
});
