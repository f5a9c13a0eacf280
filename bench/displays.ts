/**
 * `npm run bench -- displays`: the displays-and-starts endpoint beside bare
 * fastify in the same run (goal: at least half its requests a second): both
 * sent the same requests, warmed up first, then measured in turn
 * (BENCH_ROUNDS of BENCH_SECONDS each) so the machine's load falls on both; then
 * the event log's growth under a flood of them: every request a new visit
 * (its own session and address) to one of OBJECTS forms, for
 * BENCH_FLOOD_SECONDS (default 60). The server is then stopped (which writes
 * the minute under way) and the SignalsCounted events counted: at most one
 * an object a minute, whatever the number of requests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { pino } from 'pino';
import { openAccount } from '../src/accounts/commands.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { issueEmbedToken } from '../src/embeddables/access.js';
import { deriveKeys } from '../src/infra/keys.js';
import { openServices } from '../src/services.js';

const ROOT = new URL('../', import.meta.url).pathname;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
/** Each server's first seconds (the JIT compiling the paths a request takes) are not measured. */
const WARMUP_SECONDS = Number(process.env.BENCH_WARMUP_SECONDS ?? 5);
/** The two are measured in turn, this many times each, so a change in the machine's load falls on both. */
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const FLOOD_SECONDS = Number(process.env.BENCH_FLOOD_SECONDS ?? 60);
const OBJECTS = 20;
const CONNECTIONS = 32;
const SECRET = 'bench-secret-0123456789abcdefghijklmnopqrstuvwxyz';
const tsx = { ...process.env, NODE_OPTIONS: '--import=tsx' };
const log = (line: string) => process.stderr.write(`${line}\n`);
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

async function waitFor(url: string, timeoutMs = 120_000): Promise<void> {
  const started = performance.now();
  for (;;) {
    try {
      if ((await fetch(url)).ok) return;
    } catch {
      // not listening yet
    }
    if (performance.now() - started > timeoutMs) throw new Error(`${url} did not answer`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** BENCH_CPU_PROF=<dir>: the service writes a CPU profile of the run there (node --cpu-prof) as it stops. */
const PROFILE = process.env.BENCH_CPU_PROF;
const start = (script: string, env: Record<string, string>, profile = false): ChildProcess =>
  spawn(process.execPath, [...(profile && PROFILE ? ['--cpu-prof', `--cpu-prof-dir=${PROFILE}`] : []), join(ROOT, script)], { env: { ...tsx, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
const port = () => 20_000 + Math.floor(Math.random() * 20_000);
const address = () => `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}`;

interface Figures {
  name: string;
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
}

async function load(name: string, url: string, seconds: number, requestFactory: () => Partial<autocannon.Request>): Promise<Figures> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: seconds, method: 'POST', requests: [{ setupRequest: (request: autocannon.Request) => ({ ...request, ...requestFactory() }) }] });
  const figures = { name, rps: Math.round(result.requests.average), p50: result.latency.p50, p99: result.latency.p99, requests: result.requests.total, non2xx: result.non2xx };
  log(`  ${name}: ${figures.rps} req/s, p50 ${figures.p50} ms, p99 ${figures.p99} ms${figures.non2xx ? `, ${figures.non2xx} non-2xx` : ''}`);
  return figures;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export async function displaysOnly(): Promise<void> {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  log(`machine: ${machine}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-displays-'));
  const config = loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SECRET });
  const services = await openServices(config, { logger: pino({ level: 'silent' }) });
  const app = await buildApp(services);
  const account = await openAccount(services, { name: 'Displays', plan: 'business', scopes: ['forms:read', 'forms:write'] });
  const headers = { authorization: `Bearer ${account.api_key}` };
  const forms: string[] = [];
  for (let i = 0; i < OBJECTS; i++) {
    const id = (await app.inject({ method: 'POST', url: '/api/forms', headers, payload: { title: `Form ${i}`, questions: [{ id: 'nps', type: 'nps', title: 'How likely?' }] } })).json().id as string;
    await app.inject({ method: 'PUT', url: `/api/forms/${id}`, headers, payload: { published: true } });
    forms.push(id);
  }
  await services.projections.catchUp();
  await app.close();
  await services.close();

  const barePort = port();
  const bare = start('bench/bare.ts', { PORT: String(barePort) });
  const serverPort = port();
  const server = start('src/main.ts', { DATA_DIR: dataDir, PORT: String(serverPort), LOG_LEVEL: 'info', TRUST_PROXY: 'true', SECRET }, true);
  const base = `http://127.0.0.1:${serverPort}`;
  await waitFor(`http://127.0.0.1:${barePort}/`);
  await waitFor(`${base}/readyz`);
  // A visit's page fetches a token and sends its display and its start with it: a token serves two
  // signals, as the server sees them, minted here with the server's key so no request is spent on it.
  const tokenKey = deriveKeys(SECRET).embedTokens;
  const tokens: string[] = [];
  let minted = 0;
  let n = 0;
  const visit = () => {
    const i = n++;
    const object = i % OBJECTS;
    if (Math.floor(i / OBJECTS) % 2 === 0) tokens[object] = issueEmbedToken(tokenKey, 'form', forms[object]!, new Date(Date.now() - (minted++ % 60_000)));
    return {
      path: `/api/forms/${forms[object]}/events`,
      headers: { 'content-type': 'application/json', 'user-agent': CHROME, 'x-forwarded-for': address() },
      body: JSON.stringify({ _token: tokens[object], type: i % 3 === 0 ? 'start' : 'display', session: `bench-${i}-${Math.random().toString(36).slice(2)}`, metadata: { pageUrl: 'https://shop.example/?utm_source=bench' } }),
    };
  };
  // Both servers get the same requests (headers and body): the ceiling is fastify parsing them and answering at once.
  const bareVisit = () => ({ ...visit(), path: '/' });
  log(`warm-up (${WARMUP_SECONDS} s each, not measured):`);
  await load('bare fastify, warm-up', `http://127.0.0.1:${barePort}/`, WARMUP_SECONDS, bareVisit);
  const floodStarted = Date.now();
  const warmup = await load('events endpoint, warm-up', base, WARMUP_SECONDS, visit);
  log(`load, alternating, ${ROUNDS} rounds of ${SECONDS} s each:`);
  const rounds: Array<{ bare: Figures; events: Figures }> = [];
  for (let round = 1; round <= ROUNDS; round++) {
    const bareRound = await load(`round ${round}: bare fastify (ceiling), POST`, `http://127.0.0.1:${barePort}/`, SECONDS, bareVisit);
    const eventsRound = await load(`round ${round}: POST /api/forms/:id/events, ${OBJECTS} forms, a new visit each`, base, SECONDS, visit);
    rounds.push({ bare: bareRound, events: eventsRound });
  }
  const sum = (pick: (round: { bare: Figures; events: Figures }) => Figures, name: string): Figures => {
    const all = rounds.map(pick);
    const requests = all.reduce((s, f) => s + f.requests, 0);
    return { name, rps: Math.round(requests / (SECONDS * ROUNDS)), p50: Math.max(...all.map((f) => f.p50)), p99: Math.max(...all.map((f) => f.p99)), requests, non2xx: all.reduce((s, f) => s + f.non2xx, 0) };
  };
  const ceiling = sum((r) => r.bare, `bare fastify (ceiling), POST, ${ROUNDS} × ${SECONDS} s`);
  const events = sum((r) => r.events, `POST /api/forms/:id/events, ${OBJECTS} forms, a new visit each, ${ROUNDS} × ${SECONDS} s`);
  const flood = await load(`flood: the same for ${FLOOD_SECONDS} s`, base, FLOOD_SECONDS, visit);
  const floodEnded = Date.now();
  server.kill('SIGTERM');
  bare.kill('SIGTERM');
  await Promise.all([once(server, 'exit'), once(bare, 'exit')]);

  const after = await openServices(config, { logger: pino({ level: 'silent' }) });
  let signals = 0;
  let counted = 0;
  let total = 0;
  for (let position = 0n; ; ) {
    const page = await after.events.readAll({ after: position, limit: 5000 });
    if (page.length === 0) break;
    for (const event of page) {
      total++;
      if (event.type !== 'SignalsCounted') continue;
      signals++;
      const data = event.data as { display: { total: number }; start: { total: number } };
      counted += data.display.total + data.start.total;
    }
    position = page.at(-1)!.position;
  }
  await after.close();
  rmSync(dataDir, { recursive: true, force: true });

  const minutes = Math.ceil((floodEnded - floodStarted) / 60_000) + 1;
  const ratio = events.rps / ceiling.rps;
  const roundRatios = rounds.map((r) => r.events.requests / r.bare.requests);
  const eventRuns = [warmup, events, flood];
  const sent = eventRuns.reduce((s, f) => s + f.requests - f.non2xx, 0);
  const inFlight = CONNECTIONS * (ROUNDS + 2);
  const rows = [...rounds.flatMap((r) => [r.bare, r.events]), ceiling, events, flood].map((s) => `| ${s.name} | ${s.rps} | ${s.p50} | ${s.p99} | ${s.requests}${s.non2xx ? ` (${s.non2xx} non-2xx)` : ''} |`);
  const goals = [
    {
      figure: `events endpoint ÷ bare fastify, requests over the ${ROUNDS} rounds (each round: ${roundRatios.map((r) => `${(r * 100).toFixed(0)} %`).join(', ')}; median ${(median(roundRatios) * 100).toFixed(0)} %)`,
      value: `${(ratio * 100).toFixed(1)} %`,
      target: '≥ 50 %',
      met: ratio >= 0.5,
    },
    { figure: `SignalsCounted events for ${sent} visits' signals over ${minutes} minutes started, ${OBJECTS} forms`, value: String(signals), target: `≤ ${OBJECTS * minutes} (one an object a minute)`, met: signals <= OBJECTS * minutes },
    // A request still in flight when a run stops is counted by the server but not by autocannon: at most one a connection a run.
    { figure: 'signals counted in the events, beside those autocannon saw answered 204', value: `${counted} beside ${sent}`, target: `all, and at most ${inFlight} more (in flight at each run's end)`, met: counted >= sent && counted <= sent + inFlight },
  ];
  process.stdout.write(
    `\nmachine: ${machine}; load average ${loadavg().map((l) => l.toFixed(1)).join(' ')}; ${CONNECTIONS} connections, ${WARMUP_SECONDS} s warm-up, ${ROUNDS} rounds of ${SECONDS} s, flood ${FLOOD_SECONDS} s\n\n| scenario | req/s | p50 ms | p99 ms | requests |\n| --- | ---: | ---: | ---: | ---: |\n${rows.join('\n')}\n\n` +
      `| goal | figure | target | met |\n| --- | --- | --- | --- |\n${goals.map((g) => `| ${g.figure} | ${g.value} | ${g.target} | ${g.met ? 'yes' : '**no**'} |`).join('\n')}\n| events in the log after the run (objects, account, signals) | ${total} | | |\n\n`,
  );
  process.stdout.write(`${JSON.stringify({ machine, date: new Date().toISOString(), seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, rounds: ROUNDS, floodSeconds: FLOOD_SECONDS, scenarios: [...rounds.flatMap((r) => [r.bare, r.events]), ceiling, events, flood], signals, counted, sent, totalEvents: total, goals })}\n`);
}
