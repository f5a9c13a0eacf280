import t from 'tap';
import type { SendWebhook, WebhookRequest } from '../../src/webhooks/http.js';
import type { Resolve } from '../../src/webhooks/targets.js';
import { checkTarget, refusedAddress } from '../../src/webhooks/targets.js';
import { ALL_SCOPES, owner, publishedWidget, testApp, tokenFor } from '../support/app.js';
import { eventually } from '../support/eventually.js';

/** A time before everything a test records, as far back as a replay may reach and less. */
const EARLY = new Date(Date.now() - 86_400_000).toISOString();

const D3 = (statusCode: number, code: string) => ({ statusCode, code, error: String, message: String });
const WEBHOOK_SCOPES = [...ALL_SCOPES, 'webhooks:read', 'webhooks:write'] as const;

/** A resolver the test points wherever it likes, and a sender that records instead of connecting. */
function network() {
  const names = new Map<string, string[]>([['hooks.example.com', ['93.184.215.14']]]);
  const resolve: Resolve = async (host) => {
    const found = names.get(host);
    if (!found) throw Object.assign(new Error('not found'), { code: 'ENOTFOUND' });
    return found.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const sent: WebhookRequest[] = [];
  const answer = { status: 200 };
  const send: SendWebhook = async (request) => {
    sent.push(request);
    return { status: answer.status };
  };
  return { names, resolve, sent, answer, send };
}

t.test('given an address, refusedAddress tells whether a webhook may go there', async (t) => {
  for (const address of ['127.0.0.1', '127.8.0.1', '10.1.2.3', '172.16.0.1', '172.31.255.255', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '::1', '::', 'fe80::1', 'fd00::1', 'fc00::2', '::ffff:127.0.0.1', '::ffff:8.8.8.8', '::127.0.0.1', '::7f00:1', '::ffff:0:7f00:1', '::ffff:0:808:808', '64:ff9b::a00:1', 'ff02::1', '224.0.0.1', 'not an ip']) {
    t.ok(refusedAddress(address), `${address} is refused`);
  }
  for (const address of ['93.184.215.14', '8.8.8.8', '172.32.0.1', '2606:4700::1111', '2a00:1450:4001::1']) {
    t.notOk(refusedAddress(address), `${address} is allowed`);
  }
});

t.test('given an address in 3fff::/20 (documentation, RFC 9637) or 5f00::/16 (SRv6, RFC 9602), it is refused like the other reserved ranges', async (t) => {
  for (const address of ['2001:db8::1', '3fff::1', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', '5f00::1', '5f00:ffff:ffff:ffff:ffff:ffff:ffff:ffff']) {
    t.ok(refusedAddress(address), `${address} is refused`);
  }
  // Just outside them: 3fff::/20 ends at 3fff:0fff:…, 5f00::/16 at 5f00:ffff:….
  for (const address of ['3fff:1000::1', '3ffe:ffff::1', '5f01::1', '5eff:ffff::1']) {
    t.notOk(refusedAddress(address), `${address} is allowed`);
  }
  const resolve: Resolve = async () => [{ address: '3fff:123::1', family: 6 }];
  t.match(await checkTarget('https://docs.example.com/hook', { allowPrivate: false, resolve }), { ok: false, reason: /reserved/ });
  t.match(await checkTarget('http://[5f00::1]/hook', { allowPrivate: false, resolve }), { ok: false });
});

t.test('given a name that resolves to several addresses, one refused address refuses the target', async (t) => {
  const resolve: Resolve = async () => [
    { address: '93.184.215.14', family: 4 },
    { address: '10.0.0.5', family: 4 },
  ];
  t.match(await checkTarget('https://mixed.example.com/x', { allowPrivate: false, resolve }), { ok: false });
  t.match(await checkTarget('https://mixed.example.com/x', { allowPrivate: true, resolve }), { ok: true, address: '93.184.215.14' });
  t.match(await checkTarget('http://[::1]:8080/x', { allowPrivate: false, resolve }), { ok: false }, 'an address literal is checked as it is');
});

t.test('SSRF targets are refused with 400 unless WEBHOOK_ALLOW_PRIVATE=true', async (t) => {
  const net = network();
  net.names.set('internal.example.com', ['10.0.0.7']);
  net.names.set('metadata.example.com', ['169.254.169.254']);
  net.names.set('mapped.example.com', ['::ffff:127.0.0.1']);
  net.names.set('ula.example.com', ['fd12:3456::1']);
  const { app, services } = await testApp(t, { webhooks: { resolve: net.resolve, send: net.send } });
  const biz = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  const create = (url: string) => app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { url, events: ['*'] } });
  for (const url of ['http://127.0.0.1:8080/hook', 'http://localhost/hook', 'https://internal.example.com/hook', 'http://metadata.example.com/latest', 'https://mapped.example.com/', 'https://ula.example.com/', 'http://[::1]/', 'http://[fe80::1]/', 'https://nowhere.example.com/']) {
    const reply = await create(url);
    t.match(reply.json(), { ...D3(400, 'validation_error'), details: [{ path: 'body.url' }] }, `refused: ${url}`);
  }
  t.match((await create('ftp://hooks.example.com/')).json(), D3(400, 'validation_error'), 'http(s) only');
  t.match((await create('https://user:pw@hooks.example.com/')).json(), D3(400, 'validation_error'), 'no credentials in the URL');
  // Text no URL parser takes: refused as such, never a 500.
  for (const url of ['notaurl', '', 'https://example.com:99999/', 'http://a b.com/', 'http://%00/', 'https://example.com:-1/']) {
    const reply = await create(url);
    t.match({ status: reply.statusCode, body: reply.json() }, { status: 400, body: { ...D3(400, 'validation_error'), details: [{ path: 'body.url' }] } }, `not a URL: ${JSON.stringify(url)}`);
  }
  const updated = await app.inject({ method: 'PUT', url: '/api/webhooks/whk_01JD3Q5V8K2M4N6P8R0S2T4V6Z', headers: biz.headers, payload: { url: 'http://a b.com/' } });
  t.equal(updated.statusCode, 400, 'nor on an update');
  t.equal((await create('https://hooks.example.com/feedback')).statusCode, 201, 'a public address is accepted');

  const open = await testApp(t, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, webhooks: { resolve: net.resolve, send: net.send } });
  const dev = await owner(open.services, 'business', [...WEBHOOK_SCOPES]);
  const reply = await open.app.inject({ method: 'POST', url: '/api/webhooks', headers: dev.headers, payload: { url: 'http://127.0.0.1:8080/hook', events: ['*'] } });
  t.equal(reply.statusCode, 201, 'allowed with the flag');
});

t.test('the target is checked again at delivery: a name that now resolves to a private address gets nothing', async (t) => {
  const net = network();
  const { app, services } = await testApp(t, { webhooks: { resolve: net.resolve, send: net.send, schedule: [10, 10, 10] } });
  const biz = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  const widget = await publishedWidget(app, biz);
  const created = await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { url: 'https://hooks.example.com/feedback', events: ['response.created'] } });
  const { id } = created.json();
  const submit = async () =>
    app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 4 }, _token: await tokenFor(app, 'widgets', widget) } });
  await submit();
  t.ok(await eventually(() => net.sent.length === 1));
  t.equal(net.sent[0]!.address, '93.184.215.14', 'sent to the address that was checked');

  net.names.set('hooks.example.com', ['127.0.0.1']);
  await submit();
  const log = async () => (await app.inject({ method: 'GET', url: `/api/webhooks/${id}/deliveries`, headers: biz.headers })).json().deliveries;
  // Queued once the dispatcher reads the second response, then tried.
  t.ok(await eventually(async () => (await log()).some((d: { attempts: number; last_error: string | null }) => d.attempts >= 1 && d.last_error !== null)));
  t.match((await log())[0], { status: /pending|failed/, last_status: null, last_error: /^refused: / });
  t.equal(net.sent.length, 1, 'nothing went to the private address');
});

t.test('a response erased while its delivery waits is never sent; the log keeps no answer', async (t) => {
  const net = network();
  net.answer.status = 503;
  const { app, services } = await testApp(t, { webhooks: { resolve: net.resolve, send: net.send, schedule: [20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20, 20] } });
  const biz = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  const widget = await publishedWidget(app, biz);
  const other = await publishedWidget(app, biz);
  const { id } = (await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { url: 'https://hooks.example.com/x', events: ['response.created', 'response.erased'] } })).json();
  const submit = async (target: string, comment: string) =>
    (await app.inject({ method: 'POST', url: `/api/widgets/${target}/submit`, payload: { answers: { rating: 2, comment }, _token: await tokenFor(app, 'widgets', target) } })).json().id as string;
  const erased = await submit(widget, 'secret complaint');
  const kept = await submit(other, 'kept remark');
  t.ok(await eventually(() => net.sent.length >= 2), 'the receiver is failing: the first delivery is being retried');

  const deleted = await app.inject({ method: 'DELETE', url: `/api/widgets/${widget}`, headers: biz.headers });
  t.equal(deleted.statusCode, 200);
  const after = net.sent.length;
  net.answer.status = 200;
  const log = async () => (await app.inject({ method: 'GET', url: `/api/webhooks/${id}/deliveries`, headers: biz.headers })).json().deliveries as Array<{ type: string; status: string }>;
  t.ok(await eventually(async () => (await log()).every((d) => d.status !== 'pending')));
  const bodies = net.sent.slice(after).map((r) => JSON.parse(r.body) as { type: string; data: { id?: string; response_ids?: string[] } });
  t.notOk(bodies.some((b) => b.type === 'response.created' && b.data.id === erased), 'the erased response did not go out after the erasure');
  t.ok(bodies.some((b) => b.type === 'response.created' && b.data.id === kept), 'the other response did');
  t.ok(bodies.some((b) => b.type === 'response.erased' && b.data.response_ids?.includes(erased)), 'the erasure itself was announced, by id');
  t.match(await log(), [{ type: 'response.erased', status: 'delivered' }, { type: 'response.created', status: 'delivered' }, { type: 'response.created', status: 'dropped' }]);
  const dump = JSON.stringify(await services.readModels.find('webhook_deliveries', {}));
  t.notOk(dump.includes('secret complaint') || dump.includes('kept remark'), 'no answer in the delivery log');

  const replay = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since: EARLY } });
  t.equal(replay.statusCode, 202);
  const sentBefore = net.sent.length;
  t.ok(await eventually(async () => (await log()).filter((d) => d.status === 'delivered').length >= 4));
  const replayed = net.sent.slice(sentBefore).map((r) => r.body);
  t.notOk(replayed.some((body) => body.includes('secret complaint')), 'a replay finds no erased response in the history');
});

t.test('webhooks are a Business feature with scopes of their own; another account sees none of them', async (t) => {
  const net = network();
  const { app, services } = await testApp(t, { webhooks: { resolve: net.resolve, send: net.send } });
  const biz = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  const pro = await owner(services, 'pro', [...WEBHOOK_SCOPES]);
  const reader = await owner(services, 'business', ['webhooks:read']);
  const stranger = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  const payload = { url: 'https://hooks.example.com/x', events: ['widget.*', 'response.created'] };
  t.match((await app.inject({ method: 'POST', url: '/api/webhooks', payload })).json(), D3(401, 'unauthorized'));
  t.match((await app.inject({ method: 'POST', url: '/api/webhooks', headers: pro.headers, payload })).json(), D3(403, 'plan_required'));
  t.match((await app.inject({ method: 'POST', url: '/api/webhooks', headers: reader.headers, payload })).json(), D3(403, 'insufficient_scope'));
  t.match((await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { ...payload, events: ['response.updated'] } })).json(), D3(400, 'validation_error'), 'unknown event types');
  t.match((await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { ...payload, events: [] } })).json(), D3(400, 'validation_error'));
  const { id } = (await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload })).json();
  await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { ...payload, description: 'second' } });

  const list = (await app.inject({ method: 'GET', url: '/api/webhooks?limit=1', headers: reader.headers })).json();
  t.match(list, { webhooks: [], pagination: { page: 1, limit: 1, total: 0 } }, "a reader of another account sees none of biz's");
  const mine = (await app.inject({ method: 'GET', url: '/api/webhooks?limit=1&page=2', headers: biz.headers })).json();
  t.match(mine, { webhooks: [{ id, events: ['widget.*', 'response.created'], enabled: true, disabled_reason: null }], pagination: { page: 2, limit: 1, total: 2, totalPages: 2 } });
  t.notOk(JSON.stringify(mine).includes('whsec_'), 'no secret in a list');

  for (const [method, url, body] of [
    ['GET', `/api/webhooks/${id}`],
    ['PUT', `/api/webhooks/${id}`, { enabled: false }],
    ['DELETE', `/api/webhooks/${id}`],
    ['GET', `/api/webhooks/${id}/deliveries`],
    ['POST', `/api/webhooks/${id}/replay`, { since: EARLY }],
    ['GET', '/api/webhooks/whk_missing'],
  ] as const) {
    t.match((await app.inject({ method, url, headers: stranger.headers, ...(body ? { payload: body } : {}) })).json(), D3(404, 'webhook_not_found'), `${method} ${url}`);
  }
  const changed = await app.inject({ method: 'PUT', url: `/api/webhooks/${id}`, headers: biz.headers, payload: { events: ['*'], description: 'all', enabled: false } });
  t.match(changed.json(), { id, events: ['*'], description: 'all', enabled: false, disabled_reason: null });
  t.match((await app.inject({ method: 'PUT', url: `/api/webhooks/${id}`, headers: biz.headers, payload: { url: 'http://10.0.0.1/' } })).json(), D3(400, 'validation_error'));
  t.strictSame((await app.inject({ method: 'DELETE', url: `/api/webhooks/${id}`, headers: biz.headers })).json(), { success: true });
  t.match((await app.inject({ method: 'GET', url: `/api/webhooks/${id}`, headers: biz.headers })).json(), D3(404, 'webhook_not_found'));
});
