import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import t, { type Test } from 'tap';
import { WEBHOOK_DELIVERIES, WEBHOOK_TARGETS, WEBHOOKS } from '../../projections/webhooks.js';
import { buildApp } from '../../src/app.js';
import type { ServiceOptions } from '../../src/services.js';
import { ALL_SCOPES, owner as anyOwner, publishedWidget, testApp, tokenFor, type Owner } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { tempDir, testServices } from '../support/services.js';

/** A time before everything a test records, as far back as a replay may reach and less. */
const EARLY = new Date(Date.now() - 86_400_000).toISOString();

interface Received {
  headers: Record<string, string>;
  body: string;
}

/** A receiver on loopback that answers 204, or `status` while set. */
async function receiver(t: Test, port = 0) {
  const received: Received[] = [];
  const state = { status: 204 };
  let server: Server | undefined;
  const listen = (at: number) =>
    new Promise<number>((resolve) => {
      server = createServer((request: IncomingMessage, response) => {
        let body = '';
        request.on('data', (chunk) => (body += chunk));
        request.on('end', () => {
          received.push({ headers: request.headers as Record<string, string>, body });
          response.statusCode = state.status;
          response.end();
        });
      });
      server.listen(at, '127.0.0.1', () => resolve((server!.address() as AddressInfo).port));
    });
  const close = () => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  const bound = await listen(port);
  t.teardown(close);
  return { received, state, url: `http://127.0.0.1:${bound}/hook`, port: bound, down: close, up: () => listen(bound) };
}

const env = { WEBHOOK_ALLOW_PRIVATE: 'true' };
const owner = (services: Parameters<typeof anyOwner>[0]) => anyOwner(services, 'business', [...ALL_SCOPES, 'webhooks:read', 'webhooks:write']);
/** Milliseconds: retries come at once in a test, and the receiver waits on conditions, not on time. */
// Quick retries, then a few slow ones: a receiver brought back after a stall of the test's own still finds the
// endpoint trying (past the last delay it is disabled).
const FAST: ServiceOptions['webhooks'] = { schedule: [20, 40, 80, 160, 320, 640, 1280, 5000, 5000, 5000, 5000] };

async function submitted(app: Awaited<ReturnType<typeof testApp>>['app'], widget: string, answers: Record<string, unknown>): Promise<string> {
  const reply = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers, _token: await tokenFor(app, 'widgets', widget) } });
  if (reply.statusCode !== 200) throw new Error(reply.body);
  return reply.json().id as string;
}

async function endpoint(app: Awaited<ReturnType<typeof testApp>>['app'], who: Owner, url: string, events: string[] = ['response.created']) {
  const reply = await app.inject({ method: 'POST', url: '/api/webhooks', headers: who.headers, payload: { url, events } });
  if (reply.statusCode !== 201) throw new Error(reply.body);
  return reply.json() as { id: string; secret: string };
}

t.test('a receiver on loopback gets response.created within 2 s, signed by the Standard Webhooks scheme', async (t) => {
  const hook = await receiver(t);
  const { app, services } = await testApp(t, { env, webhooks: FAST });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const created = await app.inject({ method: 'POST', url: '/api/webhooks', headers: biz.headers, payload: { url: hook.url, events: ['response.created'], description: 'crm' } });
  t.equal(created.statusCode, 201, created.body);
  t.match(created.json(), { id: /^whk_/, url: hook.url, events: ['response.created'], secret: /^whsec_[A-Za-z0-9+/=]+$/, enabled: true, created_at: String });
  const { id, secret } = created.json();

  const response = await submitted(app, widget, { rating: 5, comment: 'Fast setup' });
  t.ok(await eventually(() => hook.received.length > 0, { deadlineMs: 2000 }), 'arrived within 2 s of the submission');
  const [message] = hook.received;
  const payload = new Webhook(secret).verify(message!.body, message!.headers) as { type: string; id: string; created_at: string; data: Record<string, unknown> };
  t.equal(payload.type, 'response.created');
  t.match(payload, { id: /^evt_/, created_at: String, data: { id: response, widget_id: widget, answers: { rating: 5, comment: 'Fast setup' }, submitted_at: String } });
  t.notOk('account_id' in payload.data, 'nothing kept inside goes out');
  t.match(message!.headers, { 'webhook-id': /^msg_/, 'webhook-timestamp': /^\d+$/, 'content-type': 'application/json' });
  t.throws(() => new Webhook(secret).verify(message!.body.replace('Fast', 'Slow'), message!.headers), 'an altered body fails the signature');

  const view = (await app.inject({ method: 'GET', url: `/api/webhooks/${id}`, headers: biz.headers })).json();
  t.notOk('secret' in view, 'the secret is shown once');
  t.ok(await eventually(async () => (await app.inject({ method: 'GET', url: `/api/webhooks/${id}/deliveries`, headers: biz.headers })).json().deliveries[0]?.status === 'delivered'));
  const log = (await app.inject({ method: 'GET', url: `/api/webhooks/${id}/deliveries`, headers: biz.headers })).json();
  t.match(log.deliveries, [{ event_id: payload.id, type: 'response.created', status: 'delivered', attempts: 1, last_status: 204, next_attempt_at: null, replay: false }]);
  t.match(log.pagination, { page: 1, total: 1 });

  const everything = JSON.stringify([
    ...(await services.readModels.find(WEBHOOKS, {})),
    ...(await services.readModels.find(WEBHOOK_TARGETS, {})),
    ...(await services.readModels.find(WEBHOOK_DELIVERIES, {})),
  ]);
  t.notOk(everything.includes(secret.slice(6)), 'no read model holds the secret');
  t.notOk(everything.includes('Fast setup'), 'the delivery log holds no answer');
  t.notOk(JSON.stringify((await services.events.readAll({ limit: 1000 })).map((e) => [e.data, e.metadata])).includes(secret.slice(6)), 'nor does the history');
});

t.test('with the receiver down, retries arrive once it is back; a failing endpoint holds up no other', async (t) => {
  const down = await receiver(t);
  const healthy = await receiver(t);
  const { app, services } = await testApp(t, { env, webhooks: FAST });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const failing = await endpoint(app, biz, down.url);
  await endpoint(app, biz, healthy.url);
  await down.down();

  const first = await submitted(app, widget, { rating: 1 });
  const second = await submitted(app, widget, { rating: 2 });
  t.ok(await eventually(() => healthy.received.length === 2), 'the healthy endpoint got both');
  t.strictSame(healthy.received.map((r) => JSON.parse(r.body).data.id), [first, second], 'in feed order');
  const log = async () => (await app.inject({ method: 'GET', url: `/api/webhooks/${failing.id}/deliveries`, headers: biz.headers })).json().deliveries;
  t.ok(await eventually(async () => (await log()).some((d: { attempts: number }) => d.attempts >= 2)), 'the failing one is retried');
  const waiting = await log();
  t.match(waiting, [
    { status: 'pending', attempts: 0, last_status: null },
    { status: 'pending', last_status: null, last_error: /no answer/, next_attempt_at: String },
  ], 'newest first; the second waits behind the first');

  await down.up();
  t.ok(await eventually(() => down.received.length === 2), 'both arrive once it is back');
  t.strictSame(down.received.map((r) => JSON.parse(r.body).data.id), [first, second], 'in feed order');
  t.ok(new Webhook(failing.secret).verify(down.received[0]!.body, down.received[0]!.headers));
  t.ok(await eventually(async () => (await log()).every((d: { status: string }) => d.status === 'delivered')));
  t.ok((await log())[1].attempts >= 3, 'the log counts every attempt');
});

t.test('delivery state survives a restart: attempts go on from where they were', async (t) => {
  const hook = await receiver(t);
  await hook.down();
  const dataDir = tempDir(t);
  const first = await testServices(t, { dataDir, env, webhooks: { schedule: [20, 40, 80, 160, 320, 640, 1280, 2560] } });
  await first.start();
  const app = await buildApp(first);
  const biz = await owner(first);
  const widget = await publishedWidget(app, biz);
  const { id } = await endpoint(app, biz, hook.url);
  await submitted(app, widget, { rating: 3 });
  t.ok(await eventually(async () => Number((await first.readModels.find(WEBHOOK_DELIVERIES, {}))[0]?.attempts ?? 0) >= 2));
  await app.close();
  await first.close();
  const before = Number((await (await testServices(t, { dataDir, env })).readModels.find(WEBHOOK_DELIVERIES, {}))[0]!.attempts);

  await hook.up();
  const second = await testServices(t, { dataDir, env, webhooks: FAST });
  await second.start();
  t.ok(await eventually(() => hook.received.length === 1), 'delivered after the restart');
  t.ok(await eventually(async () => (await second.readModels.find(WEBHOOK_DELIVERIES, { endpoint_id: id }))[0]?.status === 'delivered'));
  const [delivery] = await second.readModels.find(WEBHOOK_DELIVERIES, { endpoint_id: id });
  t.equal(delivery!.attempts, before + 1, 'the count went on');
});

t.test('an endpoint failing for the whole schedule is disabled, and says so; enabling it again sends what follows', async (t) => {
  const hook = await receiver(t);
  hook.state.status = 500;
  const { app, services } = await testApp(t, { env, webhooks: { schedule: [10, 20] } });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const { id } = await endpoint(app, biz, hook.url);
  await submitted(app, widget, { rating: 1 });
  const waiting = await submitted(app, widget, { rating: 2 });
  const get = async () => (await app.inject({ method: 'GET', url: `/api/webhooks/${id}`, headers: biz.headers })).json();
  t.ok(await eventually(async () => (await get()).enabled === false));
  t.match(await get(), { enabled: false, disabled_reason: 'failing' });
  t.equal(hook.received.length, 3, 'one attempt, then one per entry of the schedule');
  t.match((await app.inject({ method: 'GET', url: `/api/webhooks/${id}/deliveries`, headers: biz.headers })).json().deliveries, [
    { status: 'pending', attempts: 0 },
    { status: 'failed', attempts: 3, last_status: 500, next_attempt_at: null },
  ]);

  hook.state.status = 200;
  const enabled = await app.inject({ method: 'PUT', url: `/api/webhooks/${id}`, headers: biz.headers, payload: { enabled: true } });
  t.match(enabled.json(), { enabled: true, disabled_reason: null });
  t.ok(await eventually(() => hook.received.some((r) => JSON.parse(r.body).data.id === waiting)), 'what waited behind the failure goes out');
  const next = await submitted(app, widget, { rating: 5 });
  t.ok(await eventually(() => hook.received.some((r) => JSON.parse(r.body).data.id === next)));
});

t.test('a replay of a sealed history starts after the last seal before its time, and misses nothing recorded from then', async (t) => {
  const hook = await receiver(t);
  // No slack: the seal recorded just before `since` is where the replay starts.
  const { app, services } = await testApp(t, { env, webhooks: { ...FAST, replayClockSlackMs: 0 } });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const { id } = await endpoint(app, biz, hook.url);
  const rest = () => new Promise((resolve) => setTimeout(resolve, 5));
  const before = [await submitted(app, widget, { rating: 1 }), await submitted(app, widget, { rating: 2 })];
  t.equal(await services.seals.sealAll(), 1);
  await rest();
  const since = new Date().toISOString();
  await rest();
  // Sealed after `since`: the replay must not start after this seal's events.
  const after = [await submitted(app, widget, { rating: 3 })];
  t.equal(await services.seals.sealAll(), 1);
  after.push(await submitted(app, widget, { rating: 4 }));
  t.ok(await eventually(() => hook.received.length === 4));

  const replay = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since } });
  t.equal(replay.statusCode, 202, replay.body);
  t.ok(await eventually(() => hook.received.length === 6));
  t.strictSame(hook.received.slice(4).map((r) => JSON.parse(r.body).data.id), after, 'what was recorded from `since`, sealed or not, and nothing before it');
  const all = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since: EARLY } });
  t.equal(all.statusCode, 202, all.body);
  t.ok(await eventually(() => hook.received.length === 10));
  t.strictSame(hook.received.slice(6).map((r) => JSON.parse(r.body).data.id), [...before, ...after], 'from before the first seal: the whole history');
});

t.test('replay re-sends history from a time, with the original webhook-id', async (t) => {
  const hook = await receiver(t);
  const { app, services } = await testApp(t, { env, webhooks: FAST });
  const biz = await owner(services);
  const other = await owner(services);
  const widget = await publishedWidget(app, biz);
  await publishedWidget(app, other);
  const start = new Date().toISOString();
  const { id, secret } = await endpoint(app, biz, hook.url, ['response.*', 'widget.*']);
  const responses = [await submitted(app, widget, { rating: 4 }), await submitted(app, widget, { rating: 5 })];
  t.ok(await eventually(() => hook.received.length === 2));
  const originals = hook.received.map((r) => r.headers['webhook-id']);

  const replay = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since: EARLY } });
  t.equal(replay.statusCode, 202, replay.body);
  t.match(replay.json(), { replay: true, since: EARLY });
  // Everything of the account from the start: the widget's creation and publication too, never the other account's.
  t.ok(await eventually(() => hook.received.length === 6));
  const replayed = hook.received.slice(2).map((r) => new Webhook(secret).verify(r.body, r.headers) as { type: string; data: { id: string } });
  t.strictSame(replayed.map((p) => p.type), ['widget.created', 'widget.published', 'response.created', 'response.created'], 'in feed order');
  t.strictSame(replayed.slice(2).map((p) => p.data.id), responses);
  t.strictSame(hook.received.slice(4).map((r) => r.headers['webhook-id']), originals, 'receivers can dedupe');
  t.ok(await eventually(async () => (await app.inject({ method: 'GET', url: `/api/webhooks/${id}/deliveries`, headers: biz.headers })).json().deliveries.filter((d: { replay: boolean; status: string }) => d.replay && d.status === 'delivered').length === 4));

  const later = await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since: start } });
  t.equal(later.statusCode, 202);
  t.ok(await eventually(() => hook.received.length === 8), 'from a later time, only what followed it');
  t.match((await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since: 'last week' } })).json(), { statusCode: 400, code: 'validation_error' });
  t.match((await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: biz.headers, payload: { since: '0000-01-01T00:00:00+00:01' } })).json(), { statusCode: 400, code: 'validation_error', details: [{ path: 'body.since', message: /years 0000 to 9999/ }] });
  t.match((await app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: other.headers, payload: { since: start } })).json(), { statusCode: 404, code: 'webhook_not_found' });
});
