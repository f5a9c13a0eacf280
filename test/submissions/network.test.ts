import t from 'tap';
import { manualClock, owner, publishedWidget, testApp, tokenFor } from '../support/app.js';

/**
 * The second signal against duplicates: besides the fingerprint, one address
 * with one user agent makes at most three submissions to an object in a clock
 * hour, whatever fingerprints it sends.
 */

const firefox = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const chrome = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

t.test('polls: fifteen votes from one address and browser with fresh fingerprints count three', async (t) => {
  const clock = manualClock('2026-11-22T10:05:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const created = await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Best fruit?', options: [{ text: 'Apple' }, { text: 'Pear' }] } });
  const { id, options } = created.json() as { id: string; options: Array<{ id: string }> };
  await app.inject({ method: 'PUT', url: `/api/polls/${id}`, headers: biz.headers, payload: { published: true } });
  const vote = async (fingerprint: string, userAgent: string, remoteAddress = '198.51.100.7') =>
    app.inject({ method: 'POST', url: `/api/polls/${id}/vote`, remoteAddress, headers: { 'user-agent': userAgent }, payload: { option_ids: [options[0]!.id], _token: await tokenFor(app, 'polls', id), metadata: { fingerprint } } });

  const replies = [];
  for (let i = 0; i < 15; i++) replies.push(await vote(`fresh-${i}`, firefox));
  t.same(replies.map((r) => r.statusCode), [200, 200, 200, ...Array<number>(12).fill(409)], 'three counted, then refused');
  t.match(replies[3]!.json(), { statusCode: 409, code: 'duplicate_submission', message: /this address and browser this hour/ });
  t.equal((await app.inject({ method: 'GET', url: `/api/polls/${id}/results` })).json().total_votes, 3);

  t.equal((await vote('fresh-15', chrome)).statusCode, 200, 'another browser on the same address is another network');
  t.equal((await vote('fresh-16', firefox, '198.51.100.8')).statusCode, 200, 'so is the same browser on another address');
  clock.set('2026-11-22T11:00:00.000Z');
  t.equal((await vote('fresh-17', firefox)).statusCode, 200, 'the next clock hour counts afresh');
  t.equal((await vote('fresh-0', chrome, '198.51.100.9')).statusCode, 409, 'a fingerprint that voted stays refused, from anywhere');
});

t.test('widgets with prevent_duplicates: the same allowance; without it, no network count', async (t) => {
  // A clock of the test's own: the allowance is counted per clock hour, which the real one could turn mid-test.
  const { app, services } = await testApp(t, { clock: manualClock('2026-11-22T10:05:00.000Z') });
  const biz = await owner(services);
  const single = await publishedWidget(app, biz, { settings: { prevent_duplicates: true } });
  const open = await publishedWidget(app, biz);
  const submit = async (widget: string, fingerprint: string) =>
    app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, remoteAddress: '198.51.100.7', headers: { 'user-agent': firefox }, payload: { answers: { rating: 5 }, _token: await tokenFor(app, 'widgets', widget), metadata: { fingerprint } } });
  const statuses = [];
  for (let i = 0; i < 5; i++) statuses.push((await submit(single, `fresh-${i}`)).statusCode);
  t.same(statuses, [200, 200, 200, 409, 409]);
  const free = [];
  for (let i = 0; i < 5; i++) free.push((await submit(open, `fresh-${i}`)).statusCode);
  t.same(free, [200, 200, 200, 200, 200], 'an object that takes repeats counts no network');
  const streams = new Set((await services.events.readAll({ limit: 1000 })).map((e) => e.streamId).filter((s) => s.startsWith('net-')));
  t.equal(streams.size, 1, 'one network stream, of the guarded widget');
  t.notMatch([...streams][0], /198\.51\.100\.7|Firefox/, 'its name holds neither the address nor the browser');
});

t.test('IPv6 addresses of one /64 are one network', async (t) => {
  // A clock of the test's own: the allowance is counted per clock hour, which the real one could turn mid-test.
  const { app, services } = await testApp(t, { clock: manualClock('2026-11-22T10:05:00.000Z') });
  const biz = await owner(services);
  const created = await app.inject({ method: 'POST', url: '/api/polls', headers: biz.headers, payload: { question: 'Best fruit?', options: [{ text: 'Apple' }, { text: 'Pear' }] } });
  const { id, options } = created.json() as { id: string; options: Array<{ id: string }> };
  await app.inject({ method: 'PUT', url: `/api/polls/${id}`, headers: biz.headers, payload: { published: true } });
  const vote = async (fingerprint: string, remoteAddress: string) =>
    (await app.inject({ method: 'POST', url: `/api/polls/${id}/vote`, remoteAddress, headers: { 'user-agent': firefox }, payload: { option_ids: [options[1]!.id], _token: await tokenFor(app, 'polls', id), metadata: { fingerprint } } })).statusCode;
  const statuses = [];
  for (let i = 0; i < 4; i++) statuses.push(await vote(`v6-${i}`, `2001:db8:1:2::${i + 1}`));
  t.same(statuses, [200, 200, 200, 409], 'four addresses of one /64 share three votes');
  t.equal(await vote('v6-other', '2001:db8:1:3::1'), 200, 'the next /64 is another network');
});
