import t from 'tap';
import { MemoryCounters } from '../../src/http/rate-limits.js';

t.test('a window counts from its first request and starts afresh once it ends', async (t) => {
  let now = 1_000;
  const counters = new MemoryCounters(() => now);
  t.same(counters.incr('a', 60_000), { current: 1, ttl: 60_000 });
  now += 59_000;
  t.same(counters.incr('a', 60_000), { current: 2, ttl: 1_000 }, 'the same window: counted, less time left');
  t.same(counters.incr('b', 60_000), { current: 1, ttl: 60_000 }, 'each key its own window');
  now += 1_000;
  t.same(counters.incr('a', 60_000), { current: 1, ttl: 60_000 }, 'the window ended: counted afresh');
});

t.test('no flood of other keys evicts a live window; ended ones are swept', async (t) => {
  let now = 0;
  const counters = new MemoryCounters(() => now);
  counters.incr('limited', 86_400_000);
  for (let i = 0; i < 120_000; i++) counters.incr(`other-${i}`, 60_000);
  t.equal(counters.incr('limited', 86_400_000).current, 2, 'a day-long window keeps its count under 120,000 other keys');
  now = 60_000;
  for (let i = 0; i < 120_000; i++) counters.incr(`later-${i}`, 60_000);
  t.ok(counters.size <= 120_002, `the first flood's ended windows were swept (${counters.size} held)`);
  t.equal(counters.incr('limited', 86_400_000).current, 3, 'and the live one stays');
});
