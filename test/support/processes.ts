import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
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

/** A build laid out as the image holds it: `dir` with package.json, node_modules and dist/. */
export const built = (dir: string): Programs => ({
  server: join(dir, 'dist/src/main.js'),
  admin: join(dir, 'dist/src/cli/admin.js'),
  tsx: false,
  cwd: dir,
});

/**
 * Children run TypeScript with tsx, as `npm start` does. tap follows child
 * processes for coverage but cannot map what tsx compiles (every such file
 * reads as fully covered), so children report no coverage: the measure counts
 * only code exercised in the test process itself.
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

/** Runs the admin CLI as `npm run admin` does, with the given environment. */
export function admin(args: string[], env: Record<string, string>, programs = SOURCES): Promise<Run> {
  return startAdmin(args, env, programs).finished;
}

/** Starts the admin CLI and answers its process (to pause and resume it) and its end. */
export function startAdmin(args: string[], env: Record<string, string>, programs = SOURCES): { child: ChildProcess; finished: Promise<Run> } {
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

export async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

export interface Server {
  url: string;
  /** What the server logged on stdout so far (pino JSON lines). */
  log(): string;
  /** Sends the server's process a signal, without waiting for anything. */
  signal(signal: NodeJS.Signals): void;
  stop(signal?: NodeJS.Signals): Promise<{ code: number | null; stderr: string }>;
}

/** Starts the server (as `npm start` does, unless told otherwise) and waits until it answers /healthz. */
export async function startServer(env: Record<string, string>, programs = SOURCES): Promise<Server> {
  const port = await freePort();
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
  for (;;) {
    try {
      if ((await fetch(`${url}/healthz`)).ok) break;
    } catch {
      if (child.exitCode !== null || Date.now() > deadline) throw new Error(`server did not start: ${stderr}`);
      await new Promise((r) => setTimeout(r, 50));
    }
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
    const child = spawn(process.execPath, [`${ROOT}src/main.ts`], { env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => (stderr += chunk));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}
