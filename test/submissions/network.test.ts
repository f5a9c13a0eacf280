import t from 'tap';
import { manualClock, owner, publishedWidget, testApp, tokenFor } from '../support/app.js';

/**
 * The second signal against duplicates, an object's own setting, off by
 * default: besides the fingerprint, one address with one user agent makes at
 * most `network_limit_per_hour` submissions to the object in a clock hour,
 * whatever fingerprints it sends.
 */

const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** A published poll of the owner, with the settings given; answers its id and first option. */
async function publishedPoll(app: Awaited<ReturnType<typeof testApp>>['app'], headers: Record<string, string>, settings: Record<string, unknown> = {}) {
  const created = await app.inject({ method: 'POST', url: '/api/polls', headers, payload: { question: 'Best fruit?', options: [{ text: 'Apple' }, { text: 'Pear' }], settings } });
  const { id, options } = created.json() as { id: string; options: Array<{ id: string }> };
  await app.inject({ method: 'PUT', url: `/api/polls/${id}`, headers, payload: { published: true } });
  return { id, option: options[0]!.id };
}

t.test('polls: a shared network (one address, one browser) is not limited unless the owner sets a limit; the fingerprint guard stays', async (t) => {
  const clock = manualClock('2026-11-22T10:05:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const poll = await publishedPoll(app, biz.headers);
  t.equal((await app.inject({ method: 'GET', url: `/api/polls/${poll.id}`, headers: biz.headers })).json().settings.network_limit_per_hour, null, 'off by default');
  const vote = async (fingerprint: string) =>
    app.inject({ method: 'POST', url: `/api/polls/${poll.id}/vote`, remoteAddress: '198.51.100.7', headers: { 'user-agent': firefox }, payload: { option_ids: [poll.option], _token: await tokenFor(app, 'polls', poll.id), metadata: { fingerprint } } });
  const replies = [];
  for (let i = 0; i < 15; i++) replies.push(await vote(`phone-${i}`));
  t.same(replies.map((r) => r.statusCode), Array<number>(15).fill(200), 'fifteen people behind one carrier NAT, on one phone model, all counted');
  t.equal((await app.inject({ method: 'GET', url: `/api/polls/${poll.id}/results` })).json().total_votes, 15);
  t.match((await vote('phone-3')).json(), { statusCode: 409, code: 'duplicate_submission', message: 'This visitor has voted in this poll already' }, 'a fingerprint that voted is still refused');
  const streams = (await services.events.readAll({ limit: 1000 })).map((e) => e.streamId).filter((s) => s.startsWith('net-'));
  t.same(streams, [], 'and no network is counted');
});

t.test('polls with network_limit_per_hour: fifteen votes from one address and browser with fresh fingerprints count that many', async (t) => {
  const clock = manualClock('2026-11-22T10:05:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const { id, option } = await publishedPoll(app, biz.headers, { network_limit_per_hour: 3 });
  const vote = async (fingerprint: string, userAgent: string, remoteAddress = '198.51.100.7') =>
    app.inject({ method: 'POST', url: `/api/polls/${id}/vote`, remoteAddress, headers: { 'user-agent': userAgent }, payload: { option_ids: [option], _token: await tokenFor(app, 'polls', id), metadata: { fingerprint } } });

  const replies = [];
  for (let i = 0; i < 15; i++) replies.push(await vote(`fresh-${i}`, firefox));
  t.same(replies.map((r) => r.statusCode), [200, 200, 200, ...Array<number>(12).fill(409)], 'three counted, then refused');
  t.match(replies[3]!.json(), { statusCode: 409, code: 'duplicate_submission', message: 'This poll has taken 3 votes from this address and browser this hour; try again next hour' });
  t.equal((await app.inject({ method: 'GET', url: `/api/polls/${id}/results` })).json().total_votes, 3);

  t.equal((await vote('fresh-15', chrome)).statusCode, 200, 'another browser on the same address is another network');
  t.equal((await vote('fresh-16', firefox, '198.51.100.8')).statusCode, 200, 'so is the same browser on another address');
  clock.set('2026-11-22T11:00:00.000Z');
  t.equal((await vote('fresh-17', firefox)).statusCode, 200, 'the next clock hour counts afresh');
  t.equal((await vote('fresh-0', chrome, '198.51.100.9')).statusCode, 409, 'a fingerprint that voted stays refused, from anywhere');

  const raised = await app.inject({ method: 'PUT', url: `/api/polls/${id}`, headers: biz.headers, payload: { settings: { network_limit_per_hour: 5 } } });
  t.equal(raised.statusCode, 200, raised.body);
  t.equal((await vote('fresh-18', firefox)).statusCode, 200, 'a raised limit takes more within the hour');
  const off = await app.inject({ method: 'PUT', url: `/api/polls/${id}`, headers: biz.headers, payload: { settings: { network_limit_per_hour: null } } });
  t.equal(off.statusCode, 200, off.body);
  for (let i = 19; i < 25; i++) t.equal((await vote(`fresh-${i}`, firefox)).statusCode, 200, `turned off: vote ${i} is taken`);
});

t.test('network_limit_per_hour takes a whole number from 1, or null', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  for (const value of [0, -1, 2.5, '3', 100_001]) {
    const reply = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title: 'x', settings: { network_limit_per_hour: value } } });
    t.equal(reply.statusCode, 400, `${JSON.stringify(value)}: ${reply.body}`);
    t.match(reply.json(), { code: 'validation_error', details: [{ path: 'body.settings.network_limit_per_hour' }] });
  }
});

t.test('widgets: prevent_duplicates alone counts no network; network_limit_per_hour limits one, with or without it', async (t) => {
  // A clock of the test's own: the limit is counted per clock hour, which the real one could turn mid-test.
  const { app, services } = await testApp(t, { clock: manualClock('2026-11-22T10:05:00.000Z') });
  const biz = await owner(services);
  const single = await publishedWidget(app, biz, { settings: { prevent_duplicates: true } });
  const limited = await publishedWidget(app, biz, { settings: { prevent_duplicates: true, network_limit_per_hour: 3 } });
  const networkOnly = await publishedWidget(app, biz, { settings: { network_limit_per_hour: 2 } });
  const open = await publishedWidget(app, biz);
  const submit = async (widget: string, fingerprint: string) =>
    app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, remoteAddress: '198.51.100.7', headers: { 'user-agent': firefox }, payload: { answers: { rating: 5 }, _token: await tokenFor(app, 'widgets', widget), metadata: { fingerprint } } });
  const statuses = async (widget: string, fingerprints: string[]) => {
    const out = [];
    for (const fingerprint of fingerprints) out.push((await submit(widget, fingerprint)).statusCode);
    return out;
  };
  const fresh = ['fresh-0', 'fresh-1', 'fresh-2', 'fresh-3', 'fresh-4'];
  t.same(await statuses(single, fresh), [200, 200, 200, 200, 200], 'one answer a fingerprint, however many share the network');
  t.same(await statuses(single, ['fresh-0']), [409], 'the guard holds');
  t.same(await statuses(limited, fresh), [200, 200, 200, 409, 409], 'with a limit of 3');
  t.same(await statuses(networkOnly, ['same', 'same', 'same']), [200, 200, 409], 'a limit without the guard: repeats of a visitor count against it');
  t.same(await statuses(open, fresh), [200, 200, 200, 200, 200], 'an object that takes repeats counts no network');
  const streams = new Set((await services.events.readAll({ limit: 1000 })).map((e) => e.streamId).filter((s) => s.startsWith('net-')));
  t.equal(streams.size, 2, 'one network stream for each widget with a limit');
  for (const stream of streams) t.notMatch(stream, /198\.51\.100\.7|Firefox/, 'its name holds neither the address nor the browser');
});

t.test('IPv6 addresses of one /64 are one network', async (t) => {
  // A clock of the test's own: the allowance is counted per clock hour, which the real one could turn mid-test.
  const { app, services } = await testApp(t, { clock: manualClock('2026-11-22T10:05:00.000Z') });
  const biz = await owner(services);
  const { id, option } = await publishedPoll(app, biz.headers, { network_limit_per_hour: 3 });
  const vote = async (fingerprint: string, remoteAddress: string) =>
    (await app.inject({ method: 'POST', url: `/api/polls/${id}/vote`, remoteAddress, headers: { 'user-agent': firefox }, payload: { option_ids: [option], _token: await tokenFor(app, 'polls', id), metadata: { fingerprint } } })).statusCode;
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push(await vote(`v6-${i}`, `2001:db8:1:2::${i + 1}`));
  t.same(statuses, [200, 200, 200, 409], 'four addresses of one /64 share three votes');
  t.equal(await vote('v6-other', '2001:db8:1:3::1'), 200, 'the next /64 is another network');
});
