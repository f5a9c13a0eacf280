/**
 * Both tiers run in a few processes instead of one a file. Each test file
 * costs its process about 2.5 CPU seconds before its first test (node, the
 * test runner, its coverage and the TypeScript loader, the service's
 * modules), and a system file that drives a browser about as much again to
 * launch Chromium: more than most files' tests take. A shard imports its
 * share of the files one after the other, so their tests run in the order of
 * the files, each file's in its own order, on the test runner's one root, and
 * the system files of one shard share one browser (embed-site.ts); every
 * file still runs alone too (`npx tap test/<file>`). Files that must stay
 * alone (a top-level plan, a contract against a server) are named in
 * STANDALONE and run as their own processes.
 *
 * The system tier's shards are named to sort before the in-process tier's:
 * the test runner starts files in the order of their names, and the longer
 * ones started first leave the shorter ones to fill both cores at the end.
 */
import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

const TEST = new URL('../', import.meta.url).pathname;

/** The in-process tier (`*.test.ts`) or the system tier (`*.system.test.ts`: processes, browsers, servers). */
export type Tier = 'in-process' | 'system';

/** How many shards each tier has: test/shards/<name>-1 … -<count>. */
export const SHARDS: Readonly<Record<Tier, number>> = { 'in-process': 8, system: 10 };

const NAMES: Readonly<Record<Tier, string>> = { 'in-process': 'in-process-', system: 'browsers-and-processes-' };
const SUFFIXES: Readonly<Record<Tier, string>> = { 'in-process': '.test.ts', system: '.system.test.ts' };

/** The file name of a tier's shard `number` (1-based), in test/shards/. */
export const shardFile = (tier: Tier, number: number): string => `${NAMES[tier]}${number}${SUFFIXES[tier]}`;

/** The file names of every shard of both tiers, the system tier's first. */
export const shardFiles = (): string[] => (['system', 'in-process'] as const).flatMap((tier) => Array.from({ length: SHARDS[tier] }, (_, index) => shardFile(tier, index + 1)));

/**
 * Files that run as their own process (`.taprc` includes each): the
 * contracts against real servers, whose skip at the top level plans the
 * whole process.
 */
export const STANDALONE = ['event-store.kurrentdb.test.ts', 'read-models.mongodb.test.ts'];

const tierOf = (name: string): Tier => (name.endsWith('.system.test.ts') ? 'system' : 'in-process');

/** Every test file a tier's shards run, relative to test/, in a stable order. */
export function shardedFiles(tier: Tier): string[] {
  const found: string[] = [];
  const visit = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'shards' && entry.name !== 'support' && entry.name !== 'fixtures') visit(path);
      } else if (entry.name.endsWith('.test.ts') && tierOf(entry.name) === tier && !STANDALONE.includes(relative(TEST, path))) {
        found.push(relative(TEST, path));
      }
    }
  };
  visit(TEST);
  return found.sort();
}

/** The files of a tier's shard `number` (1-based): every n-th file of the sorted list. */
export function filesOfShard(tier: Tier, number: number): string[] {
  return shardedFiles(tier).filter((_, index) => index % SHARDS[tier] === number - 1);
}

/** Imports the files of the shard whose file is `shardUrl` (test/shards/<name>-<n>…). */
export async function runShard(shardUrl: string): Promise<void> {
  const name = shardUrl.slice(shardUrl.lastIndexOf('/') + 1);
  const tier = tierOf(name);
  const number = Number(/-(\d+)\.(?:system\.)?test\.ts$/.exec(name)?.[1]);
  if (name !== shardFile(tier, number)) throw new Error(`${name} is not a shard's file`);
  for (const file of filesOfShard(tier, number)) await import(pathToFileURL(join(TEST, file)).href);
}
