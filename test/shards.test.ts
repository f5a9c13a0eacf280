/**
 * The in-process tier runs in shards (test/support/shards.ts): a file left
 * out of every shard would never run in `npm test`, and one in two would run
 * twice.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import t from 'tap';
import { filesOfShard, SHARDS, shardedFiles, STANDALONE } from './support/shards.js';

t.test('every in-process test file is in exactly one shard, and each shard has its file', async (t) => {
  const files = shardedFiles();
  t.ok(files.length > 100, `the in-process files are found (${files.length})`);
  t.ok(files.includes('shards.test.ts'), 'this file among them');
  const placed = Array.from({ length: SHARDS }, (_, index) => filesOfShard(index + 1)).flat();
  t.same([...placed].sort(), files, 'each file once');
  const shardFiles = readdirSync(new URL('./shards/', import.meta.url)).sort((a, b) => Number.parseInt(a, 10) - Number.parseInt(b, 10));
  t.same(shardFiles, Array.from({ length: SHARDS }, (_, index) => `${index + 1}.test.ts`), `test/shards holds the ${SHARDS} shards and nothing else`);
});

t.test('the files that run alone are included one by one in .taprc, and exist', async (t) => {
  const config = readFileSync(new URL('../.taprc', import.meta.url), 'utf8');
  for (const file of STANDALONE) {
    t.ok(existsSync(new URL(`./${file}`, import.meta.url)), `${file} exists`);
    t.ok(config.includes(`  - test/${file}\n`), `.taprc includes test/${file}`);
  }
});
