import { connect } from 'node:net';
import { Writable } from 'node:stream';
import t from 'tap';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { createLogger } from '../../src/services.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { METRICS_TOKEN, metricsHeaders } from '../support/services.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

function capture(level = 'info') {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  return { lines, parsed: () => lines.map((line) => JSON.parse(line) as Record<string, any>), logger: createLogger({ LOG_LEVEL: level as 'info' }, sink) };
}

/** Sends raw bytes to a listening server and answers what came back before it closed. */
function raw(port: number, request: string): Promise<{ status: number; body: string; headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    let received = '';
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    socket.on('data', (chunk) => (received += chunk));
    socket.on('error', (error) => (received ? undefined : reject(error)));
    socket.on('close', () => {
      const [head = '', body = ''] = received.split('\r\n\r\n');
      const [line = '', ...fields] = head.split('\r\n');
      const headers = Object.fromEntries(fields.map((field) => [field.slice(0, field.indexOf(':')).toLowerCase(), field.slice(field.indexOf(':') + 1).trim()]));
      resolve({ status: Number(line.split(' ')[1]), body, headers });
    });
  });
}

t.test('what the HTTP parser refuses is answered in the D3 shape with a code, and logged with it', async (t) => {
  const log = capture();
  const { app } = await testApp(t, { logger: log.logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const cases: Array<[string, string, number, string]> = [
    ['an over-long URL', `GET /${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`, 431, 'request_header_fields_too_large'],
    ['over-long headers', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'b'.repeat(20_000)}\r\n\r\n`, 431, 'request_header_fields_too_large'],
    ['a malformed request line', 'HELLO THERE\r\n\r\n', 400, 'validation_error'],
    ['a broken header', 'GET / HTTP/1.1\r\nHost x\r\n\r\n', 400, 'validation_error'],
  ];
  const ids: string[] = [];
  for (const [name, request, status, code] of cases) {
    const reply = await raw(port, request);
    t.equal(reply.status, status, name);
    t.match(JSON.parse(reply.body), D3(status, code), name);
    // The headers every reply carries (API reference, "Errors" and "Security headers").
    t.match(
      reply.headers,
      { 'x-request-id': /^req_/, 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'x-frame-options': 'DENY', 'content-security-policy': "default-src 'none'; frame-ancestors 'none'" },
      `${name}: the headers of every reply`,
    );
    ids.push(reply.headers['x-request-id']!);
  }
  t.equal(new Set(ids).size, ids.length, 'a request id of its own for each');
  const refused = log.parsed().filter((line) => line.msg === 'request refused by the HTTP parser');
  t.same(refused.map((line) => [line.res.statusCode, line.code, line.reqId]), cases.map(([, , status, code], i) => [status, code, ids[i]]), 'each with its code and request id');
});

t.test('a body that stops arriving is answered 408 request_timeout in the D3 shape once the request\'s time is up, and nothing is created', async (t) => {
  const { app, services } = await testApp(t, { env: { REQUEST_TIMEOUT_SECONDS: '1' } });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const started = Date.now();
  const reply = await raw(port, `POST /api/widgets/${widget}/submit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"answers":`);
  t.equal(reply.status, 408);
  t.match(JSON.parse(reply.body), D3(408, 'request_timeout'));
  t.match(reply.headers, { 'x-request-id': /^req_/, 'content-security-policy': "default-src 'none'; frame-ancestors 'none'" });
  t.ok(Date.now() - started < 15_000, 'within the limit and one look');
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().pagination.total, 0, 'nothing was stored');
});

t.test('a client that closes its connection halfway through a body is logged as gone (info), not as an error of ours, and nothing is created', async (t) => {
  const log = capture();
  const { app, services } = await testApp(t, { logger: log.logger });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  await new Promise<void>((resolve) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`POST /api/widgets/${widget}/submit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"answers":`);
      setTimeout(() => socket.destroy(), 200);
    });
    socket.on('close', () => resolve());
  });
  await eventually(() => log.parsed().some((line) => line.msg === 'the client closed the connection before its request had arrived'));
  t.same(log.parsed().filter((line) => line.level >= 50), [], 'no error logged');
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().pagination.total, 0, 'nothing was stored');
});

t.test('bad bytes after a good request on one connection: the good one is answered first, then the 400, so a client is not told only of the refusal while its submission was stored', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const token = await tokenFor(app, 'widgets', widget);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const body = JSON.stringify({ answers: { rating: 4 }, _token: token });
  const received = await new Promise<string>((resolve, reject) => {
    let text = '';
    const socket = connect(port, '127.0.0.1', () =>
      socket.write(`POST /api/widgets/${widget}/submit HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}GARBAGE\r\n\r\n`),
    );
    socket.on('data', (chunk) => (text += chunk));
    socket.on('error', (error) => (text ? undefined : reject(error)));
    socket.on('close', () => resolve(text));
  });
  // A reply's body ends without a line end: the next status line follows it on the same line.
  const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => Number(match[1]));
  t.same(statuses, [200, 400], 'the reply to the submission, then the refusal');
  t.equal((await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().pagination.total, 1, 'the one submission stored');
});

t.test('an HTTP/1.1 request without Host is 400 validation_error in the D3 shape (Node alone answers it with no body); HTTP/1.0 needs none', async (t) => {
  const { app } = await testApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const missing = await raw(port, 'GET /healthz HTTP/1.1\r\nConnection: close\r\n\r\n');
  t.equal(missing.status, 400);
  t.match(JSON.parse(missing.body), { ...D3(400, 'validation_error'), message: /needs a Host header/ });
  t.match(missing.headers, { 'x-request-id': /^req_/ });
  const old = await raw(port, 'GET /healthz HTTP/1.0\r\n\r\n');
  t.equal(old.status, 200);
  for (const version of ['1.1', '1.0']) {
    const twice = await raw(port, `GET /healthz HTTP/${version}\r\nHost: a.example\r\nhost: b.example\r\nConnection: close\r\n\r\n`);
    t.equal(twice.status, 400, `HTTP/${version} with two Host headers`);
    t.match(JSON.parse(twice.body), { ...D3(400, 'validation_error'), message: /several Host headers/ });
  }
});

t.test('CONNECT, which no route takes, is 404 not_found in the D3 shape like any other such method, not a connection closed without a word', async (t) => {
  const log = capture();
  const { app } = await testApp(t, { logger: log.logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  for (const target of ['127.0.0.1:443', '/api/widgets']) {
    const reply = await raw(port, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
    t.equal(reply.status, 404, target);
    t.match(JSON.parse(reply.body), { ...D3(404, 'not_found'), message: `No route CONNECT ${target}` }, target);
    t.match(reply.headers, { 'x-request-id': /^req_/, 'x-content-type-options': 'nosniff', connection: 'close' }, `${target}: the headers of every reply`);
  }
  const trace = await raw(port, 'TRACE /api/widgets HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
  t.match(JSON.parse(trace.body), D3(404, 'not_found'), 'as TRACE is');
  t.equal(log.parsed().filter((line) => line.msg === 'CONNECT refused' && line.code === 'not_found').length, 2, 'logged with its code');
});

t.test('a request with two Authorization headers is 401 unauthorized, whichever of them holds a good key', async (t) => {
  const { app, services } = await testApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const business = await owner(services);
  const widget = await publishedWidget(app, business);
  const get = (path: string, ...authorizations: string[]) =>
    raw(port, `GET ${path} HTTP/1.1\r\nHost: x\r\n${authorizations.map((value) => `Authorization: ${value}\r\n`).join('')}Connection: close\r\n\r\n`);
  const good = `Bearer ${business.key}`;
  t.equal((await get('/api/widgets', good)).status, 200, 'the key alone is taken');
  for (const [name, path, values] of [
    ['a K endpoint, the good key first', '/api/widgets', [good, 'Bearer svc_other']],
    ['a K endpoint, the good key second', '/api/widgets', ['Bearer svc_other', good]],
    ['a K endpoint, the good key twice', '/api/widgets', [good, good]],
    ['a public read, which takes a key when one is sent', `/api/widgets/${widget}`, [good, good]],
    ['a public read, an empty header before the key (Node keeps the empty one)', `/api/widgets/${widget}`, ['', good]],
    ['GET /metrics, its token twice', '/metrics', [metricsHeaders.authorization, metricsHeaders.authorization]],
  ] as const) {
    const reply = await get(path, ...values);
    t.equal(reply.status, 401, name);
    t.match(JSON.parse(reply.body), { ...D3(401, 'unauthorized'), message: /one Authorization header/ }, name);
  }
  t.equal((await get(`/api/widgets/${widget}`)).status, 200, 'the public read without any is served');
});

t.test('a body sent with two Content-Type headers is 415, whatever they say, and nothing is created', async (t) => {
  const { app, services } = await testApp(t);
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const business = await owner(services);
  const body = '{"widget_type":"nps","title":"Two types"}';
  const post = (...types: string[]) =>
    raw(
      port,
      `POST /api/widgets HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${business.key}\r\n${types.map((type) => `Content-Type: ${type}\r\n`).join('')}Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  for (const types of [
    ['application/json; charset=utf-8', 'application/json; charset=latin1'],
    ['application/json', 'application/json'],
  ]) {
    const reply = await post(...types);
    t.equal(reply.status, 415, types.join(' + '));
    t.match(JSON.parse(reply.body), { ...D3(415, 'unsupported_media_type'), message: /one Content-Type header/ }, types.join(' + '));
  }
  const listed = await app.inject({ method: 'GET', url: '/api/widgets', headers: business.headers });
  t.equal(listed.json().widgets.length, 0, 'no widget was created');
  t.equal((await post('application/json')).status, 201, 'one Content-Type is taken');
});

t.test('the reference pages’ file server refuses bad paths and headers with their 4xx, never a 500 or a stack trace', async (t) => {
  const log = capture();
  const { app } = await testApp(t, { logger: log.logger });
  await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as { port: number };
  const file = '/docs/static/index.css';
  t.equal((await app.inject({ method: 'GET', url: file })).statusCode, 200, 'the file is there');
  const cases: Array<[string, { url: string; headers?: Record<string, string> }, number, string]> = [
    ['a Range past the end', { url: file, headers: { range: 'bytes=99999999-100000000' } }, 416, 'range_not_satisfiable'],
    ['If-Match that matches nothing', { url: file, headers: { 'if-match': 'xyz' } }, 412, 'precondition_failed'],
    ['a NUL in the path', { url: '/docs/static/%00' }, 400, 'validation_error'],
    ['a NUL inside a name', { url: '/docs/static/index%00.css' }, 400, 'validation_error'],
  ];
  for (const [name, request, status, code] of cases) {
    const reply = await app.inject({ method: 'GET', ...request });
    t.equal(reply.statusCode, status, name);
    t.match(reply.json(), D3(status, code), name);
  }
  // Sent as is: an HTTP client would resolve the dots itself.
  for (const path of ['/docs/static/../../x', '/docs/static/..%2f..%2fpackage.json', '/docs/static/%2e%2e/%2e%2e/package.json']) {
    const reply = await raw(port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    t.ok(reply.status >= 400 && reply.status < 500, `${path}: ${reply.status}`);
    t.match(JSON.parse(reply.body), { code: String, statusCode: reply.status }, `${path}: in the D3 shape`);
    t.notMatch(reply.body, /"name"\s*:\s*"feedback-service"/, `${path}: nothing outside the folder`);
  }
  const errors = log.parsed().filter((line) => line.level >= 50);
  t.same(errors.map((line) => line.msg), [], 'nothing logged as an error, no stack trace');
});

t.test('GET /metrics needs METRICS_TOKEN as a bearer token', async (t) => {
  const { app } = await testApp(t);
  t.equal((await app.inject({ method: 'GET', url: '/metrics', headers: metricsHeaders })).statusCode, 200);
  t.match((await app.inject({ method: 'GET', url: '/metrics' })).json(), D3(401, 'unauthorized'), 'none');
  t.match((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}x` } })).json(), D3(401, 'unauthorized'), 'another');
  t.match((await app.inject({ method: 'GET', url: '/metrics', headers: { authorization: METRICS_TOKEN } })).json(), D3(401, 'unauthorized'), 'not as a bearer token');

  const unset = await testApp(t, { env: { METRICS_TOKEN: '' } });
  const reply = await unset.app.inject({ method: 'GET', url: '/metrics', headers: metricsHeaders });
  t.match(reply.json(), { ...D3(401, 'unauthorized'), message: /METRICS_TOKEN/ }, 'without METRICS_TOKEN it serves no one, and says why');
});

t.test('a full disk is 507 storage_full and unready until there is room; nothing acknowledged is lost', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const submit = async (comment: string) => app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 4, comment }, _token: await tokenFor(app, 'widgets', widget) } });
  t.equal((await submit('before')).statusCode, 200);
  t.ok(await eventually(async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200), 'ready');

  // The same file through a connection that may not grow it: SQLite then fails as on a full disk.
  const roomy = services.events;
  const probe = openSqliteEventStore(services.config.DATA_DIR);
  const pages = probe['db'].pragma('page_count', { simple: true }) as number;
  await probe.close();
  const full = openSqliteEventStore(services.config.DATA_DIR, undefined, { maxPageCount: pages });
  t.teardown(() => full.close());
  services.events = full;
  services.commands.events = full;

  const refused = await submit('x'.repeat(9000));
  t.equal(refused.statusCode, 507);
  t.match(refused.json(), { ...D3(507, 'storage_full'), message: /nothing of this request was stored/ });
  t.equal(refused.headers['retry-after'], '60', 'with a minute to wait before a retry');
  // 25 KB, more than the pages read models free up between two probes can take.
  const update = await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { questions: Array.from({ length: 50 }, (_, i) => ({ id: `q${i}`, type: 'long_text', title: `${i} ${'y'.repeat(490)}` })) } });
  t.match(update.json(), D3(507, 'storage_full'), 'a command too');
  const unready = await app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders });
  t.equal(unready.statusCode, 503, 'not ready while there is no room');
  t.match(unready.json(), { code: 'not_ready', storage: { full: true } });
  t.equal((await app.inject({ method: 'GET', url: '/readyz' })).statusCode, 503, 'still not, as long as there is none');

  services.events = roomy;
  services.commands.events = roomy;
  const ready = await app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders });
  t.equal(ready.statusCode, 200, 'ready again once there is room');
  t.match(ready.json(), { status: 'ready', storage: { full: false } });
  t.equal((await submit('after')).statusCode, 200);
  t.ok(await eventually(async () => (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().responses.length === 2));
  const comments = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().responses.map((r: { answers: { comment: string } }) => r.answers.comment);
  t.same(comments, ['after', 'before'], 'every acknowledged response is there, the refused one is not');
});

t.test('TRUST_PROXY=true is warned about at start', async (t) => {
  const log = capture('warn');
  await testApp(t, { logger: log.logger, env: { TRUST_PROXY: 'true' } });
  t.match(log.parsed(), [{ level: 40, msg: /TRUST_PROXY=true .*X-Forwarded-For.*number of proxies/ }]);
  const counted = capture('warn');
  await testApp(t, { logger: counted.logger, env: { TRUST_PROXY: '1' } });
  t.same(counted.lines, [], 'a hop count is not');
});

t.test('every 4xx and 5xx request log line names its error code', async (t) => {
  const log = capture();
  const { app, services } = await testApp(t, { logger: log.logger });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz, { settings: { allowed_domains: ['example.com'] } });
  const token = await tokenFor(app, 'widgets', widget);
  const requests = [
    { method: 'POST' as const, url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'nps' } },
    { method: 'POST' as const, url: `/api/widgets/${widget}/submit`, headers: { origin: 'https://evil.example' }, payload: { answers: { rating: 1 }, _token: token } },
    { method: 'GET' as const, url: '/api/widgets' },
    { method: 'GET' as const, url: '/nowhere' },
    { method: 'GET' as const, url: '/api/widgets', headers: biz.headers },
  ];
  const replies = [];
  for (const request of requests) replies.push(await app.inject(request));
  await services.readModels.close();
  replies.push(await app.inject({ method: 'GET', url: '/api/widgets', headers: biz.headers }));
  const completed = log.parsed().filter((line) => line.msg === 'request completed');
  const byId = new Map(completed.map((line) => [line.reqId, line]));
  const seen = replies.map((reply) => [reply.statusCode, byId.get(reply.headers['x-request-id'])?.code]);
  t.same(seen, [
    [400, 'validation_error'],
    [403, 'domain_not_allowed'],
    [401, 'unauthorized'],
    [404, 'not_found'],
    [200, undefined],
    [500, 'internal_error'],
  ]);
});
