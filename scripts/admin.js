// `npm run admin -- <command>`: the admin CLI, run as compiled JavaScript
// (dist/src/cli/admin.js) with plain node. Compiling TypeScript at every start
// took seconds a command; here the sources are compiled once, on the first run
// after any of them changed, and every later run starts the compiled output.
// The compile only translates (no type check: `npm test` and `npm run build`
// check types), into dist/ as `npm run build` lays it out. Where there are no
// sources (an image holding dist/ only), it runs what is there.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { madeFrom, newestSource, releaseLock, stampMade, takeLock } from './made-once.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = join(root, 'dist');
const entry = join(dist, 'src/cli/admin.js');
/** Holds the newest modification time among the sources the last compile saw. */
const stamp = join(dist, '.admin-compiled');
/** Held by the one run that compiles; the others wait for it. */
const lock = join(dist, '.admin-compiling');
/** What a compile reads. */
const sources = ['src', 'projections', 'tsconfig.json', 'tsconfig.build.json', 'package.json'];

function compile(newest) {
  process.stderr.write('admin: compiling the sources into dist/ (once after each change)\n');
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  try {
    execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json'), '--outDir', dist, '--noCheck'], { stdio: ['ignore', 2, 2] });
  } catch {
    // tsc has printed why.
    process.exit(1);
  }
  stampMade(stamp, newest);
}

if (existsSync(join(root, 'src'))) {
  for (;;) {
    const newest = newestSource(root, sources);
    if (existsSync(entry) && madeFrom(stamp) >= newest) break;
    mkdirSync(dist, { recursive: true });
    if (takeLock(lock)) {
      try {
        compile(newest);
      } finally {
        releaseLock(lock);
      }
      break;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

await import(pathToFileURL(entry).href);
