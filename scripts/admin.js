// `npm run admin -- <command>`: the admin CLI, run as compiled JavaScript
// (dist/src/cli/admin.js) with plain node. Compiling TypeScript at every start
// took seconds a command; here the sources are compiled once, on the first run
// after any of them changed, and every later run starts the compiled output.
// The compile only translates (no type check: `npm test` and `npm run build`
// check types), into dist/ as `npm run build` lays it out. Where there are no
// sources (an image holding dist/ only), it runs what is there.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const entry = join(dist, 'src/cli/admin.js');
/** Holds the newest modification time among the sources the last compile saw. */
const stamp = join(dist, '.admin-compiled');
/** Held (a directory, made atomically) by the one run that compiles; the others wait for it. */
const lock = join(dist, '.admin-compiling');

/** The newest modification time of the files a compile reads, in milliseconds. */
function newestSource() {
  let newest = 0;
  const visit = (path) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const path of ['src', 'projections', 'tsconfig.json', 'tsconfig.build.json', 'package.json']) {
    if (existsSync(join(root, path))) visit(join(root, path));
  }
  return newest;
}

const compiledFrom = () => {
  try {
    return Number(readFileSync(stamp, 'utf8'));
  } catch {
    return -1;
  }
};

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
};

/** Takes the lock, or answers false while another live run holds it. */
function takeLock() {
  mkdirSync(dist, { recursive: true });
  try {
    mkdirSync(lock);
  } catch (error) {
    if (error.code !== 'EEXIST') throw error;
    let holder = NaN;
    try {
      holder = Number(readFileSync(join(lock, 'pid'), 'utf8'));
    } catch {
      // Just made: its pid follows.
    }
    // A compile that died leaves its lock: the next run takes it over.
    if (Number.isInteger(holder) && !alive(holder)) rmSync(lock, { recursive: true, force: true });
    return false;
  }
  writeFileSync(join(lock, 'pid'), String(process.pid));
  return true;
}

function compile(sources) {
  process.stderr.write('admin: compiling the sources into dist/ (once after each change)\n');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', dist, '--noCheck'], { stdio: ['ignore', 2, 2] });
  } catch {
    // tsc has printed why.
    process.exit(1);
  }
  // The sources as they were before the compile: one changed during it is compiled again next time.
  writeFileSync(stamp, String(sources));
}

if (existsSync(join(root, 'src'))) {
  for (;;) {
    const sources = newestSource();
    if (existsSync(entry) && compiledFrom() >= sources) break;
    if (takeLock()) {
      try {
        compile(sources);
      } finally {
        rmSync(lock, { recursive: true, force: true });
      }
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

await import(pathToFileURL(entry).href);
