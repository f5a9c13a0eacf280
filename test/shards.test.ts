/**
 * Both tiers run in shards (test/support/shards.ts): a file left out of
 * every shard would never run in `npm test`, and one in two would run twice.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { filesOfShard, shardedFiles, shardFile, shardFiles, SHARDS, STANDALONE, type Tier } from './support/shards.js';

const tiers: Array<{ tier: Tier; example: string; least: number }> = [
  { tier: 'in-process', example: 'shards.test.ts', least: 100 },
  { tier: 'system', example: 'server.system.test.ts', least: 30 },
];

for (const { tier, example, least } of tiers) {
  t.test(`every ${tier} test file is in exactly one shard`, async (t) => {
    const files = shardedFiles(tier);
    t.ok(files.length > least, `the ${tier} files are found (${files.length})`);
    t.ok(files.includes(example), `${example} among them`);
    t.notOk(files.some((file) => (tier === 'system') !== file.endsWith('.system.test.ts')), 'and no file of the other tier');
    const placed = Array.from({ length: SHARDS[tier] }, (_, index) => filesOfShard(tier, index + 1)).flat();
    t.same([...placed].sort(), files, 'each file once');
  });
}

t.test('test/shards holds each shard of both tiers and nothing else', async (t) => {
  t.same(readdirSync(new URL('./shards/', import.meta.url)).sort(), shardFiles().sort());
});

t.test("the system tier's shards start before the in-process tier's (the test runner starts files in the order of their names)", async (t) => {
  const last = shardFile('system', SHARDS.system);
  const sorted = shardFiles().map((name) => `test/shards/${name}`).sort((a, b) => a.localeCompare(b, 'en'));
  t.ok(sorted.slice(0, SHARDS.system).every((name) => name.endsWith('.system.test.ts')), `the first ${SHARDS.system} are the system shards, up to ${last}`);
});

t.test('the files that run alone are included one by one in .taprc, and exist', async (t) => {
  const config = readFileSync(new URL('../.taprc', import.meta.url), 'utf8');
  for (const file of STANDALONE) {
    t.ok(existsSync(new URL(`./${file}`, import.meta.url)), `${file} exists`);
    t.ok(config.includes(`  - test/${file}\n`), `.taprc includes test/${file}`);
  }
});
