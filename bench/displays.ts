/**
 * `npm run bench -- displays`: the displays-and-starts endpoint beside bare
 * fastify in the same run (goal: at least half its requests a second), then
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
import { openServices } from '../src/services.js';

const ROOT = new URL('../', import.meta.url).pathname;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
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

const start = (script: string, env: Record<string, string>): ChildProcess =>
  spawn(process.execPath, [join(ROOT, script)], { env: { ...tsx, ...env }, stdio: ['ignore', 'ignore', 'inherit'] });
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
  const server = start('src/main.ts', { DATA_DIR: dataDir, PORT: String(serverPort), LOG_LEVEL: 'warn', TRUST_PROXY: 'true', SECRET });
  const base = `http://127.0.0.1:${serverPort}`;
  await waitFor(`http://127.0.0.1:${barePort}/`);
  await waitFor(`${base}/readyz`);
  const tokens = await Promise.all(forms.map(async (id) => ((await (await fetch(`${base}/api/forms/${id}/token`)).json()) as { token: string }).token));
  let n = 0;
  const visit = () => {
    const i = n++;
    const object = i % OBJECTS;
    return {
      path: `/api/forms/${forms[object]}/events`,
      headers: { 'content-type': 'application/json', 'user-agent': CHROME, 'x-forwarded-for': address() },
      body: JSON.stringify({ _token: tokens[object], type: i % 3 === 0 ? 'start' : 'display', session: `bench-${i}-${Math.random().toString(36).slice(2)}`, metadata: { pageUrl: 'https://shop.example/?utm_source=bench' } }),
    };
  };
  log('load:');
  const body = JSON.stringify({ type: 'display', session: 'bench-session' });
  const ceiling = await load('bare fastify (ceiling), POST', `http://127.0.0.1:${barePort}/`, SECONDS, () => ({ headers: { 'content-type': 'application/json' }, body }));
  const floodStarted = Date.now();
  const events = await load(`POST /api/forms/:id/events, ${OBJECTS} forms, a new visit each`, base, SECONDS, visit);
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
  const sent = events.requests + flood.requests - events.non2xx - flood.non2xx;
  const rows = [ceiling, events, flood].map((s) => `| ${s.name} | ${s.rps} | ${s.p50} | ${s.p99} | ${s.requests}${s.non2xx ? ` (${s.non2xx} non-2xx)` : ''} |`);
  const goals = [
    { figure: 'events endpoint ÷ bare fastify', value: `${(ratio * 100).toFixed(1)} %`, target: '≥ 50 %', met: ratio >= 0.5 },
    { figure: `SignalsCounted events for ${sent} visits' signals over ${minutes} minutes started, ${OBJECTS} forms`, value: String(signals), target: `≤ ${OBJECTS * minutes} (one an object a minute)`, met: signals <= OBJECTS * minutes },
    // A request still in flight when a run stops is counted by the server but not by autocannon: at most one a connection a run.
    { figure: 'signals counted in the events, beside those autocannon saw answered 204', value: `${counted} beside ${sent}`, target: `all, and at most ${2 * CONNECTIONS} more (in flight at each run's end)`, met: counted >= sent && counted <= sent + 2 * CONNECTIONS },
  ];
  process.stdout.write(
    `\nmachine: ${machine}; ${CONNECTIONS} connections, ${SECONDS} s a scenario, flood ${FLOOD_SECONDS} s\n\n| scenario | req/s | p50 ms | p99 ms | requests |\n| --- | ---: | ---: | ---: | ---: |\n${rows.join('\n')}\n\n` +
      `| goal | figure | target | met |\n| --- | --- | --- | --- |\n${goals.map((g) => `| ${g.figure} | ${g.value} | ${g.target} | ${g.met ? 'yes' : '**no**'} |`).join('\n')}\n| events in the log after the run (objects, account, signals) | ${total} | | |\n\n`,
  );
  process.stdout.write(`${JSON.stringify({ machine, date: new Date().toISOString(), seconds: SECONDS, floodSeconds: FLOOD_SECONDS, scenarios: [ceiling, events, flood], signals, counted, sent, totalEvents: total, goals })}\n`);
}
