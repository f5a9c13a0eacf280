/**
 * `npm run bench -- download`: the server's memory while it streams a CSV
 * download of BENCH_DOWNLOAD_RESPONSES (default 1,000,000) responses of one
 * widget. The responses are appended to the event store, the read models
 * built by `admin rebuild`, then the server started and the download read
 * through by a client signed in by login link, while the server's RSS is
 * sampled. The goal: RSS grows < 100 MB over what it was before.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { openAccount } from '../src/accounts/commands.js';
import { loadConfig } from '../src/config.js';
import { catalog } from '../src/domain-events.js';
import { buildApp } from '../src/app.js';
import { openServices } from '../src/services.js';
import { adminJson } from './auditors.js';

const ROOT = new URL('../', import.meta.url).pathname;
const RESPONSES = Number(process.env.BENCH_DOWNLOAD_RESPONSES ?? 1_000_000);
const tsx = { ...process.env, NODE_OPTIONS: '--import=tsx' };
const log = (line: string) => process.stderr.write(`${line}\n`);

const rssMb = (pid: number): number => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

const METADATA = { browser: 'Chrome', browser_version: '126.0', device: 'Desktop' as const, os: 'Linux', ip_hash: 'a'.repeat(64), language: 'en', completion_time_ms: 4200, page_url: 'https://shop.example/', page_title: 'Shop' };

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

export async function downloadOnly(): Promise<void> {
  const machine = `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}, ${Math.round(totalmem() / 2 ** 30)} GiB, Node ${process.version}`;
  log(`machine: ${machine}`);
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-download-'));
  let server: ChildProcess | undefined;
  try {
    const services = await openServices(loadConfig({ DATA_DIR: dataDir, LOG_LEVEL: 'silent' }), { logger: pino({ level: 'silent' }) });
    const app = await buildApp(services);
    const account = await openAccount(services, { name: 'Download', plan: 'business', scopes: ['forms:read', 'forms:write'] });
    const headers = { authorization: `Bearer ${account.api_key}` };
    const questions = [
      { id: 'rating', type: 'star_rating', title: 'How was it?' },
      { id: 'comment', type: 'long_text', title: 'Anything else?' },
    ];
    const widget = (await app.inject({ method: 'POST', url: '/api/widgets', headers, payload: { widget_type: 'feedback', title: 'Download', questions } })).json().id as string;
    await app.close();
    log(`seeding ${RESPONSES.toLocaleString('en')} responses`);
    const seeded = performance.now();
    const meta = { occurred_at: new Date().toISOString(), actor: 'bench' };
    for (let done = 0; done < RESPONSES; done += 2000) {
      await Promise.all(
        Array.from({ length: Math.min(2000, RESPONSES - done) }, (_, i) => {
          const n = done + i;
          const data = {
            response_id: `rsp_dl${String(n).padStart(9, '0')}`,
            account_id: account.account_id,
            widget_id: widget,
            answers: { rating: 1 + (n % 5), comment: n % 100 === 0 ? '=HYPERLINK("x"), with "quotes"\nand a line' : 'Fine, thanks' },
            metadata: METADATA,
            submitted_at: new Date(1_790_000_000_000 + n * 1000).toISOString(),
          };
          return services.events.append(`response-dl${n}`, [catalog.serialize({ type: 'ResponseSubmitted', data }, meta)], 'no_stream');
        }),
      );
    }
    await services.close();
    log(`  seeded in ${((performance.now() - seeded) / 1000).toFixed(1)} s; rebuilding the read models`);
    const rebuilt = await adminJson<{ events: number; seconds: number }>(dataDir, ['rebuild']);
    log(`  rebuild: ${rebuilt.events} events in ${rebuilt.seconds} s`);

    const port = 20_000 + Math.floor(Math.random() * 20_000);
    const base = `http://127.0.0.1:${port}`;
    server = spawn(process.execPath, [join(ROOT, 'src/main.ts')], { env: { ...tsx, DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn', PUBLIC_BASE_URL: base }, stdio: ['ignore', 'ignore', 'inherit'] });
    await waitFor(`${base}/readyz`);
    const { url } = await adminJson<{ url: string }>(dataDir, ['login-link', '--account', account.account_id, '--base', base]);
    const token = new URL(url).searchParams.get('t')!;
    const signIn = await fetch(`${base}/dashboard/login`, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', 'sec-fetch-site': 'same-origin' }, body: new URLSearchParams({ t: token }) });
    const cookie = /fs_session=[^;]+/.exec(signIn.headers.get('set-cookie') ?? '')?.[0];
    if (!cookie) throw new Error(`not signed in: ${signIn.status}`);

    // The server at rest, after a request of the same route has loaded its code.
    await (await fetch(`${base}/dashboard/api/widgets/${widget}/summary`, { headers: { cookie } })).arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const before = rssMb(server.pid!);
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, rssMb(server!.pid!))), 100);
    const started = performance.now();
    const reply = await fetch(`${base}/dashboard/api/widgets/${widget}/responses.csv`, { headers: { cookie } });
    if (reply.status !== 200 || !reply.body) throw new Error(`download refused: ${reply.status}`);
    let bytes = 0;
    let records = 0;
    const decoder = new TextDecoder();
    for await (const chunk of reply.body) {
      bytes += chunk.byteLength;
      // Quoted fields in the seeded answers hold a bare \n, never \r\n: CRLF counts records.
      const text = decoder.decode(chunk, { stream: true });
      for (let i = text.indexOf('\r\n'); i !== -1; i = text.indexOf('\r\n', i + 2)) records++;
    }
    const seconds = (performance.now() - started) / 1000;
    clearInterval(sampler);
    const summary = (await (await fetch(`${base}/dashboard/api/widgets/${widget}/summary`, { headers: { cookie } })).json()) as { total: number };
    const growth = peak - before;
    const figures = {
      machine,
      date: new Date().toISOString(),
      load: loadavg().map((l) => l.toFixed(2)).join(', '),
      responses: RESPONSES,
      rebuild: rebuilt,
      download: { rows: records - 1, summary_total: summary.total, bytes, seconds: Number(seconds.toFixed(1)), rows_per_second: Math.round((records - 1) / seconds) },
      rss_mb: { before: Math.round(before), peak: Math.round(peak), growth: Math.round(growth) },
      goal: { figure: 'server RSS growth during the download', target: '< 100 MB', met: growth < 100 && records - 1 === summary.total },
    };
    process.stdout.write(
      `\nmachine: ${machine}; load ${figures.load}\n\n| figure | value |\n| --- | --- |\n| responses | ${RESPONSES.toLocaleString('en')} |\n| rebuild | ${rebuilt.events.toLocaleString('en')} events in ${rebuilt.seconds} s |\n| CSV rows / summary total | ${(records - 1).toLocaleString('en')} / ${summary.total.toLocaleString('en')} |\n| CSV size | ${(bytes / 2 ** 20).toFixed(0)} MiB in ${seconds.toFixed(1)} s |\n| server RSS before / peak / growth | ${figures.rss_mb.before} / ${figures.rss_mb.peak} / ${figures.rss_mb.growth} MB |\n| goal: growth < 100 MB | ${figures.goal.met ? 'yes' : '**no**'} |\n\n`,
    );
    process.stdout.write(`${JSON.stringify(figures)}\n`);
  } finally {
    if (server && server.exitCode === null) {
      server.kill('SIGTERM');
      await once(server, 'exit');
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
}
