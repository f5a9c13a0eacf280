/**
 * The auditors' figures: sealing and verifying a large history, and the CRUD
 * peer (bench/crud-peer.ts) beside the service on submit and list-100.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, cpSync, fsyncSync, openSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = new URL('../', import.meta.url).pathname;
const tsx = { ...process.env, NODE_OPTIONS: '--import=tsx' };

/** Runs `admin ARGS` on DATA_DIR and answers the JSON of its last line (exit 0 only). */
export function adminJson<T>(dataDir: string, args: string[]): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'src/cli/admin.ts'), ...args], { env: { ...tsx, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk) => (out += chunk));
    child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out.trim().split('\n').pop()!) as T) : reject(new Error(`admin ${args[0]} exited ${code}`))));
  });
}

export interface Rebuilt {
  events: number;
  /** The median of the runs. */
  seconds: number;
  runs: number[];
}

/**
 * `admin rebuild` of a store, timed three times, each on the store as it
 * was seeded (two copies, then the store itself, which is left rebuilt):
 * the median. On this virtual machine one run of the same rebuild took
 * from 10 to 13 s within the hour, and the first run after seeding a
 * million events was the slowest of the three in each bench run that
 * timed three. Each copy is on disk before its run, and so is everything
 * the bench wrote before it (`sync`): a run while the kernel still held a
 * fresh copy's 750 MB unwritten took 10.40, 9.85 and 9.57 s where runs
 * after a sync took 9.49, 9.52 and 9.55 s, alternating; the seeding's
 * writes come just before the first run.
 */
export async function rebuildThrice(dataDir: string): Promise<Rebuilt> {
  const runs: number[] = [];
  let events = 0;
  for (const copy of [`${dataDir}-copy-1`, `${dataDir}-copy-2`, dataDir]) {
    if (copy !== dataDir) {
      cpSync(dataDir, copy, { recursive: true });
      for (const file of readdirSync(copy)) {
        const fd = openSync(join(copy, file), 'r+');
        fsyncSync(fd);
        closeSync(fd);
      }
    }
    execFileSync('sync');
    const run = await adminJson<{ events: number; seconds: number }>(copy, ['rebuild']);
    if (copy !== dataDir) rmSync(copy, { recursive: true, force: true });
    runs.push(run.seconds);
    events = run.events;
  }
  return { events, seconds: [...runs].sort((a, b) => a - b)[1]!, runs };
}

export interface Verified {
  events: number;
  seals: number;
  seconds: number;
  events_per_second: number;
}

/** Seals the whole history (as the server would have, every 1000 events), verifies it, then audits an object it does not hold. */
export async function sealAndVerify(dataDir: string): Promise<{ seal: { seals: number; seconds: number }; verify: Verified; audit: { seconds: number } }> {
  const started = performance.now();
  const sealed = await adminJson<{ seals: number }>(dataDir, ['seal']);
  const seal = { seals: sealed.seals, seconds: Number(((performance.now() - started) / 1000).toFixed(3)) };
  const verify = await adminJson<Verified>(dataDir, ['verify']);
  return { seal, verify, audit: await auditAbsent(dataDir) };
}

/**
 * `admin audit` of an object none of the history's events concern: how long
 * an auditor waits for the whole history to be looked through, the
 * command's start included (it prints nothing to time itself by).
 */
async function auditAbsent(dataDir: string): Promise<{ seconds: number }> {
  const started = performance.now();
  const child = spawn(process.execPath, [join(ROOT, 'src/cli/admin.ts'), 'audit', '--object', 'wgt_absent'], { env: { ...tsx, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  // An id no event names is a bad argument: exit 2, nothing on stdout.
  if (code !== 2 || out.trim() !== '') throw new Error(`admin audit exited ${code} with ${out.length} bytes out`);
  return { seconds: Number(((performance.now() - started) / 1000).toFixed(3)) };
}

/** Starts the CRUD peer on its own store holding `rows` responses of widget `deep`. */
export function startPeer(dataDir: string, port: number, rows: number): ChildProcess {
  return spawn(process.execPath, [join(ROOT, 'bench/crud-peer.ts')], {
    env: { ...tsx, DATA_DIR: dataDir, PORT: String(port), PEER_ROWS: String(rows) },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
