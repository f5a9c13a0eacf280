/**
 * `npm run bench -- rebuild`: the rebuild of a store written the way the
 * service writes it. The store is seeded through the service itself (its
 * submit routes, commands and appends, with the projections, erasure
 * process, webhooks and sealer running as in the server, so a seal follows
 * every 1,000 events), by Business-plan visitors answering a widget and a
 * form. The same store is copied at BENCH_REBUILD_EVENTS events (default
 * 100,000) and seeded on to twice that; `admin rebuild` of each size runs
 * three times, alternating, and the medians give the cost of an event at
 * the margin (the slope between the two sizes) and the fixed cost (what the
 * line gives for no events). `admin rebuild` prints its own estimate of
 * both from one run; both are printed here. Each run rebuilds the store as
 * the previous run left it. BENCH_ROUNDS=0 only seeds, and keeps the stores.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openAccount } from '../src/accounts/commands.js';
import { buildApp } from '../src/app.js';
import { loadConfig } from '../src/config.js';
import { openServices } from '../src/services.js';
import { spawn } from 'node:child_process';

const SECRET = 'bench-secret-bench-secret-bench-secret';
const CONCURRENT = Number(process.env.BENCH_CONCURRENT ?? 200);
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

interface Rebuild {
  rebuilt: true;
  events: number;
  seconds: number;
  margin_events_per_second: number;
  fixed_seconds: number;
  dropped_seconds: number;
}

const log = (line: string) => process.stderr.write(`${line}\n`);
const ROOT = new URL('../', import.meta.url).pathname;

/**
 * `npm run admin -- rebuild` on DATA_DIR: the compiled CLI, as an operator runs it (compiled first if the sources changed),
 * with the SECRET the store was seeded under: the responses' keys are derived under it, and no other opens them.
 */
function adminRebuild(dataDir: string): Promise<Rebuild> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts/admin.js'), 'rebuild'], { env: { ...process.env, NODE_OPTIONS: '', DATA_DIR: dataDir, SECRET }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as Rebuild) : reject(new Error(`admin rebuild exited ${code}`))));
  });
}
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const randomAddress = () => `10.${Math.floor(Math.random() * 256)}.${Math.floor(Math.random() * 256)}.${1 + Math.floor(Math.random() * 254)}`;

/**
 * Opens the service on `dataDir` as the server does, and returns a function
 * that submits responses through its routes until the store holds `events`.
 */
async function openSeeder(dataDir: string) {
  const services = await openServices(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent', SECRET, TRUST_PROXY: 'true' }), { logger: pino({ level: 'silent' }) });
  await services.start();
  const app = await buildApp(services);
  const account = await openAccount(services, { name: 'Rebuild bench', plan: 'business', scopes: ['forms:read', 'forms:write', 'responses:read', 'responses:write'] });
  const headers = { authorization: `Bearer ${account.api_key}` };
  const make = async (url: string, payload: object) => {
    const id = (await app.inject({ method: 'POST', url, headers, payload })).json().id as string;
    await app.inject({ method: 'PUT', url: `${url}/${id}`, headers, payload: { published: true } });
    return id;
  };
  const widget = await make('/api/widgets', { widget_type: 'feedback', title: 'Bench widget' });
  const form = await make('/api/forms', {
    title: 'Bench form',
    questions: [
      { id: 'name', type: 'short_text', title: 'Your name' },
      { id: 'plan', type: 'single_choice', title: 'Plan', choices: [{ id: 'free', label: 'Free' }, { id: 'pro', label: 'Pro' }] },
      { id: 'score', type: 'nps', title: 'Recommend us?' },
      { id: 'seats', type: 'number', title: 'Seats', min: 1, max: 500, integer: true },
    ],
  });
  const token = async (kind: string, id: string) => (await app.inject({ method: 'GET', url: `/api/${kind}/${id}/token` })).json().token as string;
  const tokens = { widgets: await token('widgets', widget), forms: await token('forms', form) };
  let n = 0;
  const submitOne = async () => {
    const i = n++;
    const kind = i % 2 === 0 ? 'widgets' : 'forms';
    const answers = kind === 'widgets' ? { rating: 1 + (i % 5), comment: 'Quick and clear, thanks' } : { name: `Visitor ${i}`, plan: i % 3 ? 'pro' : 'free', score: i % 11, seats: 1 + (i % 40) };
    const reply = await app.inject({
      method: 'POST',
      url: `/api/${kind}/${kind === 'widgets' ? widget : form}/submit`,
      headers: { 'content-type': 'application/json', 'user-agent': UA, 'x-forwarded-for': randomAddress(), origin: 'https://shop.example' },
      payload: { answers, _token: tokens[kind], metadata: { pageUrl: 'https://shop.example/checkout', pageTitle: 'Checkout', fingerprint: `fp-${i}` } },
    });
    if (reply.statusCode !== 200 && reply.statusCode !== 201) throw new Error(`submit refused: ${reply.statusCode} ${reply.body}`);
  };
  return {
    async seedTo(events: number) {
      while ((await services.events.headPosition()) < BigInt(events)) {
        await Promise.all(Array.from({ length: CONCURRENT }, submitOne));
      }
      // As a server leaves its store when it stops: every processor caught up, the seals included.
      await services.projections.catchUp();
      return Number(await services.events.headPosition());
    },
    async close() {
      await app.close();
      await services.close();
    },
  };
}

export async function rebuildOnly(): Promise<void> {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  const size = Number(process.env.BENCH_REBUILD_EVENTS ?? 100_000);
  log(`machine: ${machine}`);
  const big = mkdtempSync(join(tmpdir(), 'bench-rebuild-'));
  const small = `${big}-small`;
  const seeder = await openSeeder(big);
  const started = performance.now();
  const smallEvents = await seeder.seedTo(size);
  // Copied while no process has the store open; then seeded on to the larger size.
  await seeder.close();
  cpSync(big, small, { recursive: true });
  const more = await openSeeder(big);
  const bigEvents = await more.seedTo(2 * size);
  await more.close();
  log(`seeded ${smallEvents.toLocaleString('en')} and ${bigEvents.toLocaleString('en')} events through the service in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const runs: Record<'small' | 'big', Rebuild[]> = { small: [], big: [] };
  for (let round = 0; round < Number(process.env.BENCH_ROUNDS ?? 3); round++) {
    for (const [name, dir] of [['small', small], ['big', big]] as const) {
      const run = await adminRebuild(dir);
      runs[name].push(run);
      log(`  ${name}: ${run.events} events in ${run.seconds} s (its own estimate: ${run.margin_events_per_second} events/s at the margin, ${run.fixed_seconds} s fixed; then ${run.dropped_seconds} s dropping the replaced read models)`);
    }
  }
  if (runs.small.length === 0) {
    log(`kept: ${small} and ${big}`);
    return;
  }
  const [a, b] = [median(runs.small.map((r) => r.seconds)), median(runs.big.map((r) => r.seconds))];
  const [ea, eb] = [runs.small[0]!.events, runs.big[0]!.events];
  const margin = Math.round((eb - ea) / (b - a));
  const fixed = Number((a - ea / margin).toFixed(3));
  const own = { margin: median(runs.big.map((r) => r.margin_events_per_second)), fixed: median(runs.big.map((r) => r.fixed_seconds)) };
  process.stdout.write(
    `\nmachine: ${machine}\n\n| store | events | rebuild s (median of 3) | runs |\n| --- | ---: | ---: | --- |\n` +
      `| small | ${ea} | ${a} | ${runs.small.map((r) => r.seconds).join(', ')} |\n| big | ${eb} | ${b} | ${runs.big.map((r) => r.seconds).join(', ')} |\n\n` +
      `between the two sizes: ${margin.toLocaleString('en')} events/s at the margin, ${fixed} s fixed; admin rebuild's own estimate on the big store: ${own.margin.toLocaleString('en')} events/s, ${own.fixed} s\n\n`,
  );
  process.stdout.write(`${JSON.stringify({ machine, date: new Date().toISOString(), small: { events: ea, runs: runs.small }, big: { events: eb, runs: runs.big }, marginEventsPerSecond: margin, fixedSeconds: fixed, own })}\n`);
  // BENCH_KEEP=1 keeps both stores (to profile a rebuild of them: see docs/benchmarks.md).
  if (process.env.BENCH_KEEP === '1') log(`kept: ${small} and ${big}`);
  else {
    rmSync(big, { recursive: true, force: true });
    rmSync(small, { recursive: true, force: true });
  }
}
