import t from 'tap';
import { ANALYTICS_COUNTS, ANALYTICS_RESPONSES } from '../../projections/analytics.js';
import { accountAnalytics, median, ranges, type ObjectAnalytics } from '../../src/dashboard/analytics.js';
import { npsScore } from '../../src/dashboard/summaries.js';
import type { App } from '../../src/app.js';
import { manualClock, owner, testApp, tokenFor } from '../support/app.js';
import { signIn } from './support.js';

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
];
const DEVICE: Record<string, string> = { [AGENTS[0]!]: 'Desktop', [AGENTS[1]!]: 'Mobile' };
const COUNTRIES = ['DE', 'FR'];
const QUESTIONS = [
  { id: 'nps', type: 'nps', title: 'How likely…' },
  { id: 'stars', type: 'star_rating', title: 'Stars', starRatingSettings: { maxStars: 5 } },
];

interface Visit {
  day: string;
  device: string;
  country: string;
  started: boolean;
  response?: { id: string; ms: number; nps?: number; stars?: number };
}

async function analyticsOf(app: App, cookie: string, form: string, query = ''): Promise<ObjectAnalytics> {
  const reply = await app.inject({ method: 'GET', url: `/dashboard/api/forms/${form}/analytics${query}`, headers: { cookie } });
  if (reply.statusCode !== 200) throw new Error(`no analytics: ${reply.body}`);
  return reply.json();
}

const rateOf = (part: number, whole: number) => (whole === 0 ? null : Math.round((part / whole) * 10_000) / 10_000);

/** The figures recomputed from the visits the test made. */
function recompute(visits: Visit[], days: string[]) {
  const funnelOf = (list: Visit[]) => {
    const responses = list.filter((v) => v.response).length;
    const starts = list.filter((v) => v.started).length;
    return { displays: list.length, starts, responses, start_rate: rateOf(starts, list.length), completion_rate: rateOf(responses, list.length) };
  };
  const times = (list: Visit[]) => median(list.flatMap((v) => (v.response ? [v.response.ms] : [])));
  const split = (key: 'device' | 'country') =>
    [...new Set(visits.map((v) => v[key]))]
      .map((value) => ({ value, ...funnelOf(visits.filter((v) => v[key] === value)) }))
      .sort((a, b) => b.responses - a.responses || b.displays - a.displays || a.value.localeCompare(b.value));
  return {
    funnel: funnelOf(visits),
    median_completion_ms: times(visits),
    per_day: days.map((day) => ({ day, ...funnelOf(visits.filter((v) => v.day === day)), median_completion_ms: times(visits.filter((v) => v.day === day)) })),
    by: { device: split('device'), country: split('country') },
  };
}

t.test('the funnel, splits and trends equal a recomputation, after an erasure and after a rebuild', async (t) => {
  const rnd = random(7);
  const clock = manualClock('2026-09-01T08:00:10.000Z');
  let country = 'DE';
  const { app, services } = await testApp(t, { clock, geo: async () => ({ country, region: null, city: null, timezone: null }) });
  const biz = await owner(services);
  const created = await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Survey', questions: QUESTIONS } });
  const form = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: biz.headers, payload: { published: true } });

  const visits: Visit[] = [];
  for (let i = 0; i < 30; i++) {
    clock.advance(rnd.int(30) * 3_600_000);
    const agent = rnd.pick(AGENTS);
    country = rnd.pick(COUNTRIES);
    const token = await tokenFor(app, 'forms', form);
    const signal = (type: string) =>
      app.inject({ method: 'POST', url: `/api/forms/${form}/events`, remoteAddress: `198.51.100.${i + 1}`, headers: { 'user-agent': agent }, payload: { _token: token, type, session: `visit-${i}-xyz` } });
    const visit: Visit = { day: clock().toISOString().slice(0, 10), device: DEVICE[agent]!, country, started: false };
    t.equal((await signal('display')).statusCode, 204);
    if (rnd.next() < 0.7) {
      visit.started = true;
      await signal('start');
      if (rnd.next() < 0.7) {
        const ms = 1000 * (1 + rnd.int(120));
        clock.advance(ms);
        const answers: Record<string, number> = {};
        if (rnd.next() < 0.9) answers.nps = rnd.int(11);
        if (rnd.next() < 0.8) answers.stars = 1 + rnd.int(5);
        const reply = await app.inject({ method: 'POST', url: `/api/forms/${form}/submit`, remoteAddress: `198.51.100.${i + 1}`, headers: { 'user-agent': agent }, payload: { answers, _token: token } });
        t.equal(reply.statusCode, 200, reply.body);
        visit.day = clock().toISOString().slice(0, 10);
        visit.response = { id: reply.json().id, ms, ...answers };
      }
    }
    visits.push(visit);
    // Each visit's counts written in its own minute: the display's day is the response's.
    clock.advance(60_000);
    await app.signals.flush();
    await services.reach.projections(await services.events.headPosition(), 5000);
  }
  const responded = visits.filter((v) => v.response);
  const erased = responded.filter(() => rnd.next() < 0.3);
  t.ok(erased.length > 0, 'some responses erased');
  const erasure = await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: erased.map((v) => v.response!.id), formId: form } });
  t.match(erasure.json(), { success: true, deleted: erased.length });
  // An erased response no longer counts; its display and start still do (they were counts, never its own).
  for (const visit of erased) delete visit.response;

  const { cookie } = await signIn(app, services, biz.accountId);
  const from = visits[0]!.day;
  const to = clock().toISOString().slice(0, 10);
  const live = await analyticsOf(app, cookie, form, `?from=${from}&to=${to}`);
  const expected = recompute(visits, live.per_day.map((d) => d.day));
  t.strictSame(live.funnel, expected.funnel, 'the funnel');
  t.equal(live.median_completion_ms, expected.median_completion_ms, 'the median completion time');
  t.strictSame(live.per_day, expected.per_day, 'per day');
  t.strictSame(live.by.device, expected.by.device, 'by device');
  t.strictSame(live.by.country, expected.by.country, 'by country');
  t.strictSame(live.previous, { displays: 0, starts: 0, responses: 0, start_rate: null, completion_rate: null }, 'nothing before');

  const answered = visits.filter((v) => v.response);
  const nps = live.trends.find((trend) => trend.question_id === 'nps')!;
  for (const week of nps.weeks) {
    const inWeek = answered.filter((v) => v.response!.nps !== undefined && v.day >= week.week && v.day < new Date(Date.parse(week.week) + 7 * 86_400_000).toISOString().slice(0, 10));
    const scores = inWeek.map((v) => v.response!.nps!);
    t.strictSame(week, { week: week.week, answered: scores.length, value: npsScore(scores.filter((s) => s >= 9).length, scores.filter((s) => s <= 6).length, scores.length) }, `NPS of the week of ${week.week}`);
  }
  t.equal(nps.weeks.reduce((s, w) => s + w.answered, 0), answered.filter((v) => v.response!.nps !== undefined).length, 'every NPS answer in a week');
  t.match(live.trends.find((trend) => trend.question_id === 'stars'), { type: 'rating' });

  const account = await accountAnalytics(services.readModels, biz.accountId, { from, to }, clock());
  t.strictSame(account.funnel, expected.funnel, 'one object: the account is the object');
  t.match(account.best, [{ id: form, title: 'Survey' }]);

  const before = {
    counts: await services.readModels.find(ANALYTICS_COUNTS, {}, { sort: [['id', 1]] }),
    records: await services.readModels.find(ANALYTICS_RESPONSES, {}, { sort: [['id', 1]] }),
  };
  await services.projections.rebuild();
  t.strictSame(await analyticsOf(app, cookie, form, `?from=${from}&to=${to}`), live, 'the same figures after a rebuild');
  t.strictSame(await services.readModels.find(ANALYTICS_COUNTS, {}, { sort: [['id', 1]] }), before.counts, 'the same counters after a rebuild');
  t.strictSame(await services.readModels.find(ANALYTICS_RESPONSES, {}, { sort: [['id', 1]] }), before.records, 'the same records after a rebuild');
});

t.test('ranges: the last 30 days by default, the previous period as long, bad ranges refused', async (t) => {
  const now = new Date('2026-03-10T12:00:00Z');
  t.strictSame(ranges({}, now), { range: { from: '2026-02-09', to: '2026-03-10' }, previous_range: { from: '2026-01-10', to: '2026-02-08' }, days: 30 });
  t.strictSame(ranges({ from: '2026-03-01', to: '2026-03-07' }, now).previous_range, { from: '2026-02-22', to: '2026-02-28' });
  t.throws(() => ranges({ from: '2026-03-08', to: '2026-03-07' }, now), { code: 'validation_error' });
  t.throws(() => ranges({ from: '2026-02-30' }, now), { code: 'validation_error' });
  t.throws(() => ranges({ from: '2024-01-01', to: '2026-01-01' }, now), { code: 'validation_error', details: [{ path: 'querystring.from' }] });
  t.throws(() => ranges({ to: '2026-02-30' }, now), { code: 'validation_error', details: [{ path: 'querystring.to' }] }, 'the field named');
  for (const [from, to] of [[undefined, '0000-01-05'], ['1969-12-31', '1970-01-05']] as const) {
    t.throws(() => ranges({ ...(from ? { from } : {}), to }, now), { code: 'validation_error' }, `${from ?? 'the default'} to ${to}: outside 1970 to 9999`);
  }
  const last = ranges({ from: '9999-01-01', to: '9999-12-31' }, now);
  t.strictSame(last.range, { from: '9999-01-01', to: '9999-12-31' }, 'the last year there is');
  t.equal(median([]), null);
  t.equal(median([3, 1, 2]), 2);
  t.equal(median([4, 1, 2, 3]), 3, 'the mean of the middle two, rounded');
});

t.test('the overview ranks objects by completion rate; a poll’s votes are its responses; another account’s object is a 404', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const poll = (await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Tea or coffee?', options: [{ text: 'Tea' }, { text: 'Coffee' }] } })).json();
  await app.inject({ method: 'PUT', url: `/api/polls/${poll.id}`, headers: biz.headers, payload: { published: true } });
  const token = await tokenFor(app, 'polls', poll.id);
  for (const i of [1, 2]) t.equal((await app.inject({ method: "POST", url: `/api/polls/${poll.id}/events`, headers: { "user-agent": AGENTS[0] }, payload: { _token: token, type: "display", session: `session-${i}` } })).body, "");
  await app.inject({ method: 'POST', url: `/api/polls/${poll.id}/vote`, payload: { option_ids: [poll.options[0].id], _token: token } });
  await app.signals.stop();
  await services.reach.projections(await services.events.headPosition(), 5000);
  const { cookie } = await signIn(app, services, biz.accountId);
  const overview = (await app.inject({ method: 'GET', url: '/dashboard/api/analytics', headers: { cookie } })).json();
  t.match(overview, { funnel: { displays: 2, responses: 1, completion_rate: 0.5 }, best: [{ id: poll.id, kind: 'poll', title: 'Tea or coffee?' }], worst: [{ id: poll.id }] });
  t.match((await app.inject({ method: 'GET', url: `/dashboard/api/polls/${poll.id}/analytics`, headers: { cookie } })).json(), { funnel: { displays: 2, responses: 1 }, trends: [] });
  const other = await owner(services);
  const theirs = await signIn(app, services, other.accountId);
  t.match((await app.inject({ method: 'GET', url: `/dashboard/api/polls/${poll.id}/analytics`, headers: { cookie: theirs.cookie } })).json(), { statusCode: 404, code: 'poll_not_found' });
  t.match((await app.inject({ method: 'GET', url: `/dashboard/api/analytics?from=2026-13-01`, headers: { cookie } })).json(), { statusCode: 400, code: 'validation_error' });
  // Weeks past year 9999 are no days of four digits: counting them must end (it once never did, holding the server).
  const lastYear = await app.inject({ method: 'GET', url: `/dashboard/api/polls/${poll.id}/analytics?from=9999-01-01&to=9999-12-31`, headers: { cookie } });
  t.equal(lastYear.statusCode, 200);
  t.equal(lastYear.json().per_day.length, 365);
  t.equal((await app.inject({ method: 'GET', url: `/dashboard/api/polls/${poll.id}/analytics?from=9999-12-01&to=9999-12-31`, headers: { cookie } })).statusCode, 200, 'its last month');
  t.match((await app.inject({ method: 'GET', url: `/dashboard/api/polls/${poll.id}/analytics?from=9999-12-01&to=10000-01-01`, headers: { cookie } })).json(), { statusCode: 400, code: 'validation_error' });
});

t.test('drop-off per page equals a recomputation from the visits, after an erasure and after a rebuild', async (t) => {
  const rnd = random(11);
  const clock = manualClock('2026-10-05T08:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const created = await app.inject({
    method: 'POST',
    url: '/api/forms',
    headers: biz.headers,
    payload: {
      title: 'Join the beta',
      questions: [
        { id: 'name', type: 'short_text', title: 'Your name', required: true },
        { id: 'role', type: 'single_choice', title: 'Role', required: true, choices: [{ id: 'dev', label: 'Developer' }, { id: 'des', label: 'Designer' }] },
        { id: 'tool', type: 'short_text', title: 'Design tool', required: true },
        { id: 'fan', type: 'yes_no', title: 'Would you recommend us?', required: true },
      ],
      pages: [
        { id: 'about', title: 'About you', question_ids: ['name', 'role'] },
        { id: 'design', question_ids: ['tool'] },
        { id: 'verdict', title: 'Your verdict', question_ids: ['fan'] },
      ],
      logic: [{ page: 'about', if: { question: 'role', op: 'equals', value: 'dev' }, go_to: 'verdict' }],
      settings: { keep_partial: true },
    },
  });
  const form = created.json().id as string;
  await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: biz.headers, payload: { published: true } });
  const post = async (path: string, payload: object) => {
    const reply = await app.inject({ method: 'POST', url: `/api/forms/${form}/${path}`, payload: { _token: await tokenFor(app, 'forms', form), ...payload } });
    t.equal(reply.statusCode, 200, reply.body);
    return reply.json();
  };

  /** Each visit: where it ended (a page, or sent) and on which day; its response's id. */
  const visits: Array<{ name: string; ended: string; day: string; id?: string }> = [];
  for (let i = 0; i < 24; i++) {
    clock.advance(rnd.int(20) * 3_600_000);
    const name = `visitor-${i}`;
    const session = `session-${String(i).padStart(3, '0')}-abcdefgh`;
    const role = rnd.pick(['dev', 'des'] as const);
    const answers: Record<string, unknown> = { name, role };
    const visit = { name, ended: 'none', day: '' };
    const path = role === 'dev' ? ['about'] : ['about', 'design'];
    for (const page of path) {
      if (rnd.next() < 0.25) break;
      if (page === 'design') answers.tool = 'Figma';
      await post('progress', { session, page, answers });
      // A later page comes hours later at times: the visit counts on the day of its latest page.
      clock.advance(rnd.int(3) * 6 * 3_600_000);
      Object.assign(visit, { ended: page, day: clock().toISOString().slice(0, 10) });
    }
    if (rnd.next() < 0.5) {
      if (role === 'des') answers.tool = 'Figma';
      const sent = await post('submit', { session, answers: { ...answers, fan: true } });
      Object.assign(visit, { ended: 'sent', day: clock().toISOString().slice(0, 10), id: sent.id });
    }
    if (visit.ended !== 'none') visits.push(visit);
  }
  const partials = (await app.inject({ method: 'GET', url: `/api/forms/${form}/responses?status=partial&limit=100`, headers: biz.headers })).json().responses as Array<{ id: string; answers: { name: string } }>;
  for (const partial of partials) visits.find((v) => v.name === partial.answers.name)!.id = partial.id;
  t.ok(visits.every((v) => v.id), 'every visit has its response');
  t.ok(visits.some((v) => v.ended === 'about') && visits.some((v) => v.ended === 'design') && visits.some((v) => v.ended === 'sent'), 'visits end on each page and sent');

  const erased = [visits.find((v) => v.ended === 'about')!, visits.find((v) => v.ended === 'sent')!, ...visits.filter(() => rnd.next() < 0.2)];
  const ids = [...new Set(erased.map((v) => v.id!))];
  t.match((await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids, formId: form } })).json(), { success: true, deleted: ids.length });
  const kept = visits.filter((v) => !ids.includes(v.id!));
  await services.reach.projections(await services.events.headPosition(), 5000);

  const { cookie } = await signIn(app, services, biz.accountId);
  const expected = (from: string, to: string) => {
    const inRange = kept.filter((v) => v.day >= from && v.day <= to);
    const total = inRange.length;
    const count = (ended: string) => inRange.filter((v) => v.ended === ended).length;
    return {
      keeps_partial: true,
      pages: [
        { page_id: 'about', title: 'About you', removed: false, stopped: count('about'), share: rateOf(count('about'), total) },
        { page_id: 'design', title: null, removed: false, stopped: count('design'), share: rateOf(count('design'), total) },
        { page_id: 'verdict', title: 'Your verdict', removed: false, stopped: 0, share: rateOf(0, total) },
      ],
      sent: count('sent'),
      sent_share: rateOf(count('sent'), total),
    };
  };
  const first = '2026-10-05';
  const last = clock().toISOString().slice(0, 10);
  const middle = kept[Math.floor(kept.length / 2)]!.day;
  const all = await analyticsOf(app, cookie, form, `?from=${first}&to=${last}`);
  t.strictSame(all.drop_off, expected(first, last), 'over every day');
  t.strictSame((await analyticsOf(app, cookie, form, `?from=${middle}&to=${last}`)).drop_off, expected(middle, last), 'from the middle on');
  t.equal(all.funnel.responses, all.drop_off!.sent, 'the responses sent are the funnel’s');

  const before = await services.readModels.find(ANALYTICS_COUNTS, {}, { sort: [['id', 1]] });
  await services.projections.rebuild();
  t.strictSame(await services.readModels.find(ANALYTICS_COUNTS, {}, { sort: [['id', 1]] }), before, 'the same counters after a rebuild');
  t.strictSame(await analyticsOf(app, cookie, form, `?from=${first}&to=${last}`), all, 'the same figures after a rebuild');

  // A page the form no longer has is still shown, as removed; a widget has no drop-off.
  const pages = [{ id: 'about', title: 'About you', question_ids: ['name', 'role', 'tool', 'fan'] }];
  t.equal((await app.inject({ method: 'PUT', url: `/api/forms/${form}`, headers: biz.headers, payload: { pages, logic: [] } })).statusCode, 200);
  const after = (await analyticsOf(app, cookie, form, `?from=${first}&to=${last}`)).drop_off!;
  t.strictSame(after.pages.map((p) => [p.page_id, p.removed]), expected(first, last).pages.filter((p) => p.page_id === 'about' || p.stopped > 0).map((p) => [p.page_id, p.page_id !== 'about']));
  const widget = (await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'custom', title: 'Feedback', questions: [{ id: 'q', type: 'short_text', title: 'Say' }] } })).json();
  t.match((await app.inject({ method: 'GET', url: `/dashboard/api/widgets/${widget.id}/analytics`, headers: { cookie } })).json(), { funnel: { displays: 0 }, drop_off: null }, 'a widget has no pages');
});
