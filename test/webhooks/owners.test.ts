import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import t, { type Test } from 'tap';
import { WEBHOOK_DELIVERIES, type WebhookDelivery } from '../../projections/webhooks.js';
import { changePlan } from '../../src/accounts/commands.js';
import type { SendWebhook, WebhookRequest } from '../../src/webhooks/http.js';
import type { Resolve } from '../../src/webhooks/targets.js';
import { ALL_SCOPES, manualClock, owner, publishedWidget, testApp, tokenFor, type Owner } from '../support/app.js';
import { eventually } from '../support/eventually.js';

/** A time before everything a test records, as far back as a replay may reach and less. */
const EARLY = new Date(Date.now() - 86_400_000).toISOString();


const WEBHOOK_SCOPES = [...ALL_SCOPES, 'webhooks:read', 'webhooks:write'] as const;
type App = Awaited<ReturnType<typeof testApp>>['app'];

const resolve: Resolve = async () => [{ address: '93.184.215.14', family: 4 }];

/** A sender that records what went out, and runs `during` (once) while an attempt is out. */
function recorder() {
  const sent: WebhookRequest[] = [];
  const hooks: { during?: () => Promise<void> } = {};
  const send: SendWebhook = async (request) => {
    const during = hooks.during;
    hooks.during = undefined;
    await during?.();
    sent.push(request);
    return { status: 204 };
  };
  return { sent, send, hooks };
}

const submit = async (app: App, widget: string, comment: string) => {
  const reply = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 4, comment }, _token: await tokenFor(app, 'widgets', widget) } });
  if (reply.statusCode !== 200) throw new Error(reply.body);
  return reply.json().id as string;
};
const endpoint = async (app: App, who: Owner, events = ['response.created']) => {
  const reply = await app.inject({ method: 'POST', url: '/api/webhooks', headers: who.headers, payload: { url: 'https://hooks.example.com/x', events } });
  if (reply.statusCode !== 201) throw new Error(reply.body);
  return reply.json().id as string;
};
const deliveries = async (app: App, who: Owner, id: string) =>
  (await app.inject({ method: 'GET', url: `/api/webhooks/${id}/deliveries`, headers: who.headers })).json().deliveries as Array<{ type: string; status: string; attempts: number; last_status: number | null; last_error: string | null; next_attempt_at: string | null; last_attempt_at: string | null; replay: boolean }>;
/** The delivery log as stored, read without the API (whose key rate a poll would use up). */
const stored = async (services: Awaited<ReturnType<typeof testApp>>['services']) => (await services.readModels.find(WEBHOOK_DELIVERIES, {})) as unknown as WebhookDelivery[];
const comments = (sent: WebhookRequest[]) => sent.map((r) => (JSON.parse(r.body) as { data: { answers?: { comment?: string } } }).data.answers?.comment);

/** A Business owner's service with a recording sender, a published widget and an endpoint for response.created. */
async function businessWithEndpoint(t: Test) {
  const net = recorder();
  const { app, services } = await testApp(t, { webhooks: { resolve, send: net.send } });
  const biz = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  const widget = await publishedWidget(app, biz);
  const id = await endpoint(app, biz);
  return { net, app, services, biz, widget, id };
}

t.test('an account moved off Business has nothing more pushed; moved back, what happens then is pushed again', async (t) => {
  const { net, app, services, biz, widget } = await businessWithEndpoint(t);
  await submit(app, widget, 'while on business');
  t.ok(await eventually(() => net.sent.length === 1));

  await changePlan(services, biz.accountId, 'free');
  await submit(app, widget, 'while on free');
  await changePlan(services, biz.accountId, 'business');
  await submit(app, widget, 'back on business');
  t.ok(await eventually(() => net.sent.length === 2));
  t.same(comments(net.sent), ['while on business', 'back on business'], 'what was recorded while the account was on Free was not pushed');
});

t.test('a replay asked for while the endpoint is off is queued, and goes out once it is on', async (t) => {
  const { net, app, services, biz, widget, id } = await businessWithEndpoint(t);
  const off = await app.inject({ method: 'PUT', url: `/api/webhooks/${id}`, headers: biz.headers, payload: { enabled: false } });
  t.equal(off.statusCode, 200, off.body);
  await submit(app, widget, 'missed while off');
  const replay = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since: EARLY } });
  t.equal(replay.statusCode, 202, replay.body);
  t.ok(await eventually(async () => (await stored(services)).length === 1), 'queued');
  t.same(net.sent, [], 'nothing sent while the endpoint is off');
  const on = await app.inject({ method: 'PUT', url: `/api/webhooks/${id}`, headers: biz.headers, payload: { enabled: true } });
  t.equal(on.statusCode, 200, on.body);
  t.ok(await eventually(() => net.sent.length === 1));
  t.same(comments(net.sent), ['missed while off']);
  t.match(await deliveries(app, biz, id), [{ status: 'delivered', replay: true }]);
});

t.test('a delivery erased while its attempt is out, which the receiver took, is logged delivered, not dropped', async (t) => {
  const { net, app, services, biz, widget, id } = await businessWithEndpoint(t);
  net.hooks.during = async () => {
    const erased = await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { widgetId: widget, ids: [response] } });
    t.equal(erased.statusCode, 200, erased.body);
    t.ok(await eventually(async () => (await stored(services))[0]?.status === 'dropped'), 'the erasure dropped it meanwhile');
  };
  const response = await submit(app, widget, 'erased in flight');
  t.ok(await eventually(() => net.sent.length === 1));
  t.ok(await eventually(async () => (await stored(services))[0]?.status === 'delivered'));
  t.match(await deliveries(app, biz, id), [{ status: 'delivered', attempts: 1, last_status: 204, last_error: null, last_attempt_at: String }]);
});

t.test('a receiver that never answers: the attempt says it timed out, and the retry waits its full delay after it', async (t) => {
  const hanging = createServer(() => undefined);
  await new Promise<void>((done) => hanging.listen(0, '127.0.0.1', done));
  t.teardown(() => {
    hanging.closeAllConnections();
    hanging.close();
  });
  const port = (hanging.address() as AddressInfo).port;
  const { app, services } = await testApp(t, { env: { WEBHOOK_ALLOW_PRIVATE: 'true' }, webhooks: { schedule: [60_000], timeoutMs: 300 } });
  const biz = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  const widget = await publishedWidget(app, biz);
  const created = await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { url: `http://127.0.0.1:${port}/hook`, events: ['response.created'] } });
  t.equal(created.statusCode, 201, created.body);
  await submit(app, widget, 'into the void');
  t.ok(await eventually(async () => (await stored(services))[0]?.attempts === 1));
  const [delivery] = await deliveries(app, biz, created.json().id);
  t.match(delivery, { status: 'pending', last_status: null, last_error: 'no answer within 0.3 s' });
  const waited = Date.parse(delivery!.next_attempt_at!) - Date.parse(delivery!.last_attempt_at!);
  // 60,000 would be the delay counted from the attempt's start. Timers and the wall clock count whole milliseconds
  // apart, so a 300 ms timeout can read as 299 between two Date.now() calls; no less.
  t.ok(waited >= 60_299, `the retry is due ${waited} ms after the attempt began: its delay after the timeout`);
});

t.test('webhook bodies refuse keys they do not know, as every other body does', async (t) => {
  const { app, biz, id } = await businessWithEndpoint(t);
  const cases: Array<[string, string, Record<string, unknown>]> = [
    ['POST', '/api/webhooks', { url: 'https://hooks.example.com/x', events: ['response.created'], secret: 'whsec_x' }],
    ['PUT', `/api/webhooks/${id}`, { enable: false }],
    ['POST', `/api/webhooks/${id}/replay`, { since: '2026-01-01T00:00:00Z', bogus: 1 }],
  ];
  for (const [method, url, payload] of cases) {
    const reply = await app.inject({ method: method as 'POST', url, headers: biz.headers, payload });
    t.equal(reply.statusCode, 400, `${method} ${url} ${JSON.stringify(payload)}`);
    t.match(reply.json(), { code: 'validation_error' });
  }
  t.match((await app.inject({ method: 'GET', url: `/api/webhooks/${id}`, headers: biz.headers })).json(), { enabled: true }, 'the typo turned nothing off');
});

t.test('webhook URLs: spaces, control characters and port 0 are refused rather than quietly changed; an over-long one is told so', async (t) => {
  const net = recorder();
  const { app, services } = await testApp(t, { webhooks: { resolve, send: net.send } });
  const biz = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  for (const [url, message] of [
    ['https://hooks.example.com/x\nfoo', /spaces or control characters/],
    ['https://hooks.example.com/a b', /spaces or control characters/],
    [' https://hooks.example.com/x', /spaces or control characters/],
    ['https://hooks.example.com:0/x', /port 0/],
    [`https://hooks.example.com/${'a'.repeat(2000)}`, /at most 2000 characters/],
  ] as const) {
    const reply = await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { url, events: ['response.created'] } });
    t.equal(reply.statusCode, 400, JSON.stringify(url).slice(0, 60));
    t.match(reply.json(), { code: 'validation_error', details: [{ path: 'body.url', message }] });
  }
});

/** Whether one of the request's signatures is the secret's (Standard Webhooks' own signing; its verify would also judge the test clock's time). */
const signedBy = (request: WebhookRequest, secret: string) =>
  request.headers['webhook-signature']!.split(' ').includes(new Webhook(secret).sign(request.headers['webhook-id']!, new Date(Number(request.headers['webhook-timestamp']) * 1000), request.body));

t.test('a rotated secret: both sign for a day, then the new one alone; the old one then verifies nothing', async (t) => {
  const net = recorder();
  const clock = manualClock();
  const { app, services } = await testApp(t, { clock, webhooks: { resolve, send: net.send } });
  const biz = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  const widget = await publishedWidget(app, biz);
  const created = await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { url: 'https://hooks.example.com/x', events: ['response.created'] } });
  const { id, secret: first } = created.json() as { id: string; secret: string };
  const rotated = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/rotate-secret`, headers: biz.headers });
  t.equal(rotated.statusCode, 200, rotated.body);
  const { secret: second, previous_secret_until } = rotated.json() as { secret: string; previous_secret_until: string };
  t.match(second, /^whsec_/);
  t.not(second, first);
  t.equal(Date.parse(previous_secret_until) - clock().getTime(), 24 * 3_600_000, 'the previous secret signs for 24 hours more');

  await submit(app, widget, 'during the switch');
  t.ok(await eventually(() => net.sent.length === 1));
  const during = net.sent[0]!;
  t.equal(during.headers['webhook-signature']!.split(' ').length, 2, 'two signatures');
  for (const secret of [first, second]) t.ok(signedBy(during, secret), 'each secret signed it');

  clock.advance(24 * 3_600_000 + 1000);
  await submit(app, widget, 'after the switch');
  t.ok(await eventually(() => net.sent.length === 2));
  const after = net.sent[1]!;
  t.equal(after.headers['webhook-signature']!.split(' ').length, 1, 'one signature');
  t.ok(signedBy(after, second), 'the new secret signed it');
  t.notOk(signedBy(after, first), 'the old one did not');

  const elsewhere = await owner(services, 'business', [...WEBHOOK_SCOPES]);
  const foreign = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/rotate-secret`, headers: elsewhere.headers });
  t.equal(foreign.statusCode, 404, "another account's endpoint is not found");
  const unscoped = await owner(services, 'business', [...ALL_SCOPES]);
  t.equal((await app.inject({ method: 'POST', url: `/api/webhooks/${id}/rotate-secret`, headers: unscoped.headers })).statusCode, 403);
});

t.test('a replay since a time that is no time is told so once, not also that it is out of range', async (t) => {
  const { app, biz, id } = await businessWithEndpoint(t);
  const reply = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since: 'last week' } });
  t.equal(reply.statusCode, 400);
  t.same(reply.json().details, [{ path: 'body.since', message: 'must be an ISO 8601 time' }]);
  const late = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since: '9999-12-31T23:59:59-01:00' } });
  t.same(late.json().details, [{ path: 'body.since', message: 'must fall within years 0000 to 9999 once in UTC' }], 'a time out of range is told that alone');
});
