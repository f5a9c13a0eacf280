import t from 'tap';
import { createKey } from '../../src/accounts/commands.js';
import type { App } from '../../src/app.js';
import { manualClock, owner, testApp, tokenFor, type Owner } from '../support/app.js';
import { snapshotReadModels } from '../support/services.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

async function createPoll(app: App, who: Owner, body: object = {}, publish = true) {
  const created = await app.inject({ method: 'POST', url: '/api/polls', headers: who.headers, payload: { question: 'Best fruit?', options: [{ text: 'Apple' }, { text: 'Pear' }, { text: 'Plum' }], ...body } });
  if (created.statusCode !== 201) throw new Error(created.body);
  if (publish) await app.inject({ method: 'PUT', url: `/api/polls/${created.json().id}`, headers: who.headers, payload: { published: true } });
  return created.json() as { id: string; options: Array<{ id: string; text: string }> };
}

/** A visitor's address: each fingerprint on one of its own, so the network allowance (three votes an hour) stays out of the way. */
const addressOf = (fingerprint: string | undefined): string => {
  if (fingerprint === undefined) return '127.0.0.1';
  let hash = 0;
  for (const char of fingerprint) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return `10.${(hash >>> 16) & 255}.${(hash >>> 8) & 255}.${hash & 255}`;
};

const vote = (app: App, id: string, token: string, option_ids: unknown, fingerprint?: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: `/api/polls/${id}/vote`, headers, remoteAddress: addressOf(fingerprint), payload: { option_ids, _token: token, ...(fingerprint ? { metadata: { fingerprint } } : {}) } });

const results = async (app: App, id: string, headers?: Record<string, string>) => (await app.inject({ method: 'GET', url: `/api/polls/${id}/results`, headers })).json();

t.test('polls: create, list, get, update, delete', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const other = await owner(services);
  const created = await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Best fruit?', options: [{ text: 'Apple' }, { text: 'Pear' }] } });
  t.equal(created.statusCode, 201);
  t.strictSame(Object.keys(created.json()).sort(), ['created_at', 'id', 'options', 'published', 'question']);
  t.match(created.json(), { question: 'Best fruit?', published: false, options: [{ id: String, text: 'Apple' }, { id: String, text: 'Pear' }] });
  const { id, options } = created.json();
  t.not(options[0].id, options[1].id, 'options get ids');

  t.match((await app.inject({ method: 'GET', url: '/api/polls', headers: biz.headers })).json(), { polls: [{ id, question: 'Best fruit?', published: false }], pagination: { total: 1 } });
  t.same((await app.inject({ method: 'GET', url: '/api/polls', headers: other.headers })).json().polls, []);
  t.match((await app.inject({ method: 'GET', url: `/api/polls/${id}` })).json(), D3(403, 'poll_not_published'));
  t.match((await app.inject({ method: 'GET', url: `/api/polls/${id}`, headers: other.headers })).json(), D3(404, 'poll_not_found'));
  t.match((await app.inject({ method: 'GET', url: `/api/polls/${id}`, headers: biz.headers })).json(), { id, allow_multiple: false, published: false, closed: false, settings: {} });
  t.match((await app.inject({ method: 'GET', url: '/api/polls/pol_nope' })).json(), D3(404, 'poll_not_found'));

  const put = (payload: object, who = biz) => app.inject({ method: 'PUT', url: `/api/polls/${id}`, headers: who.headers, payload });
  const updated = await put({ question: 'Best fruit, really?', options: [{ id: options[1].id, text: 'Pear (Williams)' }, { text: 'Quince' }], published: true });
  t.strictSame(Object.keys(updated.json()).sort(), ['id', 'published', 'question', 'updated_at']);
  t.match(updated.json(), { question: 'Best fruit, really?', published: true });
  const now = (await app.inject({ method: 'GET', url: `/api/polls/${id}` })).json();
  t.equal(now.options[0].id, options[1].id, 'an option sent with its id keeps it');
  t.equal(now.options[1].text, 'Quince');
  t.notOk('settings' in now);
  t.notOk('created_at' in now || 'updated_at' in now, 'nor the timestamps, as for a widget');
  t.match((await app.inject({ method: 'GET', url: `/api/polls/${id}`, headers: biz.headers })).json(), { created_at: String, updated_at: String }, 'which the owner sees');
  t.match((await put({ options: [{ id: 'opt_forged', text: 'X' }, { text: 'Y' }] })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.options.0.id' }] });
  t.match((await put({ options: [{ text: 'Only one' }] })).json(), D3(400, 'validation_error'));
  t.match((await put({ question: 'Mine' }, other)).json(), D3(404, 'poll_not_found'));
  for (const [payload, path] of [[{ question: '\u200b', options: [{ text: 'a' }, { text: 'b' }] }, 'body.question'], [{ question: 'q', options: [{ text: 'a' }, { text: '\u00ad\u2060' }] }, 'body.options.1.text']] as const) {
    t.match((await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload })).json(), { ...D3(400, 'validation_error'), details: [{ path, message: 'must not be blank' }] }, `${path}: only invisible characters`);
  }
  for (const payload of [{ question: '', options: [{ text: 'a' }, { text: 'b' }] }, { question: 'q', options: [{ text: 'a' }] }, { question: 'q', options: [{ text: 'a' }, { text: 'b' }], extra: 1 }, { question: 'q', options: [{ id: 'x', text: 'a' }, { text: 'b' }] }]) {
    t.match((await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload })).json(), D3(400, 'validation_error'));
  }

  t.match((await app.inject({ method: 'DELETE', url: `/api/polls/${id}`, headers: other.headers })).json(), D3(404, 'poll_not_found'));
  t.same((await app.inject({ method: 'DELETE', url: `/api/polls/${id}`, headers: biz.headers })).json(), { success: true });
  for (const [method, path] of [['GET', ''], ['GET', '/results'], ['GET', '/token'], ['POST', '/vote'], ['PUT', ''], ['DELETE', '']] as const) {
    t.match((await app.inject({ method, url: `/api/polls/${id}${path}`, headers: biz.headers, ...(method === 'POST' ? { payload: { option_ids: ['x'] } } : method === 'PUT' ? { payload: {} } : {}) })).json(), D3(404, 'poll_not_found'), `${method} ${path} after delete`);
  }
});

t.test('votes: checks, one per visitor, results without voter data', async (t) => {
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const poll = await createPoll(app, biz, { settings: { allowed_domains: ['acme.example'] } });
  const [apple, pear, plum] = poll.options.map((o) => o.id);
  const token = await tokenFor(app, 'polls', poll.id);
  const acme = { origin: 'https://acme.example' };
  const draft = await createPoll(app, biz, {}, false);
  t.match((await app.inject({ method: 'GET', url: `/api/polls/${draft.id}/token` })).json(), D3(403, 'poll_not_published'));
  t.match((await vote(app, draft.id, token, [draft.options[0]!.id], 'fp', acme)).json(), D3(403, 'poll_not_published'));
  t.match((await results(app, draft.id)), D3(403, 'poll_not_published'), 'results are public for published polls only');
  t.match((await vote(app, 'pol_nope', token, [apple], 'fp', acme)).json(), D3(404, 'poll_not_found'));
  t.match((await vote(app, poll.id, 'forged', [apple], 'fp', acme)).json(), D3(403, 'invalid_token'));
  t.match((await vote(app, poll.id, token, [apple], 'fp', { origin: 'https://evil.example' })).json(), D3(403, 'domain_not_allowed'));
  t.match((await vote(app, poll.id, token, [apple, pear], 'fp', acme)).json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.option_ids' }] }, 'one option unless allow_multiple');
  t.match((await vote(app, poll.id, token, ['opt_unknown'], 'fp', acme)).json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.option_ids.0' }] }, 'unknown option');
  t.match((await vote(app, poll.id, token, [], 'fp', acme)).json(), D3(400, 'validation_error'), 'no option');
  t.match((await vote(app, poll.id, token, 'apple', 'fp', acme)).json(), D3(400, 'validation_error'), 'not a list');

  const first = await vote(app, poll.id, token, [apple], 'fp-1', acme);
  t.same(first.json(), { success: true }, 'D6: a vote answers {success: true}');
  t.match((await vote(app, poll.id, token, [pear], 'fp-1', acme)).json(), D3(409, 'duplicate_submission'), 'one vote per fingerprint');
  await vote(app, poll.id, token, [pear], 'fp-2', acme);
  await vote(app, poll.id, token, [pear], undefined, acme);
  t.match((await vote(app, poll.id, token, [plum], undefined, acme)).json(), D3(409, 'duplicate_submission'), 'without a fingerprint the address stands in');
  const r = await results(app, poll.id);
  t.strictSame(Object.keys(r).sort(), ['options', 'poll_id', 'question', 'total_votes']);
  t.same(r, {
    poll_id: poll.id,
    question: 'Best fruit?',
    total_votes: 3,
    options: [
      { id: apple, text: 'Apple', votes: 1, percentage: 33.3 },
      { id: pear, text: 'Pear', votes: 2, percentage: 66.7 },
      { id: plum, text: 'Plum', votes: 0, percentage: 0 },
    ],
  });
  t.equal((await app.inject({ method: 'GET', url: `/api/polls/${poll.id}/votes`, headers: biz.headers })).statusCode, 404, 'no endpoint for individual votes');

  const multi = await createPoll(app, biz, { allow_multiple: true, settings: { max_responses: 2, closes_at: '2026-11-23T00:00:00Z' } });
  const multiToken = await tokenFor(app, 'polls', multi.id);
  const [a, b] = multi.options.map((o) => o.id);
  t.same((await vote(app, multi.id, multiToken, [a, b], 'x')).json(), { success: true });
  t.match((await vote(app, multi.id, multiToken, [a, a], 'y')).json(), D3(400, 'validation_error'), 'an option twice');
  t.same((await vote(app, multi.id, multiToken, [b], 'y')).json(), { success: true });
  t.match((await vote(app, multi.id, multiToken, [b], 'z')).json(), D3(403, 'poll_closed'), 'closed by its vote limit');
  t.match(await results(app, multi.id), { total_votes: 3, options: [{ votes: 1, percentage: 33.3 }, { votes: 2, percentage: 66.7 }] }, 'each chosen option is a vote; percentages are of the votes');
  clock.set('2026-11-23T00:00:00.000Z');
  t.match((await vote(app, poll.id, token, [plum], 'late', acme)).json(), D3(403, 'invalid_token'), 'the token expired meanwhile');
  const dated = await createPoll(app, biz, { settings: { closes_at: '2026-11-22T00:00:00Z' } });
  t.match((await vote(app, dated.id, await tokenFor(app, 'polls', dated.id), [dated.options[0]!.id], 'w')).json(), D3(403, 'poll_closed'), 'closed by date');
  t.match((await app.inject({ method: 'GET', url: `/api/polls/${dated.id}` })).json(), { closed: true });
});

t.test('500 concurrent votes give exact totals; the same visitor twice at once counts once; rebuild agrees', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const poll = await createPoll(app, biz);
  const token = await tokenFor(app, 'polls', poll.id);
  const ids = poll.options.map((o) => o.id);
  const replies = await Promise.all(Array.from({ length: 500 }, (_, i) => vote(app, poll.id, token, [ids[i % 3]], `visitor-${i}`)));
  t.same(new Set(replies.map((r) => r.statusCode)), new Set([200]));
  const twice = await Promise.all(Array.from({ length: 10 }, () => vote(app, poll.id, token, [ids[0]], 'eager')));
  t.equal(twice.filter((r) => r.statusCode === 200).length, 1, 'one of ten simultaneous votes of one visitor counts');
  t.same(new Set(twice.filter((r) => r.statusCode !== 200).map((r) => r.json().code)), new Set(['duplicate_submission']));
  // 500 visitors over three options by i % 3: 167, 167 and 166 votes.
  const expected = [167, 167, 166];
  const r = await results(app, poll.id);
  t.equal(r.total_votes, 501);
  t.same(r.options.map((o: { votes: number }) => o.votes), [expected[0]! + 1, expected[1], expected[2]]);
  const voteEvents = (await services.events.readAll({ after: 0n, limit: 100_000 })).filter((e) => e.type === 'VoteCast').length;
  t.equal(voteEvents, 501, 'counts equal the vote events');
  await services.projections.rebuild();
  t.same(await results(app, poll.id), r, 'a rebuild from zero gives the same results');
});

t.test('bulk delete with pollId removes votes from the results and the store', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const other = await owner(services);
  const poll = await createPoll(app, biz);
  const token = await tokenFor(app, 'polls', poll.id);
  for (let i = 0; i < 4; i++) await vote(app, poll.id, token, [poll.options[i % 2]!.id], `v${i}`);
  const voteIds = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((e) => e.type === 'VoteCast').map((e) => e.data.vote_id as string);
  t.match((await app.inject({ method: 'DELETE', url: '/api/responses', headers: other.headers, payload: { ids: voteIds, pollId: poll.id } })).json(), D3(404, 'poll_not_found'));
  const reply = await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: [voteIds[0], voteIds[1], 'vote_nope'], pollId: poll.id } });
  t.match(reply.json(), { success: true, deleted: 2, erasure_id: /^ers_/ });
  t.match(await results(app, poll.id), { total_votes: 2, options: [{ votes: 1 }, { votes: 1 }, { votes: 0 }] });
  const left = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((e) => e.type === 'VoteCast').map((e) => e.data.vote_id);
  t.same(left, voteIds.slice(2), 'the erased votes left the store');
  const before = await snapshotReadModels(services);
  await services.projections.rebuild();
  t.same(await snapshotReadModels(services), before, 'rebuild agrees after erasure');
  t.match((await vote(app, poll.id, token, [poll.options[2]!.id], 'v0')).json(), D3(409, 'duplicate_submission'), 'an erased vote still counts as its voter\'s one vote');
});

t.test('the results of an unpublished poll are a read of its votes: responses:read, not forms:read (D1, spec 5.4)', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const draft = await createPoll(app, biz, {}, false);
  const keyWith = async (scopes: Array<'forms:read' | 'responses:read'>) => {
    const key = await createKey(services, { accountId: biz.accountId, name: scopes.join(','), scopes });
    return { authorization: `Bearer ${key.api_key}` };
  };
  t.match(await results(app, draft.id, await keyWith(['forms:read'])), D3(403, 'insufficient_scope'), 'definitions only');
  t.match(await results(app, draft.id, await keyWith(['responses:read'])), { poll_id: draft.id, total_votes: 0 }, 'responses only');
  t.match((await app.inject({ method: 'GET', url: `/api/polls/${draft.id}`, headers: await keyWith(['responses:read']) })).json(), D3(403, 'insufficient_scope'), 'the poll itself stays a definition');
});

t.test('results count the options that exist, and their percentages add up to 100, live and after a rebuild', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const poll = await createPoll(app, biz, { allow_multiple: true });
  const [apple, pear, plum] = poll.options.map((o) => o.id);
  const token = await tokenFor(app, 'polls', poll.id);
  await vote(app, poll.id, token, [apple, pear], 'v1');
  await vote(app, poll.id, token, [pear, plum], 'v2');
  await vote(app, poll.id, token, [plum], 'v3');
  await vote(app, poll.id, token, [apple], 'v4');
  const sum = (r: { options: Array<{ percentage: number }> }) => Math.round(r.options.reduce((total, o) => total + o.percentage, 0));
  t.match(await results(app, poll.id), { total_votes: 6, options: [{ votes: 2, percentage: 33.3 }, { votes: 2, percentage: 33.3 }, { votes: 2, percentage: 33.3 }] }, 'a ballot of two options is two votes');

  const put = (payload: object) => app.inject({ method: 'PUT', url: `/api/polls/${poll.id}`, headers: biz.headers, payload });
  t.equal((await put({ options: [{ id: apple, text: 'Apple' }, { id: pear, text: 'Pear' }] })).statusCode, 200, 'plum removed');
  const removed = await results(app, poll.id);
  t.match(removed, { total_votes: 4, options: [{ id: apple, votes: 2, percentage: 50 }, { id: pear, votes: 2, percentage: 50 }] }, 'its votes left the total');
  t.equal(removed.options.length, 2);
  t.equal(sum(removed), 100);

  t.equal((await put({ allow_multiple: false })).statusCode, 200, 'several choices switched off');
  await vote(app, poll.id, token, [pear], 'v5');
  const single = await results(app, poll.id);
  t.match(single, { total_votes: 5, options: [{ votes: 2, percentage: 40 }, { votes: 3, percentage: 60 }] }, 'earlier ballots keep their choices; the shares still add up to 100');
  t.equal(sum(single), 100);

  await services.projections.rebuild();
  t.same(await results(app, poll.id), single, 'a rebuild from zero gives the same results');
});
