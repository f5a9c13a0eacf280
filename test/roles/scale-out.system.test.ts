/**
 * Scale-out as an operator runs it: one `projector` process, a second one
 * standing by for its lease, and three `api` processes, all real processes
 * on one DATA_DIR with one SECRET (and one Redis when REDIS_URL is set).
 * kill -9 of the projector under load loses nothing acknowledged, the standby
 * takes over, and the read models equal a rebuild from the history.
 */
import { randomBytes } from 'node:crypto';
import t from 'tap';
import { buildApp } from '../../src/app.js';
import { openSqliteEventStore } from '../../src/infra/event-store/sqlite.js';
import { openSqliteReadModels } from '../../src/infra/read-models/sqlite.js';
import { PROJECTOR_LEASE } from '../../src/kernel/feed/lease.js';
import { owner, publishedWidget } from '../support/app.js';
import { eventually } from '../support/eventually.js';
import { startServer, type Server } from '../support/processes.js';
import { METRICS_TOKEN, metricsHeaders, snapshotReadModels, tempDir, testServices } from '../support/services.js';

const SECRET = 'scale-out-test-secret-0123456789abcdef';
const REDIS_URL = process.env.REDIS_URL;
/** The bound on a killed projector's replacement. */
const TAKEOVER_MS = 10_000;

const visitor = () => `10.${randomBytes(3).join('.')}`;

interface Reply {
  status: number;
  body: any;
}

async function call(server: Server, method: string, path: string, options: { body?: object; headers?: Record<string, string>; from?: string } = {}): Promise<Reply> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { 'x-forwarded-for': options.from ?? visitor(), ...(options.body ? { 'content-type': 'application/json' } : {}), ...options.headers },
    ...(options.body ? { body: JSON.stringify(options.body) } : {}),
  });
  return { status: response.status, body: await response.json() };
}

/** The projector lease and the positions of the shared store, read from this process as any other would. */
async function shared(dir: string) {
  const readModels = openSqliteReadModels(dir);
  const events = openSqliteEventStore(dir);
  try {
    const checkpoints = [...(await readModels.checkpoints()).values()];
    return { lease: await readModels.lease(PROJECTOR_LEASE), head: await events.headPosition(), lowest: checkpoints.reduce((a, b) => (b < a ? b : a), 2n ** 62n) };
  } finally {
    await readModels.close();
    await events.close();
  }
}

t.test('1 projector (and 1 standing by) + 3 api processes on one DATA_DIR', async (t) => {
  const dir = tempDir(t);
  const setup = await testServices(t, { dataDir: dir, env: { SECRET } });
  const setupApp = await buildApp(setup);
  const biz = await owner(setup);
  const guarded = await publishedWidget(setupApp, biz, { title: 'One answer each', settings: { prevent_duplicates: true } });
  const open = await publishedWidget(setupApp, biz, { title: 'Under load' });
  await setupApp.close();
  await setup.close();

  const env = { DATA_DIR: dir, SECRET, TRUST_PROXY: 'true', METRICS_TOKEN, ...(REDIS_URL ? { REDIS_URL, REDIS_TIMEOUT_MS: '2000' } : {}) };
  const servers: Server[] = [];
  t.teardown(() => Promise.all(servers.map((server) => server.stop())));
  const start = async (role: string) => {
    const server = await startServer({ ...env, ROLE: role });
    servers.push(server);
    return server;
  };
  const projector = await start('projector');
  t.ok(await eventually(async () => (await call(projector, 'GET', '/readyz', { headers: metricsHeaders })).body.lease?.held === true), 'the first projector holds the lease');
  const standby = await start('projector');
  const apis = await Promise.all([start('api'), start('api'), start('api')]);
  t.match((await call(standby, 'GET', '/readyz', { headers: metricsHeaders })).body, { role: 'projector', lease: { held: false } }, 'the second one stands by');
  for (const api of apis) t.ok(await eventually(async () => (await call(api, 'GET', '/readyz')).status === 200), 'an api process is ready');

  t.test('a token from one instance is accepted by another', async (t) => {
    for (const [i, issuer] of apis.entries()) {
      const { body } = await call(issuer, 'GET', `/api/widgets/${open}/token`);
      const other = apis[(i + 1) % apis.length]!;
      const sent = await call(other, 'POST', `/api/widgets/${open}/submit`, { body: { answers: { rating: 4 }, _token: body.token } });
      t.equal(sent.status, 200, `api ${i}'s token, submitted to api ${(i + 1) % apis.length}`);
    }
  });

  t.test('a duplicate is refused whichever instance gets it', async (t) => {
    const { body } = await call(apis[0]!, 'GET', `/api/widgets/${guarded}/token`);
    const submit = (api: Server, fingerprint: string) => call(api, 'POST', `/api/widgets/${guarded}/submit`, { body: { answers: { rating: 2 }, _token: body.token, metadata: { fingerprint } } });
    t.equal((await submit(apis[0]!, 'visitor-one')).status, 200, 'the first answer');
    for (const api of apis.slice(1)) t.match(await submit(api, 'visitor-one'), { status: 409, body: { code: 'duplicate_submission' } }, 'the same visitor again, on another instance');
    const racing = await Promise.all(apis.map((api) => submit(api, 'visitor-two')));
    t.same(racing.map((r) => r.status).sort(), [200, 409, 409], 'three at once on three instances: one is taken');
  });

  t.test("a write on an instance is readable on it when its reply arrives", async (t) => {
    for (let round = 0; round < 6; round++) {
      const api = apis[round % apis.length]!;
      const created = await call(api, 'POST', '/api/widgets', { headers: biz.headers, body: { widget_type: 'feedback', title: `Round ${round}` } });
      t.equal(created.status, 201);
      t.match(await call(api, 'GET', `/api/widgets/${created.body.id}`, { headers: biz.headers }), { status: 200, body: { title: `Round ${round}` } }, `round ${round}: the widget made`);
      const { body } = await call(api, 'GET', `/api/widgets/${open}/token`);
      const sent = await call(api, 'POST', `/api/widgets/${open}/submit`, { body: { answers: { rating: 5, comment: `round ${round}` }, _token: body.token } });
      const listed = await call(api, 'GET', `/api/widgets/${open}/responses?limit=1`, { headers: biz.headers });
      t.equal(listed.body.responses[0]?.id, sent.body.id, `round ${round}: the response sent`);
    }
  });

  t.test('rate limits are global with Redis', { skip: REDIS_URL ? false : 'REDIS_URL is not set, so there is no Redis to share counters in' }, async (t) => {
    const from = `198.18.${randomBytes(2).join('.')}`;
    const guess = (api: Server) => call(api, 'GET', '/api/widgets', { from, headers: { authorization: 'Bearer nope' } });
    for (const api of apis) for (let i = 0; i < 20; i++) await guess(api);
    for (const api of apis) t.match(await guess(api), { status: 429, body: { code: 'rate_limited' } }, 'the 61st from one address is refused on every instance');
  });

  /** Every submission answered 200 while the projector was killed. */
  const acked: string[] = [];

  t.test('kill -9 of the projector under load: the standby takes over, and goes on from where the killed one stopped', async (t) => {
    let stop = false;
    const tokens = await Promise.all(apis.map(async (api) => (await call(api, 'GET', `/api/widgets/${open}/token`)).body.token as string));
    const worker = async (n: number) => {
      for (let i = 0; !stop; i++) {
        const k = (n + i) % apis.length;
        const sent = await call(apis[k]!, 'POST', `/api/widgets/${open}/submit`, { body: { answers: { rating: 1 + (i % 5), comment: `load ${n}-${i}` }, _token: tokens[k] } });
        if (sent.status === 200) acked.push(sent.body.id);
        else t.fail(`a submission was refused: ${sent.status} ${JSON.stringify(sent.body)}`);
      }
    };
    const workers = Array.from({ length: 6 }, (_, n) => worker(n));
    t.ok(await eventually(() => acked.length >= 60, { everyMs: 5 }), 'submissions are acknowledged under load');
    const killedHolder = (await shared(dir)).lease!.holder;
    await projector.stop('SIGKILL');
    const killedAt = Date.now();
    const ackedBefore = acked.length;
    t.ok(await eventually(async () => (await shared(dir)).lease?.holder !== killedHolder, { everyMs: 20, deadlineMs: TAKEOVER_MS * 3 }), 'another projector took the lease');
    const takeoverMs = Date.now() - killedAt;
    t.ok(takeoverMs <= TAKEOVER_MS, `the standby took over ${takeoverMs} ms after the kill`);
    t.match((await call(standby, 'GET', '/readyz', { headers: metricsHeaders })).body, { lease: { held: true } }, 'the standby is the holder now');
    t.ok(await eventually(() => acked.length >= ackedBefore + 60, { everyMs: 5 }), 'submissions go on being acknowledged');
    stop = true;
    await Promise.all(workers);
    t.comment(`${acked.length} submissions acknowledged, ${ackedBefore} of them before the kill`);

    t.ok(await eventually(async () => {
      const { head, lowest } = await shared(dir);
      return lowest >= head;
    }), 'the read models reach the head');
    for (const api of apis) {
      const listed = await call(api, 'GET', `/api/widgets/${open}/responses?limit=1`, { headers: biz.headers });
      t.ok(listed.body.pagination.total >= acked.length, 'every api process lists every acknowledged response');
    }
  });

  t.test('nothing acknowledged is lost, and the read models equal a rebuild: every event applied once', async (t) => {
    for (const server of servers.splice(0)) t.equal((await server.stop()).code, server === projector ? null : 0, 'stops');
    const services = await testServices(t, { dataDir: dir, env: { SECRET } });
    const events = await services.events.readAll({ after: 0n, limit: 1_000_000 });
    const submitted = events.filter((e) => e.type === 'ResponseSubmitted').map((e) => e.data.response_id as string);
    t.equal(new Set(submitted).size, submitted.length, `${submitted.length} responses stored, none twice`);
    t.same(acked.filter((id) => !submitted.includes(id)), [], `all ${acked.length} acknowledged under the kill are among them`);
    const listed = (await services.readModels.find('responses', {}, {})).map((doc) => doc.id);
    t.same([...listed].sort(), [...submitted].sort(), 'the read model holds exactly the stored responses');
    const live = await snapshotReadModels(services);
    await services.projections.rebuild();
    t.same(await snapshotReadModels(services), live, 'equal to a rebuild from zero');
  });
});
