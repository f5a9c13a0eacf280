import t from 'tap';
import { manualClock, owner, publishedWidget, testApp, tokenFor } from '../support/app.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

t.test('tokens: issued for published widgets only, bound, signed and 1800 s long', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const id = await publishedWidget(app, biz);
  const other = await publishedWidget(app, biz);
  const reply = await app.inject({ method: 'GET', url: `/api/widgets/${id}/token` });
  t.equal(reply.statusCode, 200);
  t.strictSame(Object.keys(reply.json()).sort(), ['expiresIn', 'token']);
  t.equal(reply.json().expiresIn, 1800);
  t.match((await app.inject({ method: 'GET', url: '/api/widgets/wgt_missing/token' })).json(), D3(404, 'widget_not_found'));
  const draft = (await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'nps', title: 'Draft' } })).json().id;
  t.match((await app.inject({ method: 'GET', url: `/api/widgets/${draft}/token` })).json(), D3(403, 'widget_not_published'));

  const token = reply.json().token as string;
  const submit = (widget: string, _token?: unknown) =>
    app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 5 }, ...(_token === undefined ? {} : { _token }) } });
  t.match((await submit(id)).json(), D3(403, 'invalid_token'), 'missing');
  t.match((await submit(id, 42)).json(), D3(400, 'validation_error'), 'not a string');
  t.match((await submit(id, `${token.slice(0, -2)}xx`)).json(), D3(403, 'invalid_token'), 'forged signature');
  t.match((await submit(id, token.replace(id, other))).json(), D3(403, 'invalid_token'), 'another id in a signed token');
  t.match((await submit(other, token)).json(), D3(403, 'invalid_token'), "another widget's token");
  t.match((await submit(id, 'v1.widget.x.y.z')).json(), D3(403, 'invalid_token'), 'garbage');
  clock.advance(1800 * 1000);
  t.equal((await submit(id, token)).statusCode, 200, 'still valid at exactly 1800 s');
  clock.advance(1);
  t.match((await submit(id, token)).json(), D3(403, 'invalid_token'), 'expired 1 ms later');
  const fresh = await tokenFor(app, 'widgets', id);
  t.equal((await submit(id, fresh)).statusCode, 200, 'a new token works again');
});

t.test('submission checks run in the documented order', async (t) => {
  const clock = manualClock('2026-11-22T10:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const submit = (id: string, payload: object, headers: Record<string, string> = {}) =>
    app.inject({ method: 'POST', url: `/api/widgets/${id}/submit`, headers, payload });

  t.match((await submit('wgt_nope', { answers: {} })).json(), D3(404, 'widget_not_found'));
  const draft = (await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title: 'Draft' } })).json().id;
  t.match((await submit(draft, { answers: { nope: 1 } })).json(), D3(403, 'widget_not_published'), 'not published comes before token and answers');

  const dated = await publishedWidget(app, biz, { settings: { closes_at: '2026-11-22T11:00:00Z' } });
  const datedToken = await tokenFor(app, 'widgets', dated);
  t.equal((await submit(dated, { answers: { rating: 3 }, _token: datedToken })).statusCode, 200, 'open before closes_at');
  clock.set('2026-11-22T11:00:00.000Z');
  t.match((await submit(dated, { answers: { nope: 1 } })).json(), D3(403, 'widget_closed'), 'closed at closes_at, before token checks');
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${dated}` })).json().closed, true, 'GET says closed');

  const limited = await publishedWidget(app, biz, { settings: { max_responses: 2 } });
  const limitedToken = await tokenFor(app, 'widgets', limited);
  for (let i = 0; i < 2; i++) t.equal((await submit(limited, { answers: { rating: 3 }, _token: limitedToken })).statusCode, 200);
  t.match((await submit(limited, { answers: { rating: 3 }, _token: limitedToken })).json(), D3(403, 'widget_closed'), 'closed by its response limit');
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${limited}/responses`, headers: biz.headers })).json().pagination.total, 2);

  const guarded = await publishedWidget(app, biz, { settings: { allowed_domains: ['shop.example', '*.blog.example'] } });
  const token = await tokenFor(app, 'widgets', guarded);
  t.match((await submit(guarded, { answers: { nope: 1 } }, { origin: 'https://evil.example' })).json(), D3(403, 'invalid_token'), 'token before domain');
  const cases: Array<[Record<string, string>, number, string]> = [
    [{ origin: 'https://shop.example' }, 200, 'allowed origin'],
    [{ origin: 'https://shop.example:8443' }, 200, 'ports do not matter'],
    [{ origin: 'https://evil.example' }, 403, 'other origin'],
    [{ origin: 'https://shop.example.evil.example' }, 403, 'a suffix trick'],
    [{ referer: 'https://shop.example/page?x=1' }, 200, 'Referer when there is no Origin'],
    [{ origin: 'https://a.blog.example' }, 200, 'wildcard subdomain'],
    [{ origin: 'https://blog.example' }, 200, 'wildcard apex'],
    [{ origin: 'https://xblog.example' }, 403, 'not a subdomain'],
    [{ origin: 'null' }, 403, 'opaque origin'],
    [{}, 403, 'no origin at all'],
  ];
  for (const [headers, status, name] of cases) {
    const reply = await submit(guarded, { answers: { rating: 2 }, _token: token }, headers);
    t.equal(reply.statusCode, status, name);
    if (status === 403) t.match(reply.json(), D3(403, 'domain_not_allowed'), name);
  }
  t.match((await submit(guarded, { answers: { nope: 1 }, _token: token }, { origin: 'https://evil.example' })).json(), D3(403, 'domain_not_allowed'), 'domain before answers');
});

t.test('answers are checked against the questions', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedWidget(app, biz, {
    widget_type: 'custom',
    questions: [
      { id: 'stars', type: 'star_rating', title: 'Stars', required: true, starRatingSettings: { maxStars: 3 } },
      { id: 'nps', type: 'nps', title: 'NPS' },
      { id: 'text', type: 'long_text', title: 'Text' },
      { id: 'mail', type: 'email', title: 'Mail' },
      { id: 'pick', type: 'single_choice', title: 'Pick', choices: [{ id: 'a', label: 'A' }, { id: 'b', label: 'B' }] },
      { id: 'sev', type: 'severity', title: 'Severity' },
    ],
  });
  const token = await tokenFor(app, 'widgets', id);
  const submit = (answers: unknown) => app.inject({ method: 'POST', url: `/api/widgets/${id}/submit`, payload: { answers, _token: token } });
  const bad: Array<[string, unknown, string]> = [
    ['required missing', { nps: 3 }, 'answers.stars'],
    ['required blank', { stars: '' }, 'answers.stars'],
    ['stars above max', { stars: 4 }, 'answers.stars'],
    ['stars not whole', { stars: 2.5 }, 'answers.stars'],
    ['stars as text', { stars: '3' }, 'answers.stars'],
    ['nps above 10', { stars: 1, nps: 11 }, 'answers.nps'],
    ['nps below 0', { stars: 1, nps: -1 }, 'answers.nps'],
    ['text too long', { stars: 1, text: 'x'.repeat(10_001) }, 'answers.text'],
    ['text as number', { stars: 1, text: 5 }, 'answers.text'],
    ['not an email', { stars: 1, mail: 'nobody' }, 'answers.mail'],
    ['unknown choice', { stars: 1, pick: 'c' }, 'answers.pick'],
    ['unknown severity', { stars: 1, sev: 'apocalyptic' }, 'answers.sev'],
    ['unknown question', { stars: 1, extra: 'x' }, 'answers.extra'],
  ];
  for (const [name, answers, path] of bad) {
    const reply = await submit(answers);
    t.equal(reply.statusCode, 400, name);
    t.match(reply.json(), { ...D3(400, 'validation_error'), details: [{ path, message: String }] }, name);
  }
  t.match((await submit([1, 2])).json(), D3(400, 'validation_error'), 'answers must be an object');
  const ok = await submit({ stars: 3, nps: 0, text: 'x'.repeat(10_000), mail: 'a@b.example', pick: 'b', sev: 'critical' });
  t.equal(ok.statusCode, 200, ok.body);
  const list = (await app.inject({ method: 'GET', url: `/api/widgets/${id}/responses`, headers: biz.headers })).json();
  t.equal(list.pagination.total, 1, 'none of the invalid submissions was stored');
  t.same(list.responses[0].answers, { stars: 3, nps: 0, text: 'x'.repeat(10_000), mail: 'a@b.example', pick: 'b', sev: 'critical' });
});

t.test('an answer of only invisible characters is blank: refused for a required question, dropped for an optional one', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedWidget(app, biz, {
    widget_type: 'custom',
    questions: [
      { id: 'why', type: 'long_text', title: 'Why?', required: true },
      { id: 'more', type: 'long_text', title: 'More?' },
    ],
  });
  const token = await tokenFor(app, 'widgets', id);
  const submit = (answers: unknown) => app.inject({ method: 'POST', url: `/api/widgets/${id}/submit`, payload: { answers, _token: token } });
  const invisible = '\u200b\u200c\u200d\ufeff \u3164';
  t.match((await submit({ why: invisible })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'answers.why' }] }, 'a required one is not answered by it');
  t.equal((await submit({ why: 'Because 👍', more: invisible })).statusCode, 200);
  const list = (await app.inject({ method: 'GET', url: `/api/widgets/${id}/responses`, headers: biz.headers })).json();
  t.same(list.responses.map((r: { answers: unknown }) => r.answers), [{ why: 'Because 👍' }], 'an optional one is left out, as a blank one is');
});

t.test('read-your-writes, the documented record, and 200 submissions at once', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const other = await owner(services);
  const id = await publishedWidget(app, biz);
  const token = await tokenFor(app, 'widgets', id);
  const submit = (n: number) =>
    app.inject({ method: 'POST', url: `/api/widgets/${id}/submit`, payload: { answers: { rating: (n % 5) + 1, comment: `#${n}` }, _token: token, metadata: { pageUrl: 'https://shop.example/', pageTitle: 'Shop' } } });

  const first = await submit(0);
  t.strictSame(Object.keys(first.json()).sort(), ['id', 'success']);
  const list = (await app.inject({ method: 'GET', url: `/api/widgets/${id}/responses`, headers: biz.headers })).json();
  t.equal(list.responses[0].id, first.json().id, 'the new response is listed at once');
  t.strictSame(Object.keys(list.responses[0]).sort(), ['answers', 'ending', 'id', 'language', 'last_page', 'metadata', 'status', 'submitted_at', 'widget_id']);
  t.match(list.responses[0], { widget_id: id, submitted_at: clock().toISOString(), metadata: { page_url: 'https://shop.example/', page_title: 'Shop' } });
  t.match((await app.inject({ method: 'GET', url: `/api/widgets/${id}/responses`, headers: other.headers })).json(), D3(404, 'widget_not_found'), 'only the owner reads responses');

  const replies = await Promise.all(Array.from({ length: 200 }, (_, n) => submit(n + 1)));
  t.same(new Set(replies.map((r) => r.statusCode)), new Set([200]), 'all 200 accepted');
  const ids = new Set(replies.map((r) => r.json().id));
  t.equal(ids.size, 200, 'each got its own id');
  const listed: string[] = [];
  for (let page = 1; page <= 3; page++) {
    const body = (await app.inject({ method: 'GET', url: `/api/widgets/${id}/responses?limit=100&page=${page}`, headers: biz.headers })).json();
    t.equal(body.pagination.total, 201, 'the total is exact');
    listed.push(...body.responses.map((r: { id: string }) => r.id));
  }
  t.equal(new Set(listed).size, 201, 'every response is on exactly one page, none lost');
  // Same clock instant for all: the order is still total, the order in which they were recorded.
  const recorded = (await services.events.readAll({ after: 0n, limit: 10_000 })).filter((e) => e.type === 'ResponseSubmitted').map((e) => e.data.response_id);
  t.same(listed, recorded.reverse(), 'newest first: the reverse of the order recorded');
  const far = await app.inject({ method: 'GET', url: `/api/widgets/${id}/responses?limit=100&page=${Number.MAX_SAFE_INTEGER}`, headers: biz.headers });
  t.equal(far.statusCode, 200, 'the largest page number is a page past the end');
  t.match(far.json(), { responses: [], pagination: { page: Number.MAX_SAFE_INTEGER, total: 201, totalPages: 3 } });
});

t.test('CORS: public endpoints answer preflights; management endpoints advertise nothing', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedWidget(app, biz);
  for (const url of [`/api/widgets/${id}`, `/api/widgets/${id}/token`, `/api/widgets/${id}/submit`]) {
    const preflight = await app.inject({ method: 'OPTIONS', url, headers: { origin: 'https://any.example', 'access-control-request-method': 'POST' } });
    t.equal(preflight.statusCode, 204, url);
    t.equal(preflight.headers['access-control-allow-origin'], '*', url);
    t.match(String(preflight.headers['access-control-allow-headers']), /content-type/i);
  }
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${id}`, headers: { origin: 'https://any.example' } })).headers['access-control-allow-origin'], '*');
  const management = await app.inject({ method: 'GET', url: '/api/widgets', headers: { ...biz.headers, origin: 'https://any.example' } });
  t.equal(management.headers['access-control-allow-origin'], undefined);
  t.equal((await app.inject({ method: 'OPTIONS', url: '/api/widgets' })).statusCode, 404, 'no preflight for management endpoints');
});

t.test('text answers are counted in characters, as titles are: 10,000 emoji pass, 10,001 do not', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedWidget(app, biz);
  const submit = async (comment: string) =>
    app.inject({ method: 'POST', url: `/api/widgets/${id}/submit`, payload: { answers: { rating: 5, comment }, _token: await tokenFor(app, 'widgets', id) } });
  t.equal((await submit('🙂'.repeat(6_000))).statusCode, 200, '6,000 emoji (12,000 UTF-16 units)');
  t.equal((await submit('🙂'.repeat(10_000))).statusCode, 200, '10,000 emoji');
  t.match((await submit('🙂'.repeat(10_001))).json(), { ...D3(400, 'validation_error'), details: [{ path: 'answers.comment', message: 'must be at most 10000 characters' }] }, '10,001 emoji');
  t.match((await submit('x'.repeat(10_001))).json(), D3(400, 'validation_error'), '10,001 letters');
  const stored = (await app.inject({ method: 'GET', url: `/api/widgets/${id}/responses`, headers: biz.headers })).json().responses;
  t.equal(stored[1].answers.comment, '🙂'.repeat(6_000), 'kept whole');
});

t.test('page facts longer than their limits are cut, not refused: the visitor cannot shorten them', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const id = await publishedWidget(app, biz);
  const long = `https://shop.example/app#${'a'.repeat(3000)}`;
  const title = `${'T'.repeat(499)}😀 and more`;
  const reply = await app.inject({
    method: 'POST',
    url: `/api/widgets/${id}/submit`,
    payload: { answers: { rating: 4 }, _token: await tokenFor(app, 'widgets', id), metadata: { pageUrl: long, pageTitle: title, referrer: long, fingerprint: 'f'.repeat(600) } },
  });
  t.equal(reply.statusCode, 200, reply.body);
  const listed = await app.inject({ method: 'GET', url: `/api/widgets/${id}/responses`, headers: biz.headers });
  const metadata = listed.json().responses[0].metadata as Record<string, string>;
  t.equal(metadata.page_url, long.slice(0, 2048), 'the URL cut to 2,048 characters');
  t.equal(metadata.referer, long.slice(0, 2048));
  t.equal(metadata.page_title, 'T'.repeat(499), 'the title to 500, without the half of a pair the cut would split');

  const poll = (await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Which?', options: [{ text: 'A' }, { text: 'B' }] } })).json();
  await app.inject({ method: 'PUT', url: `/api/polls/${poll.id}`, headers: biz.headers, payload: { published: true } });
  const vote = await app.inject({
    method: 'POST',
    url: `/api/polls/${poll.id}/vote`,
    payload: { option_ids: [poll.options[0].id], _token: await tokenFor(app, 'polls', poll.id), metadata: { fingerprint: 'f'.repeat(600) } },
  });
  t.equal(vote.statusCode, 200, vote.body);
});
