// Making something from the sources once after each change, when several
// processes may ask at once: the admin launcher (scripts/admin.js) compiles
// the CLI this way, and the tests (test/support/processes.ts) the build
// their servers run. A stamp file holds the newest modification time of the
// sources the last making saw; a lock (a directory, made atomically) is held
// by the one process that makes it while the others wait (each in its own
// way: the launcher on a timer, a test synchronously).
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The newest modification time, in milliseconds, of `paths` under `root` (directories read through; missing paths skipped). */
export function newestSource(root, paths) {
  let newest = 0;
  const visit = (path) => {
    const stat = statSync(path);
    if (stat.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
    else newest = Math.max(newest, stat.mtimeMs);
  };
  for (const path of paths) if (existsSync(join(root, path))) visit(join(root, path));
  return newest;
}

/** What the stamp file says the last making saw, or -1 when nothing was made. */
export function madeFrom(stamp) {
  try {
    const value = Number(readFileSync(stamp, 'utf8'));
    return Number.isFinite(value) ? value : -1;
  } catch {
    return -1;
  }
}

/** Records that what was made saw the sources as `sources` (taken before making: a source changed meanwhile is made again next time). */
export function stampMade(stamp, sources) {
  writeFileSync(stamp, String(sources));
}

/** Takes the lock, or answers false while another live process holds it; one that died holding it loses it to the next asker. */
export function takeLock(lock) {
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
    if (Number.isInteger(holder) && holder > 0 && !alive(holder)) rmSync(lock, { recursive: true, force: true });
    return false;
  }
  writeFileSync(join(lock, 'pid'), String(process.pid));
  return true;
}

export function releaseLock(lock) {
  rmSync(lock, { recursive: true, force: true });
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}
