import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import t from 'tap';

/** Visitors download the embed on every page it is pasted on: it stays small. */
const BUDGET = 20 * 1024;

t.test('the embed script is under 20 kB gzipped', async (t) => {
  const script = readFileSync(new URL('../../src/embed/embed.js', import.meta.url));
  const size = gzipSync(script, { level: 9 }).length;
  t.ok(size < BUDGET, `${size} bytes gzipped (${script.length} raw), budget ${BUDGET}`);
});
