import { monitorEventLoopDelay } from 'node:perf_hooks';
import t, { type Test } from 'tap';
import { catalog } from '../../src/domain-events.js';
import type { EventStore, StoredEvent } from '../../src/infra/event-store/port.js';
import type { SendWebhook, WebhookRequest } from '../../src/webhooks/http.js';
import type { Resolve } from '../../src/webhooks/targets.js';
import { ALL_SCOPES, manualClock, owner as anyOwner, publishedWidget, testApp, tokenFor, type Owner } from '../support/app.js';
import { eventually } from '../support/eventually.js';

const DAY = 86_400_000;
const owner = (services: Parameters<typeof anyOwner>[0]) => anyOwner(services, 'business', [...ALL_SCOPES, 'webhooks:read', 'webhooks:write']);

/** A resolver that points every name at a public address, and a sender that records instead of connecting. */
function network() {
  const resolve: Resolve = async () => [{ address: '93.184.215.14', family: 4 }];
  const sent: WebhookRequest[] = [];
  const send: SendWebhook = async (request) => {
    sent.push(request);
    return { status: 204 };
  };
  return { resolve, send, sent };
}

type App = Awaited<ReturnType<typeof testApp>>['app'];

async function endpoints(app: App, who: Owner, n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const reply = await app.inject({ method: 'POST', url: '/api/webhooks', headers: who.headers, payload: { url: `https://hooks.example.com/${i}`, events: ['*'] } });
    if (reply.statusCode !== 201) throw new Error(reply.body);
    ids.push(reply.json().id as string);
  }
  return ids;
}

const replay = (app: App, who: Owner, id: string, since: string) => app.inject({ method: 'POST', url: `/api/webhooks/${id}/replay`, headers: who.headers, payload: { since } });

/**
 * The dispatcher's reads of the history, counted: every event any read
 * handed it (to replay, and to send), those read by account, and the
 * largest page (what a replay handles between two turns of the event loop
 * at most).
 */
function countReads(t: Test, dispatcher: object) {
  const holder = dispatcher as { events: EventStore };
  const store = holder.events;
  const seen: StoredEvent[] = [];
  const byAccount: StoredEvent[] = [];
  let largest = 0;
  const counted = <A extends unknown[]>(read: (...args: A) => Promise<StoredEvent[]>, into?: StoredEvent[]) => async (...args: A) => {
    const page = await read(...args);
    seen.push(...page);
    into?.push(...page);
    largest = Math.max(largest, page.length);
    return page;
  };
  holder.events = {
    ...store,
    kind: store.kind,
    atomicAcrossStreams: store.atomicAcrossStreams,
    append: store.append.bind(store),
    appendToStreams: store.appendToStreams.bind(store),
    streamState: store.streamState.bind(store),
    readFeed: store.readFeed.bind(store),
    subscribe: store.subscribe.bind(store),
    deleteStreams: store.deleteStreams.bind(store),
    expunge: store.expunge.bind(store),
    headPosition: store.headPosition.bind(store),
    endPosition: store.endPosition.bind(store),
    close: store.close.bind(store),
    readStream: counted(store.readStream.bind(store)),
    readAll: counted(store.readAll.bind(store)),
    readAccount: counted(store.readAccount.bind(store), byAccount),
  };
  t.teardown(() => void (holder.events = store));
  return { seen, byAccount, largest: () => largest };
}

t.test("a flood of replays from the year 2000 reads none of another tenant's 20,000 events, and works in pages between which others are served", async (t) => {
  const net = network();
  const { app, services } = await testApp(t, { webhooks: { resolve: net.resolve, send: net.send, schedule: [10] } });
  const flooder = await owner(services);
  const hooks = await endpoints(app, flooder, 30);
  const widget = await publishedWidget(app, flooder);
  for (let i = 0; i < 20; i++) {
    const reply = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 1 + (i % 5) }, _token: await tokenFor(app, 'widgets', widget) } });
    if (reply.statusCode !== 200) throw new Error(reply.body);
  }
  const own = (await services.events.readAccount(flooder.accountId, { limit: 10_000 })).length;

  // Another tenant's history: 20,000 votes on its poll, appended as the service appends them.
  const other = await owner(services);
  const created = await app.inject({ method: 'POST', url: '/api/polls', headers: other.headers, payload: { question: 'Best fruit?', options: [{ text: 'Apple' }, { text: 'Pear' }] } });
  const poll = created.json() as { id: string; options: Array<{ id: string }> };
  const meta = { occurred_at: new Date().toISOString(), actor: 'visitor' };
  for (let batch = 0; batch < 40; batch++) {
    const votes = Array.from({ length: 500 }, (_, i) =>
      catalog.serialize({ type: 'VoteCast', data: { vote_id: `vot_${batch}_${i}`, poll_id: poll.id, account_id: other.accountId, option_ids: [poll.options[i % 2]!.id], cast_at: meta.occurred_at } }, meta),
    );
    await services.events.append(`vote-${poll.id}-${batch}`, votes, 'no_stream');
  }
  const head = await services.events.headPosition();
  t.ok(await eventually(() => services.webhooks.position >= head && services.projections.position >= head && services.erasure.position >= head, { deadlineMs: 120_000 }), 'the dispatcher and the projections have caught up with the history');

  const reads = countReads(t, services.webhooks);

  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  // The other tenant keeps asking while the replays run.
  const latencies: number[] = [];
  let flooding = true;
  const asking = (async () => {
    while (flooding) {
      const started = performance.now();
      const reply = await app.inject({ method: 'GET', url: '/api/polls', headers: other.headers });
      latencies.push(performance.now() - started);
      if (reply.statusCode !== 200) throw new Error(reply.body);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
  })();

  const fromTheStart = await Promise.all(hooks.map((id) => replay(app, flooder, id, '2000-01-01T00:00:00Z')));
  t.same(new Set(fromTheStart.map((reply) => reply.statusCode)), new Set([400]), 'from 2000: refused, as too far back');
  t.match(fromTheStart[0]!.json(), { statusCode: 400, code: 'validation_error', details: [{ path: 'body.since', message: /within the last 30 days/ }] });

  const since = new Date(Date.now() - 30 * DAY + 60_000).toISOString();
  const replies: Awaited<ReturnType<typeof replay>>[] = [];
  for (const id of hooks) replies.push(await replay(app, flooder, id, since));
  const accepted = hooks.filter((_, i) => replies[i]!.statusCode === 202);
  t.equal(accepted.length, 10, 'as far back as it may: the first ten are taken');
  t.same(new Set(replies.slice(10).map((reply) => reply.json().code)), new Set(['replay_quota_exceeded']), 'the rest are over the quota');
  t.match(replies[10]!.json(), { statusCode: 429, code: 'replay_quota_exceeded', message: /10 replays in the last 24 hours/ });

  const last = await services.events.headPosition();
  t.ok(await eventually(() => services.webhooks.position >= last, { deadlineMs: 120_000 }), 'every replay handled');
  flooding = false;
  await asking;
  delay.disable();

  const foreign = reads.seen.filter((event) => event.data.account_id === other.accountId || event.streamId.startsWith(`vote-${poll.id}`));
  t.equal(foreign.length, 0, "none of the other tenant's events was read");
  t.ok(reads.byAccount.length <= accepted.length * (own + 10), `each replay read its account's history: ${reads.byAccount.length} events for ${accepted.length} replays of ${own}`);
  t.ok(reads.largest() <= 250, 'at most 250 events between two turns of the event loop');
  for (const id of accepted.slice(0, 1)) {
    const log = (await app.inject({ method: 'GET', url: `/api/webhooks/${id}/deliveries?limit=100`, headers: flooder.headers })).json().deliveries as Array<{ replay: boolean }>;
    t.equal(log.filter((d) => d.replay).length, log.filter((d) => !d.replay).length, 'each replay queued again what its endpoint was sent');
  }
  const sorted = [...latencies].sort((a, b) => a - b);
  // Figures, not assertions (timing varies with the machine's load): what the other tenant saw meanwhile.
  t.comment(`other tenant: ${latencies.length} requests, p99 ${sorted[Math.floor(sorted.length * 0.99)]?.toFixed(1)} ms; event loop delay max ${(delay.max / 1e6).toFixed(1)} ms, p99 ${(delay.percentile(99) / 1e6).toFixed(1)} ms`);
});

t.test('one replay per endpoint waits or runs at a time: another is 409 replay_pending until the dispatcher has handled it', async (t) => {
  const net = network();
  const { app, services } = await testApp(t, { webhooks: { resolve: net.resolve, send: net.send } });
  const biz = await owner(services);
  const [id, second] = await endpoints(app, biz, 2);
  const since = new Date(Date.now() - DAY).toISOString();
  await services.webhooks.stop();
  t.equal((await replay(app, biz, id!, since)).statusCode, 202);
  const again = await replay(app, biz, id!, since);
  t.match({ status: again.statusCode, body: again.json() }, { status: 409, body: { statusCode: 409, code: 'replay_pending', message: /queued or running/ } });
  const both = await Promise.all([replay(app, biz, second!, since), replay(app, biz, second!, since)]);
  t.same(both.map((reply) => reply.statusCode).sort(), [202, 409], 'of two at once, one is taken');
  services.webhooks.start();
  const head = await services.events.headPosition();
  t.ok(await eventually(() => services.webhooks.position >= head));
  t.equal((await replay(app, biz, id!, since)).statusCode, 202, 'handled: another may be asked for');
});

t.test('an account may ask for 10 replays in any 24 hours, all its endpoints together', async (t) => {
  const net = network();
  const clock = manualClock(new Date().toISOString());
  const { app, services } = await testApp(t, { clock, webhooks: { resolve: net.resolve, send: net.send } });
  const biz = await owner(services);
  const other = await owner(services);
  const ids = await endpoints(app, biz, 11);
  const [theirs] = await endpoints(app, other, 1);
  await services.webhooks.stop();
  const since = () => new Date(clock().getTime() - DAY).toISOString();
  for (const id of ids.slice(0, 10)) {
    t.equal((await replay(app, biz, id, since())).statusCode, 202);
    clock.advance(60_000);
  }
  const over = await replay(app, biz, ids[10]!, since());
  t.match({ status: over.statusCode, body: over.json() }, { status: 429, body: { code: 'replay_quota_exceeded', message: /next one is possible from/ } });
  t.equal((await replay(app, other, theirs!, since())).statusCode, 202, "another account's quota is its own");
  // The first of the ten leaves the window 24 hours after it was asked for.
  clock.advance(DAY - 10 * 60_000 + 1);
  t.equal((await replay(app, biz, ids[10]!, since())).statusCode, 202);
  t.equal((await replay(app, biz, ids[9]!, since())).json().code, 'replay_quota_exceeded', 'the other nine still count');
});

t.test('since may reach back 30 days and no more, and not past the request', async (t) => {
  const net = network();
  const clock = manualClock(new Date().toISOString());
  const { app, services } = await testApp(t, { clock, webhooks: { resolve: net.resolve, send: net.send } });
  const biz = await owner(services);
  const [id] = await endpoints(app, biz, 1);
  const now = clock().getTime();
  const far = await replay(app, biz, id!, new Date(now - 30 * DAY - 1).toISOString());
  t.match(far.json(), { statusCode: 400, code: 'validation_error', details: [{ path: 'body.since', message: `must be within the last 30 days (from ${new Date(now - 30 * DAY).toISOString()})` }] });
  const later = await replay(app, biz, id!, new Date(now + 1).toISOString());
  t.match(later.json(), { statusCode: 400, code: 'validation_error', details: [{ path: 'body.since', message: `must not be after the request (${new Date(now).toISOString()})` }] }, 'nor a time to come');
  t.equal((await replay(app, biz, id!, new Date(now - 30 * DAY).toISOString())).statusCode, 202, '30 days exactly is taken');
});
