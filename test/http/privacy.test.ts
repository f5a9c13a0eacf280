import { Writable } from 'node:stream';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import t from 'tap';
import { issueLoginLink } from '../../src/dashboard/commands.js';
import { createLogger } from '../../src/services.js';
import { issueEmbedToken, verifyEmbedToken } from '../../src/embeddables/access.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

/** A logger at the default level whose lines the test reads. */
function capture() {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  return { lines, parsed: () => lines.map((line) => JSON.parse(line) as Record<string, any>), logger: createLogger({ LOG_LEVEL: 'info' }, sink) };
}

t.test('no log line at the default level holds the client address; the request log has the keyed hash the events carry', async (t) => {
  const log = capture();
  const { app, services } = await testApp(t, { logger: log.logger });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const address = '203.0.113.77';
  const token = await tokenFor(app, 'widgets', widget);
  const submitted = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, remoteAddress: address, payload: { answers: { rating: 5 }, _token: token } });
  t.equal(submitted.statusCode, 200);
  await app.inject({ method: 'GET', url: '/nope', remoteAddress: address });
  t.notMatch(log.lines.join(''), /203\.0\.113\.77/, 'the address is in no line');
  t.notMatch(log.lines.join(''), /remoteAddress/, 'nor a field for it');
  const events = await services.events.readAll({ after: 0n, limit: 1000 });
  const stored = events.find((event) => event.type === 'ResponseSubmitted')!.data as { metadata: { ip_hash: string } };
  const incoming = log.parsed().filter((line) => line.msg === 'incoming request' && line.req.url === `/api/widgets/${widget}/submit`);
  t.equal(incoming.length, 1);
  t.equal(incoming[0]!.ip_hash, stored.metadata.ip_hash, 'the same keyed hash as the response’s, so an operator can count a client without knowing it');
});

t.test('events carry the service’s own request id; the caller’s X-Request-Id goes to the log only', async (t) => {
  const log = capture();
  const { app, services } = await testApp(t, { logger: log.logger });
  const biz = await owner(services);
  const create = () => app.inject({ method: 'POST', url: '/api/widgets', headers: { ...biz.headers, 'x-request-id': 'trace-1' }, payload: { widget_type: 'nps', title: 'Twice' } });
  const [first, second] = [await create(), await create()];
  const events = (await services.events.readAll({ after: 0n, limit: 1000 })).filter((event) => event.type === 'WidgetCreated');
  const ids = events.map((event) => (event.metadata as { request_id?: string }).request_id);
  t.same(ids, [first.headers['x-request-id'], second.headers['x-request-id']], 'each event names the request that made it, as its reply does');
  t.ok(ids.every((id) => /^req_/.test(String(id))) && ids[0] !== ids[1], 'ours, one per request');
  t.notMatch(JSON.stringify(events.map((event) => [event.data, event.metadata])), /trace-1/, 'the caller’s id is in no event');
  t.ok(log.parsed().some((line) => line.reqId === first.headers['x-request-id'] && line.client_request_id === 'trace-1'), 'it is logged beside ours');
});

t.test('control characters in text are refused naming the field; page facts the embed collects are stripped', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const create = (title: string, extra: object = {}) => app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title, ...extra } });
  for (const [name, text] of [['NUL', 'a\u0000b'], ['ESC', 'a\u001b[2Jb'], ['BEL', 'a\u0007'], ['DEL', 'a\u007f'], ['C1 CSI', 'a\u009b31m'], ['lone high surrogate', 'a\ud800b'], ['lone low surrogate', '\udc00']] as const) {
    const reply = await create(text);
    t.equal(reply.statusCode, 400, name);
    t.match(reply.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.title' }] }, `${name}: the field is named`);
  }
  t.match((await create('ok', { description: 'a\u0000' })).json(), { details: [{ path: 'body.description' }] }, 'every text field');
  const fine = await create('Tell us 😀', { description: 'Line one\nline two\tand a tab' });
  t.equal(fine.statusCode, 201, 'tab, line breaks and characters beyond the BMP are text');
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${fine.json().id}`, headers: biz.headers })).json().description, 'Line one\nline two\tand a tab');

  const widget = await publishedWidget(app, biz);
  const submit = async (body: object) => app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { _token: await tokenFor(app, 'widgets', widget), ...body } });
  t.match((await submit({ answers: { rating: 4, comment: 'hi\u0000there' } })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.answers.comment' }] }, 'answers too');
  t.match((await submit({ answers: { 'rat\u0007ing': 4 } })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.answers.rat\\u0007ing' }] }, 'and keys, shown escaped');
  const kept = await submit({ answers: { rating: 4, comment: 'fine' }, metadata: { pageTitle: 'Pri\u0007cing\n', pageUrl: 'https://example.com/\u0000a' } });
  t.equal(kept.statusCode, 200, 'page facts with control characters do not cost the visitor their answer');
  const responses = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().responses;
  t.match(responses[0].metadata, { page_title: 'Pricing', page_url: 'https://example.com/a' }, 'they are stored without them');
  t.equal((await app.inject({ method: 'GET', url: '/api/widgets?page=1%00', headers: biz.headers })).json().details[0].path, 'querystring.page', 'query strings too');
  t.match((await app.inject({ method: 'GET', url: '/api/widgets/wgt_%00', headers: biz.headers })).json(), { ...D3(400, 'validation_error'), details: [{ path: 'params.id' }] }, 'and paths');
});

t.test('a JSON text as sent is what is looked at: escapes of clean characters pass, raw DEL and C1 are refused or stripped as escaped ones are', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const raw = (url: string, text: string, headers: Record<string, string> = biz.headers) => app.inject({ method: 'POST', url, headers: { ...headers, 'content-type': 'application/json' }, payload: text });
  const escaped = await raw('/api/widgets', '{"widget_type":"feedback","title":"Caf\\u00e9 \\"Bar\\"\\u0020\\ud83d\\ude00"}');
  t.equal(escaped.statusCode, 201, escaped.body);
  t.equal(escaped.json().title, 'Café "Bar" 😀', 'escapes of text characters are that text');
  const del = await raw('/api/widgets', '{"widget_type":"feedback","title":"a\u007fb"}');
  t.match(del.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.title' }] }, 'a raw DEL is refused');
  const c1 = await raw('/api/widgets', '{"widget_type":"feedback","ti\u009btle":"x"}');
  t.match(c1.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.ti\u009btle', message: /has a key that contains a control character/ }] }, 'a raw C1 character in a key is refused');
  const widget = await publishedWidget(app, biz);
  const token = await tokenFor(app, 'widgets', widget);
  const kept = await raw(`/api/widgets/${widget}/submit`, `{"_token":"${token}","answers":{"rating":4},"metadata":{"pageTitle":"Pri\u007fcing\u0085"}}`, {});
  t.equal(kept.statusCode, 200, kept.body);
  const responses = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().responses;
  t.equal(responses[0].metadata.page_title, 'Pricing', 'raw controls in page facts are stripped');
});

t.test('a body declared in a charset other than UTF-8 is 415', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const send = (type: string) => app.inject({ method: 'POST', url: '/api/widgets', headers: { ...biz.headers, 'content-type': type }, payload: Buffer.from('{"widget_type":"nps","title":"caf\u00e9"}', 'latin1') });
  for (const type of ['application/json; charset=latin1', 'application/json; charset=ISO-8859-1', 'application/json;charset="utf-16"', 'application/json; charset=utf-8; charset=latin1', 'application/json; x="a;b"; charset=latin1', 'application/json; charset="lat\\in1"']) {
    const reply = await send(type);
    t.equal(reply.statusCode, 415, type);
    t.match(reply.json(), { ...D3(415, 'unsupported_media_type'), message: /UTF-8/ });
  }
  const utf8 = await app.inject({ method: 'POST', url: '/api/widgets', headers: { ...biz.headers, 'content-type': 'application/json; charset=UTF-8' }, payload: '{"widget_type":"nps","title":"café"}' });
  t.equal(utf8.statusCode, 201, 'UTF-8 declared is fine');
  t.equal(utf8.json().title, 'café');
  // A quoted value is the parameter's own: its `;` and `charset=` declare nothing.
  for (const type of ['application/json; x="; charset=latin1"', 'application/json; x="a\\"; charset=latin1"; charset="utf-8"']) {
    const quoted = await app.inject({ method: 'POST', url: '/api/widgets', headers: { ...biz.headers, 'content-type': type }, payload: '{"widget_type":"nps","title":"café"}' });
    t.equal(quoted.statusCode, 201, type);
  }
  t.equal((await app.inject({ method: 'GET', url: '/api/widgets', headers: { ...biz.headers, 'content-type': 'application/json; charset=latin1' } })).statusCode, 200, 'a request without a body is not refused for its header');
  const undeclared = await send('application/json');
  t.match(undeclared.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body', message: /not UTF-8/ }] }, 'Latin-1 bytes sent as UTF-8 are refused, not stored as U+FFFD');
});

t.test('a compressed body (Content-Encoding) is 415, however small, and nothing is created', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const body = '{"widget_type":"nps","title":"Zipped"}';
  for (const [encoding, payload] of [['gzip', gzipSync(body)], ['deflate', deflateSync(body)], ['br', brotliCompressSync(body)], ['GZIP', gzipSync(body)], ['x-custom', Buffer.from(body)]] as const) {
    const reply = await app.inject({ method: 'POST', url: '/api/widgets', headers: { ...biz.headers, 'content-type': 'application/json', 'content-encoding': encoding }, payload });
    t.equal(reply.statusCode, 415, encoding);
    t.match(reply.json(), { ...D3(415, 'unsupported_media_type'), message: new RegExp(`not compressed \\(got Content-Encoding: ${encoding.toLowerCase()}\\)`) });
  }
  const listed = await app.inject({ method: 'GET', url: '/api/widgets', headers: biz.headers });
  t.equal(listed.json().widgets.length, 0, 'nothing was created');
  const identity = await app.inject({ method: 'POST', url: '/api/widgets', headers: { ...biz.headers, 'content-type': 'application/json', 'content-encoding': 'identity' }, payload: body });
  t.equal(identity.statusCode, 201, 'identity is no encoding');
  t.equal((await app.inject({ method: 'GET', url: '/api/widgets', headers: { ...biz.headers, 'content-encoding': 'gzip' } })).statusCode, 200, 'a request without a body is not refused for its header');
});

t.test('an embed token is genuine only in its canonical encoding', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const token = await tokenFor(app, 'widgets', widget);
  const signature = token.split('.')[4]!;
  // The last of 43 characters carries 4 bits and 2 spare ones: a neighbour decodes to the same bytes.
  const last = signature.at(-1)!;
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
  const sibling = alphabet[alphabet.indexOf(last) ^ 1]!;
  const forged = {
    '`!` appended': `${token}!`,
    '`==` appended': `${token}==`,
    '`*` inserted': `${token.slice(0, -10)}*${token.slice(-10)}`,
    'spare bits set': `${token.slice(0, -1)}${sibling}`,
  };
  const submit = (_token: string) => app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 3 }, _token } });
  for (const [name, variant] of Object.entries(forged)) {
    t.match((await submit(variant)).json(), D3(403, 'invalid_token'), name);
  }
  t.equal((await submit(token)).statusCode, 200, 'the token as issued works');

  const key = services.keys.embedTokens;
  const now = new Date('2026-11-22T10:00:00Z');
  const issued = issueEmbedToken(key, 'form', 'frm_1', now);
  t.same(verifyEmbedToken(key, issued, 'form', 'frm_1', now), now);
  t.equal(verifyEmbedToken(key, `${issued.slice(0, -1)}${alphabet[alphabet.indexOf(issued.at(-1)!) ^ 1]}`, 'form', 'frm_1', now), null);
});

t.test('a genuine token checked once is remembered for its object and its lifetime only', async (t) => {
  const key = Buffer.alloc(32, 7);
  const now = new Date('2026-11-22T10:00:00Z');
  const token = issueEmbedToken(key, 'form', 'frm_1', now);
  t.same(verifyEmbedToken(key, token, 'form', 'frm_1', now), now, 'genuine');
  t.same(verifyEmbedToken(key, token, 'form', 'frm_1', new Date(now.getTime() + 60_000)), now, 'again, a minute later');
  t.equal(verifyEmbedToken(key, token, 'form', 'frm_10', now), null, 'not for another form whose id it begins');
  t.equal(verifyEmbedToken(key, token, 'widget', 'frm_1', now), null, 'nor for a widget of the same id');
  t.equal(verifyEmbedToken(key, token, 'form', 'frm_1', new Date(now.getTime() + 1_800_001)), null, 'nor once its lifetime is over');
  t.equal(verifyEmbedToken(Buffer.alloc(32, 8), token, 'form', 'frm_1', now), null, 'nor under another key');
});

t.test('a reply lists at most 100 details, then how many more there are: a small body cannot make a huge 400', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const controls = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'nps', title: 'Hi', x: Array.from({ length: 1000 }, () => '\u0085') } });
  t.equal(controls.statusCode, 400);
  const details = controls.json().details as Array<{ path: string; message: string }>;
  t.equal(details.length, 101);
  t.match(details[100], { path: /^body\.x\.\d+$/, message: 'and 900 more problems, not listed' });
  t.notOk(details.slice(0, 100).some((detail) => detail.path === details[100]!.path), 'the path of one left out');
  t.ok(controls.body.length < 20_000, `${controls.body.length} bytes`);
  // Schema violations are counted the same way.
  const questions = Array.from({ length: 150 }, (_, i) => ({ id: `q${i}`, type: 'no_such_type', title: 'Q' }));
  const schema = await app.inject({ method: 'POST', url: '/api/forms', headers: biz.headers, payload: { title: 'Many', questions } });
  t.equal(schema.statusCode, 400);
  t.equal(schema.json().details.length, 101);
  t.same(schema.json().details.at(-1), { path: 'body.questions.100.type', message: 'and 50 more problems, not listed' });
});

t.test('no log line holds a login link’s token, an API key or a credential named in a query', async (t) => {
  const log = capture();
  const { app, services } = await testApp(t, { logger: log.logger });
  const biz = await owner(services);
  const { url } = await issueLoginLink(services, { accountId: biz.accountId });
  const token = new URL(url).searchParams.get('t')!;
  const page = await app.inject({ method: 'GET', url: `/dashboard/login?t=${encodeURIComponent(token)}`, headers: { accept: 'text/html' } });
  t.equal(page.statusCode, 200, 'the link’s page was served');
  await app.inject({ method: 'GET', url: `/dashboard/login?t=${token}&x=1` });
  await app.inject({ method: 'GET', url: `/api/widgets?page=1&api_key=${biz.key}&access_token=hunter2-access&limit=5` });
  await app.inject({ method: 'GET', url: `/nowhere/${biz.key}?token=hunter2-token` });
  await app.inject({ method: 'GET', url: `/elsewhere/${token}` });
  const signature = token.split('.').pop()!;
  const all = log.lines.join('');
  for (const secret of [signature, biz.key, 'hunter2-access', 'hunter2-token']) t.notOk(all.includes(secret), `${secret.slice(0, 8)}… is in no line`);
  const urls = log.parsed().filter((line) => line.msg === 'incoming request').map((line) => line.req.url as string);
  t.same(urls, [
    '/dashboard/login?[redacted]',
    '/dashboard/login?[redacted]',
    '/api/widgets?page=1&api_key=[redacted]&access_token=[redacted]&limit=5',
    '/nowhere/[redacted]?token=[redacted]',
    '/elsewhere/[redacted]',
  ], 'what the operator needs stays: the path and the harmless parameters');
});
