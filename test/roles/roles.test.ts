/**
 * ROLE in one test process: services of each role on one DATA_DIR, each with
 * its own connections, as separate processes would have them. (The same with
 * real processes, kill -9 included: scale-out.system.test.ts.)
 */
import t, { type Test } from 'tap';
import { checkpointKey } from '../../src/kernel/feed/projection.js';
import { widgetsProjection } from '../../projections/widgets.js';
import { openAccount } from '../../src/accounts/commands.js';
import type { CheckpointMove } from '../../src/infra/read-models/port.js';
import type { ServiceOptions, Services } from '../../src/services.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { metricsHeaders, tempDir } from '../support/services.js';

type Role = 'all' | 'api' | 'projector';
/** Split roles must share a secret (config refuses them without one). */
const SECRET = 'roles-test-secret-0123456789abcdefghij';
const FAST_LEASE = { ttlMs: 5000, everyMs: 10 };

const serve = (t: Test, dir: string, role: Role, options: ServiceOptions = {}) => testApp(t, { dataDir: dir, env: { ROLE: role, SECRET }, leaseTiming: FAST_LEASE, ...options });

/** Records every checkpoint a process's read-model store is asked to move. */
function checkpointMoves(services: Services): CheckpointMove[] {
  const moves: CheckpointMove[] = [];
  const write = services.readModels.write.bind(services.readModels);
  services.readModels.write = (ops, checkpoints = [], fence) => {
    moves.push(...checkpoints);
    return write(ops, checkpoints, fence);
  };
  return moves;
}

t.test('an api process applies nothing, and reads its own writes once the projector has applied them', async (t) => {
  const dir = tempDir(t);
  const projector = await serve(t, dir, 'projector');
  const { app, services } = await serve(t, dir, 'api');
  const moved = checkpointMoves(services);
  t.equal(services.projector, undefined, 'no projector lease is claimed');
  t.equal(projector.services.projector?.holding, true, 'the projector process holds it');

  const biz = await owner(services);
  const widget = await publishedWidget(app, biz, { title: 'Scaled', settings: { prevent_duplicates: true } });
  t.match((await app.inject({ method: 'GET', url: `/api/widgets/${widget}`, headers: biz.headers })).json(), { id: widget, title: 'Scaled', published: true }, 'the widget made through the api is read back on its reply');
  const token = await tokenFor(app, 'widgets', widget);
  const submitted = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 5 }, _token: token, metadata: { fingerprint: 'visitor-1' } } });
  t.equal(submitted.statusCode, 200);
  const listed = (await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json();
  t.same(listed.responses.map((r: { id: string }) => r.id), [submitted.json().id], 'and so is the response');
  const again = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 1 }, _token: token, metadata: { fingerprint: 'visitor-1' } } });
  t.equal(again.statusCode, 409, 'a duplicate is refused');

  t.same(moved, [], 'the api process moved no checkpoint');
  t.equal(services.projections.caughtUp, false, 'its runner never ran');
  const checkpoints = await services.readModels.checkpoints();
  t.equal(checkpoints.get(checkpointKey(widgetsProjection)), await services.events.headPosition(), 'the projector did the applying');
});

t.test('with no projector running, an api command replies when its wait runs out, and nothing is applied meanwhile', async (t) => {
  const dir = tempDir(t);
  const { services } = await serve(t, dir, 'api', { projectionWaitMs: 20 });
  const opened = await openAccount(services, { name: 'Waiting', plan: 'pro', scopes: ['forms:read'] });
  t.equal(await services.readModels.get('accounts', opened.account_id), null, 'the api process did not apply it');
  await serve(t, dir, 'projector');
  t.ok(await eventually(async () => (await services.readModels.get('accounts', opened.account_id)) !== null), 'a projector that starts later applies it');
});

t.test("an api process answers a deletion once the projector's erasure process has erased it, and 202 while none runs", async (t) => {
  const dir = tempDir(t);
  const projector = await serve(t, dir, 'projector');
  const { app, services } = await serve(t, dir, 'api');
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz);
  const token = await tokenFor(app, 'widgets', widget);
  const ids: string[] = [];
  for (let i = 0; i < 3; i++) ids.push((await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, payload: { answers: { rating: 3 }, _token: token } })).json().id);
  const erased = await app.inject({ method: 'DELETE', url: '/api/responses', headers: biz.headers, payload: { ids: ids.slice(0, 2), widgetId: widget } });
  t.match({ status: erased.statusCode, body: erased.json() }, { status: 200, body: { success: true, deleted: 2 } }, 'erased before the reply');
  t.same((await app.inject({ method: 'GET', url: `/api/widgets/${widget}/responses`, headers: biz.headers })).json().responses.map((r: { id: string }) => r.id), [ids[2]]);

  await projector.app.close();
  await projector.services.close();
  const impatient = await serve(t, dir, 'api', { erasureWaitMs: 20, projectionWaitMs: 20 });
  const pending = await impatient.app.inject({ method: 'DELETE', url: `/api/widgets/${widget}`, headers: biz.headers });
  t.match({ status: pending.statusCode, body: pending.json() }, { status: 202, body: { success: true, pending: true } }, 'no erasure process ran, so the api process answers it pending');
  t.same(await services.events.readStream(`response-${ids[2]}`).then((events) => events.length), 1, 'and erased nothing itself');
  await serve(t, dir, 'projector');
  t.ok(await eventually(async () => (await services.events.readStream(`response-${ids[2]}`)).length === 0), 'the next projector finishes it');
});

t.test('two all processes: one applies, the other serves and reads its writes; a stop hands the lease over', async (t) => {
  const dir = tempDir(t);
  const first = await serve(t, dir, 'all');
  const second = await serve(t, dir, 'all');
  t.same([first.services.projector?.holding, second.services.projector?.holding], [true, false], 'the first holds the lease, the second stands by');
  const moved = checkpointMoves(second.services);
  const biz = await owner(second.services);
  const widget = await publishedWidget(second.app, biz, { title: 'On the standby' });
  t.match((await second.app.inject({ method: 'GET', url: `/api/widgets/${widget}`, headers: biz.headers })).json(), { title: 'On the standby' }, 'the standby reads its writes');
  t.same(moved, [], 'without applying them');

  await first.app.close();
  await first.services.close();
  t.ok(await eventually(() => second.services.projector!.holding), 'the standby takes the lease at its next claim');
  await second.app.inject({ method: 'PUT', url: `/api/widgets/${widget}`, headers: biz.headers, payload: { title: 'Renamed' } });
  t.match((await second.app.inject({ method: 'GET', url: `/api/widgets/${widget}`, headers: biz.headers })).json(), { title: 'Renamed' }, 'and applies from there');
  t.ok(moved.length > 0);
});

t.test('a projector whose lease another process took over applies nothing more, and takes it back once free', async (t) => {
  const dir = tempDir(t);
  const projector = await serve(t, dir, 'projector');
  const { app, services } = await serve(t, dir, 'api', { projectionWaitMs: 50, erasureWaitMs: 50 });
  const biz = await owner(services);
  const holder = projector.services.projector!.holder;
  // What a standby does when it finds a holder gone: this one is not, and must stop.
  t.ok(await services.readModels.claimLease({ name: 'projector', holder: 'intruder', now: new Date(), ttlMs: 60_000, replacing: holder }));
  const created = await app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'feedback', title: 'While fenced out' } });
  t.equal(created.statusCode, 201, 'the command is recorded and replies when its wait runs out');
  t.equal(await services.readModels.get('widgets', created.json().id), null, 'the old holder did not apply it');
  t.ok(await eventually(() => !projector.services.projector!.holding), 'and stands by');
  t.equal((await services.readModels.lease('projector'))?.holder, 'intruder');
  await services.readModels.releaseLease('projector', 'intruder');
  t.ok(await eventually(async () => (await services.readModels.get('widgets', created.json().id)) !== null), 'once the lease is free it takes it back and applies from where it stopped');
  t.equal(projector.services.projector!.holding, true);
});

t.test('a projector process serves only health, readiness and metrics', async (t) => {
  const dir = tempDir(t);
  const holder = await serve(t, dir, 'projector');
  const standby = await serve(t, dir, 'projector');
  t.match((await holder.app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders })).json(), { status: 'ready', role: 'projector', lease: { held: true }, projections: { caught_up: true } });
  t.match((await standby.app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders })).json(), { status: 'ready', role: 'projector', lease: { held: false } }, 'a standby is ready: ready to take over');
  t.same((await holder.app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
  t.equal((await holder.app.inject({ method: 'GET', url: '/metrics', headers: metricsHeaders })).statusCode, 200);
  for (const [method, url] of [['GET', '/api/widgets'], ['POST', '/api/widgets'], ['GET', '/api/openapi.json'], ['GET', '/embed.js']] as const) {
    const reply = await holder.app.inject({ method, url });
    t.match({ status: reply.statusCode, body: reply.json() }, { status: 404, body: { code: 'not_found' } }, `${method} ${url} is not served`);
  }
});

t.test('an api process is ready once the stored checkpoints have reached the head as it was at its start', async (t) => {
  const dir = tempDir(t);
  const writer = await serve(t, dir, 'api', { projectionWaitMs: 0 });
  await openAccount(writer.services, { name: 'Unapplied', plan: 'free', scopes: ['forms:read'] });
  const { app } = await serve(t, dir, 'api');
  const before = await app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders });
  t.match({ status: before.statusCode, body: before.json() }, { status: 503, body: { code: 'not_ready', role: 'api', lease: null, projections: { caught_up: false, position: '0', behind: true } } });
  await serve(t, dir, 'projector');
  t.ok(await eventually(async () => (await app.inject({ method: 'GET', url: '/readyz' })).statusCode === 200), 'ready once a projector applied it');
  t.match((await app.inject({ method: 'GET', url: '/readyz', headers: metricsHeaders })).json(), { status: 'ready', projections: { caught_up: true, behind: false } });
});
