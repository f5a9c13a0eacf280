/**
 * The in-process tier runs in a few processes instead of one a file. Each
 * test file costs its process about 2.5 CPU seconds before its first test
 * (node, the test runner, its coverage and the TypeScript loader, the
 * service's modules), more than most files' tests take: on two cores that
 * was half of the tier's time. A shard imports its share of the files one
 * after the other, so their tests run in the order of the files, each file's
 * in its own order, on the test runner's one root; every file still runs
 * alone too (`npx tap test/<file>`). Files that must stay alone (a top-level
 * plan, a contract against a server) are named in STANDALONE and run as
 * their own processes.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const TEST = new URL('../', import.meta.url).pathname;

/** How many shards there are: test/shards/1.test.ts … SHARDS.test.ts. */
export const SHARDS = 8;

/**
 * In-process files that run as their own process (`.taprc` includes each):
 * the contracts against real servers, whose skip at the top level plans the
 * whole process.
 */
export const STANDALONE = ['event-store.kurrentdb.test.ts', 'read-models.mongodb.test.ts'];

/** Every in-process test file a shard runs, relative to test/, in a stable order. */
export function shardedFiles(): string[] {
  const found: string[] = [];
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'shards' && entry.name !== 'support' && entry.name !== 'fixtures') visit(path);
      } else if (entry.name.endsWith('.test.ts') && !entry.name.endsWith('.system.test.ts') && !STANDALONE.includes(relative(TEST, path))) {
        found.push(relative(TEST, path));
      }
    }
  };
  visit(TEST);
  return found.sort();
}

/** The files of shard `number` (1-based): every SHARDS-th file of the sorted list. */
export function filesOfShard(number: number): string[] {
  return shardedFiles().filter((_, index) => index % SHARDS === number - 1);
}

/** Imports the files of the shard whose file is `shardUrl` (test/shards/<n>.test.ts). */
export async function runShard(shardUrl: string): Promise<void> {
  const number = Number(/\/(\d+)\.test\.ts$/.exec(shardUrl)?.[1]);
  for (const file of filesOfShard(number)) await import(pathToFileURL(join(TEST, file)).href);
}
