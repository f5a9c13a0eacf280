import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { madeFrom, newestSource, releaseLock, stampMade, takeLock } from '../../scripts/made-once.js';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = new URL('../../', import.meta.url).pathname;

/** The server and the admin CLI a test runs, and how. */
export interface Programs {
  server: string;
  admin: string;
  /** Run from TypeScript sources with tsx, or compiled JavaScript with plain node. */
  tsx: boolean;
  cwd?: string;
}

/** The sources, as `npm start` and `npm run admin` run them. */
export const SOURCES: Programs = { server: `${ROOT}src/main.ts`, admin: `${ROOT}src/cli/admin.ts`, tsx: true };

/**
 * The admin CLI exactly as `npm run admin` starts it: the launcher, which
 * compiles the sources into dist/ when they changed and runs the compiled CLI
 * with plain node.
 */
export const LAUNCHED: Programs = { ...SOURCES, admin: `${ROOT}scripts/admin.js`, tsx: false };

/** A build laid out as the image holds it: `dir` with package.json, node_modules and dist/. */
export const built = (dir: string): Programs => ({
  server: join(dir, 'dist/src/main.js'),
  admin: join(dir, 'dist/src/cli/admin.js'),
  tsx: false,
  cwd: dir,
});

/**
 * The sources built once (`npm run build -- <dir> --no-check`, laid out as
 * the image holds them) and reused while none changes: what the tests'
 * servers and CLI processes run unless a test names other programs. A
 * server started from TypeScript through tsx cost about 5 CPU seconds and
 * one from the build about 2.8, and the suite starts some fifty; `npm
 * start` from the sources is tested on its own (quick-start, server). The
 * build is made by the first test process that asks, under a lock the
 * others wait on, in a directory of its own per checkout.
 */
export function compiledSources(): Programs {
  const dir = compiledBuild();
  return { server: join(dir, 'dist/src/main.js'), admin: join(dir, 'dist/src/cli/admin.js'), tsx: false };
}

/** The directory of that build: `dist/` made by `npm run build`, with package.json and node_modules beside it. */
export function compiledBuild(): string {
  if (builtDir) return builtDir;
  const dir = join(tmpdir(), `feedback-service-tests-${createHash('sha256').update(ROOT).digest('hex').slice(0, 12)}`);
  const stamp = join(dir, 'built-from');
  const lock = join(dir, 'building');
  const sources = newestSource(ROOT, BUILD_READS);
  mkdirSync(dir, { recursive: true });
  for (;;) {
    if (madeFrom(stamp) >= sources) break;
    if (takeLock(lock)) {
      try {
        rmSync(join(dir, 'dist'), { recursive: true, force: true });
        execFileSync(process.execPath, [join(ROOT, 'scripts/build.js'), join(dir, 'dist'), '--no-check'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } });
        copyFileSync(join(ROOT, 'package.json'), join(dir, 'package.json'));
        if (!existsSync(join(dir, 'node_modules'))) symlinkSync(realpathSync(join(ROOT, 'node_modules')), join(dir, 'node_modules'), 'dir');
        stampMade(stamp, sources);
      } finally {
        releaseLock(lock);
      }
      break;
    }
    // Synchronous, as the callers are: another process is building.
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
  }
  builtDir = dir;
  return dir;
}
let builtDir: string | undefined;

/** What a build reads: a change to any of them makes the next test build again. */
const BUILD_READS = ['src', 'projections', 'docs/api.md', 'scripts/build.js', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

/**
 * Children run TypeScript with tsx, as `npm start` does, and report no
 * coverage: the measure counts only code exercised in the test process
 * itself, so a line is covered because a test's own assertions reached it.
 */
export const childEnv = (env: Record<string, string>, tsx = true) => ({
  PATH: process.env.PATH ?? '',
  ...(tsx ? { NODE_OPTIONS: '--import=tsx' } : {}),
  _TAPJS_PROCESSINFO_COVERAGE_: '0',
  // No seal appears in a test's history unless it asks for seals.
  SEALS: 'off',
  ...env,
});

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs the admin CLI with the given environment (and no other): in this
 * process, through the entry its own process runs, or given `programs`, as a
 * process of those programs (see `adminProcess`).
 */
export async function admin(args: string[], env: Record<string, string>, programs?: Programs): Promise<Run> {
  if (programs) return adminProcess(args, env, programs);
  let stdout = '';
  let stderr = '';
  try {
    // As childEnv: no seal appears in a test's history unless it asks for seals.
    // Imported here, not at the top: the system tier's files import this module to start
    // processes, and most never run a command in their own process (the CLI is the whole service).
    const { run } = await import('../../src/cli/program.js');
    const code = await run(args, { env: { SEALS: 'off', ...env }, stdout: (line) => (stdout += `${line}\n`), stderr: (line) => (stderr += `${line}\n`) });
    return { code, stdout, stderr };
  } catch (error) {
    // What the process would have done: the stack on stderr, exit 1.
    return { code: 1, stdout, stderr: `${stderr}${(error as Error).stack ?? String(error)}\n` };
  }
}

/** Runs the admin CLI as its own process, as `npm run admin` does, with the given environment. */
export function adminProcess(args: string[], env: Record<string, string>, programs = compiledSources()): Promise<Run> {
  return startAdmin(args, env, programs).finished;
}

/** Starts the admin CLI and answers its process (to pause and resume it) and its end. */
export function startAdmin(args: string[], env: Record<string, string>, programs = compiledSources()): { child: ChildProcess; finished: Promise<Run> } {
  const child = spawn(process.execPath, [programs.admin, ...args], {
    env: childEnv(env, programs.tsx),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(programs.cwd ? { cwd: programs.cwd } : {}),
  });
  const finished = new Promise<Run>((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (chunk) => (stdout += chunk));
    child.stderr!.on('data', (chunk) => (stderr += chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  return { child, finished };
}

export function json(run: Run): any {
  if (run.code !== 0) throw new Error(`admin failed (${run.code}): ${run.stderr}`);
  return JSON.parse(run.stdout);
}

/**
 * A port free now, for a process to listen on a moment later. Drawn below the
 * kernel's range for ports it hands out (32768 and up on Linux), where every
 * `listen(0)` of the tests running beside this one lands, so none of them can
 * take it in between; another file's draw could, one time in thousands, which
 * startServer survives by starting again on another port.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

export interface Server {
  url: string;
  /** What the server logged on stdout so far (pino JSON lines). */
  log(): string;
  /** Sends the server's process a signal, without waiting for anything. */
  signal(signal: NodeJS.Signals): void;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; stderr: string }>;
}

/** Starts the server (the sources built, unless told otherwise: see compiledSources) and waits until it answers /healthz. */
export async function startServer(env: Record<string, string>, programs = compiledSources()): Promise<Server> {
  for (let tries = 1; ; tries++) {
    try {
      return await startServerOn(await freePort(), env, programs);
    } catch (error) {
      if (!(error instanceof PortTaken) || tries === 5) throw error;
    }
  }
}

/** The port was taken between its draw and the server's listen (the server said so and stopped). */
class PortTaken extends Error {}

/**
 * Whether the process `pid` holds the socket listening on 127.0.0.1:`port`:
 * another test's server that took the port answers /healthz just as well.
 * Read from Linux's /proc (the listening socket's inode among the process's
 * open files); where there is no /proc, the answer is taken as the child's.
 */
function listensOn(pid: number, port: number): boolean {
  let table: string;
  try {
    table = readFileSync('/proc/net/tcp', 'utf8');
  } catch {
    return true;
  }
  const hex = port.toString(16).toUpperCase().padStart(4, '0');
  // Columns: sl, local_address (127.0.0.1, or 0.0.0.0 for a HOST of every address), rem_address, st (0A:
  // listening), ..., inode (the tenth).
  const row = table
    .split('\n')
    .map((line) => line.trim().split(/\s+/))
    .find((cols) => (cols[1] === `0100007F:${hex}` || cols[1] === `00000000:${hex}`) && cols[3] === '0A');
  if (!row) return false;
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === `socket:[${row[9]}]`;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

async function startServerOn(port: number, env: Record<string, string>, programs: typeof SOURCES): Promise<Server> {
  const child = spawn(process.execPath, [programs.server], {
    env: childEnv({ LOG_LEVEL: 'warn', ...env, PORT: String(port) }, programs.tsx),
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(programs.cwd ? { cwd: programs.cwd } : {}),
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; stderr: string }>((resolve) => child.on('exit', (code) => resolve({ code, stderr })));
  const url = `http://127.0.0.1:${port}`;
  // Only a start that fails or never ends is an error: a loaded machine may take seconds to compile and open.
  const deadline = Date.now() + 60_000;
  const stopped = () => child.exitCode !== null || child.signalCode !== null;
  const taken = () => /PORT \d+ is in use/.test(stderr);
  const closed = new Promise<void>((resolve) => child.on('close', () => resolve()));
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok && listensOn(child.pid!, port)) break;
    } catch {
      // Refused: not listening yet, or not at all.
    }
    if (stopped()) {
      await closed; // all it wrote on stderr read
      throw taken() ? new PortTaken() : new Error(`server did not start: ${stderr}`);
    }
    if (Date.now() > deadline) throw new Error(`server did not start: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    log: () => stdout,
    signal: (signal) => void child.kill(signal),
    stop: async (signal = 'SIGTERM') => {
      child.kill(signal);
      return exited;
    },
  };
}

/** Starts the server with a configuration it must refuse. */
export function startFailing(env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [compiledSources().server], { env: childEnv(env, false), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
