import { Writable } from 'node:stream';
import type { InjectOptions } from 'fastify';
import t from 'tap';
import { BODY_LIMIT } from '../../src/http/body-limit.js';
import { MAX_APPEND_BYTES } from '../../src/infra/event-store/port.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { createLogger } from '../../src/services.js';
import { owner, publishedWidget, testApp } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { METRICS_TOKEN, metricsHeaders } from '../support/services.js';

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });

t.test('every error path answers in the D3 shape', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const json = { 'content-type': 'application/json' };
  const cases: Array<[string, InjectOptions, number, string]> = [
    ['unknown route', { method: 'GET', url: '/nope' }, 404, 'not_found'],
    ['unknown api route', { method: 'POST', url: '/api/nothing', payload: {} }, 404, 'not_found'],
    ['unknown method', { method: 'PATCH', url: '/api/widgets', headers: biz.headers, payload: {} }, 404, 'not_found'],
    ['malformed JSON', { method: 'POST', url: `/api/widgets/${widget}/submit`, headers: json, payload: '{"answers": ' }, 400, 'validation_error'],
    ['malformed JSON on a K route', { method: 'POST', url: '/api/widgets', headers: { ...biz.headers, ...json }, payload: '{nope' }, 400, 'validation_error'],
    ['empty JSON body', { method: 'POST', url: '/api/widgets', headers: { ...biz.headers, ...json }, payload: '' }, 400, 'validation_error'],
    ['prototype pollution', { method: 'POST', url: '/api/widgets', headers: { ...biz.headers, ...json }, payload: '{"widget_type":"nps","title":"x","__proto__":{"admin":true}}' }, 400, 'validation_error'],
    ['constructor pollution', { method: 'POST', url: '/api/widgets', headers: { ...biz.headers, ...json }, payload: '{"widget_type":"nps","title":"x","constructor":{"prototype":{"admin":true}}}' }, 400, 'validation_error'],
    ['text/plain', { method: 'POST', url: `/api/widgets/${widget}/submit`, headers: { 'content-type': 'text/plain' }, payload: 'hello' }, 415, 'unsupported_media_type'],
    ['form encoded', { method: 'POST', url: '/api/widgets', headers: { ...biz.headers, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a=b' }, 415, 'unsupported_media_type'],
    ['over 1 MiB', { method: 'POST', url: `/api/widgets/${widget}/submit`, headers: json, payload: JSON.stringify({ answers: { comment: 'x'.repeat(1024 * 1024) } }) }, 413, 'payload_too_large'],
    ['over the body limit', { method: 'POST', url: `/api/widgets/${widget}/submit`, headers: json, payload: JSON.stringify({ answers: { comment: 'x'.repeat(BODY_LIMIT) } }) }, 413, 'payload_too_large'],
  ];
  for (const [name, request, status, code] of cases) {
    const reply = await app.inject(request);
    t.equal(reply.statusCode, status, name);
    t.match(reply.json(), D3(status, code), name);
    t.notMatch(reply.body, /node_modules|at \w+ \(|FST_|sqlite/i, `${name}: no internals`);
  }
  t.equal((await app.inject({ method: 'GET', url: '/api/widgets', headers: biz.headers })).json().pagination.total, 1, 'nothing was created by any of them');

  // Refused as broken JSON is, but said apart from it: the body parses, and the key is what is refused.
  for (const payload of ['{"answers":{"__proto__":1}}', '{"answers":{"constructor":{"prototype":{}}}}']) {
    const poisoned = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, headers: json, payload });
    t.match(poisoned.json(), { ...D3(400, 'validation_error'), message: 'The request body holds a key that is refused', details: [{ path: 'body', message: /__proto__/ }] }, payload);
  }
  const broken = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, headers: json, payload: '{"answers": ' });
  t.equal(broken.json().message, 'The request body is not valid JSON', 'broken JSON is still called that');
});

t.test('a schema violation names each part of the request once, with the first problem found there', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const reply = await app.inject({
    method: 'POST',
    url: '/api/widgets',
    headers: biz.headers,
    // Past the range of whole numbers and past the field's maximum; a text that is no list of anything.
    payload: { widget_type: 'nps', title: 'x', settings: { max_responses: 1e300, allowed_domains: 'example.com' } },
  });
  t.match(reply.json(), D3(400, 'validation_error'));
  const paths = (reply.json().details as Array<{ path: string }>).map((detail) => detail.path);
  t.same(paths.sort(), ['body.settings.allowed_domains', 'body.settings.max_responses'], reply.body);
});

t.test('the body limit leaves room under the event store\'s maximum append size', async (t) => {
  t.ok(BODY_LIMIT <= MAX_APPEND_BYTES - 256 * 1024, 'a quarter MiB for what the service adds to a body');
  const { app } = await testApp(t);
  const reply = await app.inject({ method: 'POST', url: '/api/widgets/wgt_x/submit', headers: { 'content-type': 'application/json' }, payload: `{"answers":{"c":"${'x'.repeat(BODY_LIMIT)}"}}` });
  t.match(reply.json(), { ...D3(413, 'payload_too_large'), message: `The request body is larger than ${BODY_LIMIT / 1024} KiB` });
});

t.test('an append the event store refuses as too large is 413 payload_too_large, and nothing is stored', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  const { app, services } = await testApp(t, { logger: createLogger({ LOG_LEVEL: 'warn' }, sink) });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const token = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/token` })).json().token;
  // KurrentDB configured with a MaxAppendSize below what the body limit lets through.
  const small = openSqliteEventStore(services.config.DATA_DIR, undefined, { maxAppendBytes: 4096 });
  t.teardown(() => small.close());
  services.events = small;
  services.commands.events = small;
  const submit = (comment: string) => app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 4, comment }, _token: token } });
  const reply = await submit('x'.repeat(8192));
  t.equal(reply.statusCode, 413);
  t.match(reply.json(), { ...D3(413, 'payload_too_large'), message: 'The request would store more than the event store takes at once' });
  const update = await app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { description: 'y'.repeat(2000), thank_you_message: 'z'.repeat(2000) } });
  t.match(update.json(), D3(413, 'payload_too_large'), 'a command too');
  t.equal((await submit('fits')).statusCode, 200, 'a smaller one is taken');
  const responses = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().responses;
  t.same(responses.map((r: { answers: { comment: string } }) => r.answers.comment), ['fits'], 'only the one that fit was stored');
  t.ok(lines.some((line) => /maximum append size is below/.test(JSON.parse(line).msg)), 'the operator hears of the store\'s limit');
});

t.test('request ids, health and readiness', async (t) => {
  const { app, services } = await testApp(t);
  const reply = await app.inject({ method: 'GET', url: '/healthz' });
  t.same(reply.json(), { status: 'ok' });
  t.match(String(reply.headers['x-request-id']), /^req_/, 'each reply names its request');
  t.match(String((await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'trace-123' } })).headers['x-request-id']), /^req_/, 'ours, whatever the caller sent (its own goes to the log)');
  // Ready once the projections have caught up since the start: wait for that, not for a time.
  t.ok(await eventually(() => services.projections.caughtUp), 'the projections caught up');
  const ready = await app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders });
  t.equal(ready.statusCode, 200);
  t.match(ready.json(), { status: 'ready', event_store: { kind: 'sqlite', reachable: true }, read_models: { kind: 'sqlite', reachable: true }, projections: { caught_up: true }, redis: null });
});

t.test('readiness tells anyone the status, and the operator (METRICS_TOKEN) where the history stands', async (t) => {
  const { app, services } = await testApp(t);
  await owner(services);
  t.ok(await eventually(() => services.projections.caughtUp), 'the projections caught up');
  const anonymous = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(anonymous.statusCode, 200);
  t.strictSame(anonymous.json(), { status: 'ready' }, 'the status alone: no head, no position, no stores');
  const operator = await app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders });
  t.match(operator.json(), { status: 'ready', role: 'all', projections: { caught_up: true, position: /^[1-9]\d*$/, head: /^[1-9]\d*$/, behind: false } });
  const wrong = await app.inject({ method: 'GET', url: '/readyz', headers: { authorization: `Bearer ${METRICS_TOKEN}x` } });
  t.match({ status: wrong.statusCode, body: wrong.json() }, { status: 401, body: D3(401, 'unauthorized') }, 'a wrong token is told so, not served less');
  t.notMatch(wrong.body, /position|head/);

  await services.readModels.close();
  const unready = await app.inject({ method: 'GET', url: '/readyz' });
  t.equal(unready.statusCode, 503);
  t.match(unready.json(), { ...D3(503, 'not_ready'), message: 'The service is not ready', status: 'not_ready' });
  t.strictSame(Object.keys(unready.json()).sort(), ['code', 'error', 'message', 'status', 'statusCode'], 'unready: the status alone too');
});

t.test('a store failure is a 500 that tells nothing of the store; readiness goes 503', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  await services.readModels.close();
  const reply = await app.inject({ method: 'GET', url: '/api/widgets', headers: biz.headers });
  t.equal(reply.statusCode, 500);
  t.match(reply.json(), D3(500, 'internal_error'));
  t.notMatch(reply.body, /database|sqlite|connection|stack/i);
  const ready = await app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders });
  t.equal(ready.statusCode, 503);
  t.match(ready.json(), { code: 'not_ready', read_models: { reachable: false } });
});

t.test('logs carry request ids and never the API key', async (t) => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk, _encoding, done) => (lines.push(String(chunk)), done()) });
  const { app, services } = await testApp(t, { logger: createLogger({ LOG_LEVEL: 'info' }, sink) });
  const biz = await owner(services);
  const reply = await app.inject({ method: 'GET', url: '/api/widgets', headers: { ...biz.headers, 'x-request-id': 'log-check' } });
  const log = lines.join('');
  t.match(log, new RegExp(`"reqId":"${reply.headers['x-request-id']}","client_request_id":"log-check"`), 'ours, and the caller\'s beside it');
  await app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'bad id <script>' } });
  t.notMatch(lines.join(''), /bad id/, 'a malformed caller id is not logged');
  t.notMatch(log, new RegExp(biz.key), 'the key is nowhere in the logs');
});
