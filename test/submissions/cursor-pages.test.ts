import t, { type Test } from 'tap';
import { manualClock, owner, publishedWidget, testApp, tokenFor } from '../support/app.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

async function setup(t: Test) {
  const clock = manualClock('2026-11-22T10:00:00.000Z');
  const { app, services } = await testApp(t, { clock });
  const biz = await owner(services);
  const id = await publishedWidget(app, biz);
  const token = await tokenFor(app, 'widgets', id);
  const submit = async (rating: number) => {
    const reply = await app.inject({ method: 'POST', url: `/api/widgets/${id}/submit`, payload: { answers: { rating }, _token: token } });
    if (reply.statusCode !== 200) throw new Error(reply.body);
    return reply.json().id as string;
  };
  const list = async (query: string) => app.inject({ method: 'GET', url: `/api/widgets/${id}/responses?${query}`, headers: biz.headers });
  return { app, clock, submit, list };
}

t.test('walking every page by next_cursor while responses arrive meets each response exactly once', async (t) => {
  const { clock, submit, list } = await setup(t);
  const before: string[] = [];
  for (let i = 0; i < 10; i++) {
    before.push(await submit(1 + (i % 5)));
    // Pairs share a millisecond: the id orders them.
    if (i % 2 === 1) clock.advance(1000);
  }
  const seen: string[] = [];
  let reply = await list('limit=3');
  t.equal(reply.statusCode, 200);
  let arrived = 0;
  for (;;) {
    const body = reply.json();
    seen.push(...body.responses.map((r: { id: string }) => r.id));
    // New responses keep coming between pages.
    clock.advance(1000);
    await submit(5);
    arrived++;
    const next = body.pagination.next_cursor as string | null;
    if (next === null) break;
    t.equal(body.responses.length, 3);
    reply = await list(`limit=3&cursor=${encodeURIComponent(next)}${arrived === 1 ? '&page=5' : ''}`);
    t.equal(reply.statusCode, 200, reply.body);
    t.equal(reply.json().pagination.page, null, 'a page by cursor has no page number, whatever `page` says');
  }
  t.equal((await list('limit=3&page=2')).json().pagination.page, 2, 'a page by number has its number');
  t.strictSame(new Set(seen).size, seen.length, 'no response twice');
  t.strictSame([...seen].sort(), [...before].sort(), 'every response there at the start, and none that arrived after the walk began');
  t.ok(arrived >= 4);
});

t.test('since and until keep exactly the responses of their span, both inclusive', async (t) => {
  const { clock, submit, list } = await setup(t);
  const at: Array<[string, string]> = [];
  for (let i = 0; i < 6; i++) {
    at.push([await submit(3), clock().toISOString()]);
    clock.advance(60_000);
  }
  const ids = async (query: string) => {
    const reply = await list(query);
    t.equal(reply.statusCode, 200, reply.body);
    return reply.json() as { responses: Array<{ id: string }>; pagination: { total: number; next_cursor: string | null } };
  };
  const span = await ids(`since=${at[1]![1]}&until=${at[3]![1]}`);
  t.strictSame(span.responses.map((r) => r.id), [at[3]![0], at[2]![0], at[1]![0]], 'the bounds are inclusive, newest first');
  t.equal(span.pagination.total, 3);
  t.equal(span.pagination.next_cursor, null);
  // An offset other than Z means the same instant.
  t.strictSame((await ids(`since=${encodeURIComponent('2026-11-22T11:03:00+01:00')}`)).responses.map((r) => r.id), [at[5]![0], at[4]![0], at[3]![0]]);
  t.strictSame((await ids(`until=${at[0]![1]}`)).responses.map((r) => r.id), [at[0]![0]]);
  const first = await ids(`since=${at[1]![1]}&limit=2`);
  t.strictSame(first.responses.map((r) => r.id), [at[5]![0], at[4]![0]]);
  const second = await ids(`since=${at[1]![1]}&limit=2&cursor=${encodeURIComponent(first.pagination.next_cursor!)}`);
  t.strictSame(second.responses.map((r) => r.id), [at[3]![0], at[2]![0]], 'a cursor keeps the filter');
  t.strictSame((await ids(`since=${at[1]![1]}&limit=2&page=2`)).responses.map((r) => r.id), [at[3]![0], at[2]![0]], 'page works with a filter too');
  t.match((await list('since=yesterday')).json(), D3(400, 'validation_error'));
  // Past year 9999 (or before year 0000) once in UTC, a time would be written `+010000-…` and compared as text out of order.
  for (const query of ['since=9999-12-31T23:59:59-23:59', 'until=9999-12-31T23:59:59-23:59', 'since=0000-01-01T00:00:00%2B00:01']) {
    t.match((await list(query)).json(), { ...D3(400, 'validation_error'), details: [{ path: `querystring.${query.split('=')[0]}`, message: /years 0000 to 9999/ }] }, query);
  }
  t.equal((await ids('since=0000-01-01T00:00:00Z&until=9999-12-31T23:59:59.999Z')).pagination.total, 6, 'the first and last instants of the range are taken');
  t.equal((await ids(`since=${at[2]![1]}&until=${at[2]![1]}`)).pagination.total, 1, 'one instant is a range');
  // A range that holds nothing is a mistake, not an empty list; the same instant written in another offset is in order.
  t.match((await list(`since=${at[3]![1]}&until=${at[2]![1]}`)).json(), { ...D3(400, 'validation_error'), details: [{ path: 'querystring.since', message: 'must not be after until' }] });
  t.equal((await ids(`since=${encodeURIComponent('2026-11-22T11:02:00+01:00')}&until=${at[2]![1]}`)).pagination.total, 1);
});

t.test('page and limit keep working as before; a cursor altered or made up is refused', async (t) => {
  const { clock, submit, list } = await setup(t);
  const ids: string[] = [];
  for (let i = 0; i < 5; i++) {
    ids.push(await submit(4));
    clock.advance(1000);
  }
  const newest = [...ids].reverse();
  const page2 = (await list('page=2&limit=2')).json();
  t.strictSame(page2.responses.map((r: { id: string }) => r.id), newest.slice(2, 4));
  t.match(page2.pagination, { page: 2, limit: 2, total: 5, totalPages: 3 });
  t.type(page2.pagination.next_cursor, 'string', 'a page before the last names the next');
  t.equal((await list('page=3&limit=2')).json().pagination.next_cursor, null, 'the last page names none');
  const cursor = page2.pagination.next_cursor as string;
  t.strictSame((await list(`limit=2&cursor=${encodeURIComponent(cursor)}`)).json().responses.map((r: { id: string }) => r.id), newest.slice(4));
  const [body, signature] = cursor.split('.');
  const forged = Buffer.from(JSON.stringify(['2099-01-01T00:00:00.000Z', 'zzz'])).toString('base64url');
  // Strings a lenient decoder reads as the same signature: a trailing space, the spare bits of its last character.
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const spare = `${signature!.slice(0, -1)}${alphabet[alphabet.indexOf(signature!.at(-1)!) ^ 1]}`;
  t.same(Buffer.from(spare, 'base64url'), Buffer.from(signature!, 'base64url'), 'the two decode alike');
  // Its first character another: a last two turned to `AA` left one signature in 256 as it was.
  const altered = `${signature![0] === 'A' ? 'B' : 'A'}${signature!.slice(1)}`;
  for (const bad of [`${forged}.${signature}`, `${body}.${altered}`, 'abc', `${body}.${signature}.x`, '', `${body}.${signature} `, `${body}.${spare}`, `${body}.${signature}=`]) {
    t.match((await list(`cursor=${encodeURIComponent(bad)}`)).json(), { ...D3(400, 'validation_error'), details: [{ path: 'querystring.cursor' }] }, `refused: ${bad.slice(0, 20)}`);
  }
  t.match((await list('page=0')).json(), D3(400, 'validation_error'));
});
