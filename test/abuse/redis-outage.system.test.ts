import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import t from 'tap';
import { eventually } from '../support/eventually.js';
import { freePort, startServer, type Server } from '../support/processes.js';
import { METRICS_TOKEN, metricsHeaders, tempDir } from '../support/services.js';

const missing = spawnSync('redis-server', ['--version']).error !== undefined;

/** A Redis server of the test's own, on its own port, so it can be stopped, killed and started again. */
function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
  // Even one started after the test's teardown (a test that timed out goes on running) must not outlive the run.
  const stop = () => void child.kill('SIGKILL');
  process.once('exit', stop);
  child.once('exit', () => process.off('exit', stop));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    const client = new Redis(port, '127.0.0.1', { lazyConnect: true, retryStrategy: () => 50, maxRetriesPerRequest: null });
    // Refused until the server listens; the ping waits in the client's queue meanwhile.
    client.on('error', () => {});
    client
      .ping()
      .then(() => client.quit())
      .then(() => resolve(child), reject);
  });
}

const killed = (child: ChildProcess, signal: NodeJS.Signals) =>
  new Promise<void>((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });

/**
 * A refused key: counted against the client address (60 a minute), and cheap
 * to serve. The address is sent as the request id too: logs never name
 * addresses, and a caller's id is logged beside the request's.
 */
const guess = (server: Server, address: string) =>
  fetch(`${server.url}/api/widgets`, { headers: { authorization: 'Bearer nope', 'x-forwarded-for': address, 'x-request-id': address } });

/**
 * `total` requests, `concurrency` at a time, each from its own address in
 * 10.`net`.0.0/16 (so none is rate limited); `at.run()` starts once `at.n`
 * requests have been answered, while the others go on. Answers the
 * addresses of the requests in flight then or started after.
 */
async function load(server: Server, net: number, total: number, concurrency: number, at: { n: number; run: () => Promise<void> }) {
  let started = 0;
  let answered = 0;
  const inFlight = new Set<string>();
  let measured: Set<string> | undefined;
  const statuses = new Set<number>();
  let trigger: Promise<void> | undefined;
  const worker = async () => {
    while (started < total) {
      const index = started++;
      const address = `10.${net}.${(index >> 8) & 255}.${index & 255}`;
      measured?.add(address);
      inFlight.add(address);
      const reply = await guess(server, address);
      await reply.arrayBuffer();
      inFlight.delete(address);
      statuses.add(reply.status);
      if (++answered === at.n) {
        measured = new Set(inFlight);
        trigger = at.run();
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await trigger;
  return { measured: measured!, statuses };
}

interface LogLine {
  msg: string;
  client_request_id?: string;
  responseTime?: number;
}

const logLines = (server: Server): LogLine[] =>
  server
    .log()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as LogLine);

/** How long the server took to answer each request from these addresses, as it logged (ms). */
async function responseTimes(server: Server, addresses: Set<string>): Promise<number[]> {
  const read = () =>
    logLines(server)
      .filter((line) => line.msg === 'request completed' && addresses.has(line.client_request_id!))
      .map((line) => line.responseTime!);
  // Every reply has arrived; its log line may still be on its way through the pipe.
  await eventually(() => read().length === addresses.size);
  return read();
}

const p99 = (values: number[]) => [...values].sort((a, b) => a - b)[Math.ceil(values.length * 0.99) - 1]!;

const logged = (server: Server, msg: string) => logLines(server).filter((line) => line.msg.startsWith(msg)).length;

const readyz = async (server: Server) => {
  const reply = await fetch(`${server.url}/readyz`, { headers: metricsHeaders });
  return { status: reply.status, body: (await reply.json()) as { redis: { reachable: boolean; rate_limits: string } | null } };
};

/**
 * The figure: while Redis is away, the p99 of requests stays under
 * 50 ms. The failures this bound tells apart cost far more per request:
 * waiting on the client's offline queue took about 4 s, and asking a Redis
 * that does not answer costs the 100 ms command timeout; a refused key
 * answered with counters in memory takes about a millisecond. The time is the
 * server's own (fastify's responseTime, from a request's arrival to its
 * reply): what the service makes a request wait, which is what Redis could
 * hold up, without the scheduling of the test's own client on a shared
 * machine, whose tails reach 50 ms and more even with Redis up. p99 rather
 * than the maximum, because the few requests in flight as Redis goes away may
 * each wait once for their command to fail. The server runs with a 1 s command
 * timeout rather than the default 100 ms: with Redis up, one command late by
 * 100 ms on a loaded machine would take it for away and change the counts
 * this test checks; the four requests in flight when it hangs then wait up to
 * a second each, which the p99 of a thousand leaves out.
 */
const BOUND_MS = 50;
const OUTAGE_REQUESTS = 1000;
const CONCURRENCY = 4;

t.test('Redis stopped or killed under load: requests stay fast, limits hold in memory, counting returns to Redis', { skip: missing ? 'redis-server is not installed, so there is no Redis to kill' : false }, async (t) => {
  const port = await freePort();
  let redis = await startRedis(port);
  t.teardown(() => void redis.kill('SIGKILL'));
  const probe = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => 50 });
  probe.on('error', () => {});
  t.teardown(() => probe.disconnect());
  // At info the server logs each request with its response time.
  const server = await startServer({ DATA_DIR: tempDir(t), REDIS_URL: `redis://127.0.0.1:${port}`, REDIS_TIMEOUT_MS: '1000', TRUST_PROXY: 'true', LOG_LEVEL: 'info', METRICS_TOKEN });
  t.teardown(() => server.stop('SIGKILL'));

  await probe.connect();
  for (let i = 0; i < 3; i++) await guess(server, '192.0.2.1');
  t.equal(await probe.get('feedback-rate-address:192.0.2.1'), '3', 'with Redis up, counters live in Redis');
  t.match(await readyz(server), { status: 200, body: { redis: { reachable: true, rate_limits: 'redis' } } });

  // A hung Redis: the connection stays open and commands are never answered.
  const hung = await load(server, 1, OUTAGE_REQUESTS + 200, CONCURRENCY, { n: 200, run: async () => void redis.kill('SIGSTOP') });
  t.same([...hung.statuses], [401], 'every request is served');
  t.ok(hung.measured.size >= OUTAGE_REQUESTS);
  const whileHung = await responseTimes(server, hung.measured);
  t.ok(p99(whileHung) < BOUND_MS, `p99 while Redis hangs: ${p99(whileHung).toFixed(1)} ms (under ${BOUND_MS} ms)`);
  t.match(await readyz(server), { status: 200, body: { redis: { reachable: false, rate_limits: 'memory' } } }, '/readyz reports it and stays ready');
  redis.kill('SIGCONT');
  t.ok(await eventually(async () => (await readyz(server)).body.redis?.reachable === true, { everyMs: 100 }), 'a Redis that answers again is used again');

  const killedAt = { n: 200, run: () => killed(redis, 'SIGKILL') };
  const outage = await load(server, 2, OUTAGE_REQUESTS + 200, CONCURRENCY, killedAt);
  t.same([...outage.statuses], [401], 'every request is served');
  t.ok(outage.measured.size >= OUTAGE_REQUESTS);
  const whileKilled = await responseTimes(server, outage.measured);
  t.ok(p99(whileKilled) < BOUND_MS, `p99 with Redis killed: ${p99(whileKilled).toFixed(1)} ms (under ${BOUND_MS} ms)`);
  t.match(await readyz(server), { status: 200, body: { redis: { reachable: false, rate_limits: 'memory' } } });

  for (let i = 0; i < 60; i++) t.equal((await guess(server, '192.0.2.2')).status, 401);
  const over = await guess(server, '192.0.2.2');
  t.equal(over.status, 429, 'the 61st guess from one address is refused: limits are counted in memory meanwhile');
  t.ok(Number(over.headers.get('retry-after')) > 0);

  t.equal(logged(server, 'Redis is unreachable'), 2, 'each outage is logged once');

  redis = await startRedis(port);
  t.ok(await eventually(async () => (await readyz(server)).body.redis?.reachable === true, { everyMs: 100 }), '/readyz sees Redis back');
  for (let i = 0; i < 5; i++) t.equal((await guess(server, '192.0.2.3')).status, 401);
  await eventually(async () => probe.status === 'ready');
  t.equal(await probe.get('feedback-rate-address:192.0.2.3'), '5', 'counting goes back to Redis');
  t.equal(logged(server, 'Redis is reachable again'), 2, 'and each return is logged once');
});
