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

t.test('memory stays bounded: ended windows go first, then the oldest', async (t) => {
  let now = 0;
  const counters = new MemoryCounters(() => now, 3);
  counters.incr('short', 10);
  counters.incr('old', 1_000);
  counters.incr('old', 1_000);
  counters.incr('newer', 1_000);
  now = 20;
  counters.incr('fourth', 1_000);
  t.same(counters.incr('old', 1_000).current, 3, 'the ended window made room; the live ones keep their counts');
  counters.incr('fifth', 1_000);
  t.same(counters.incr('newer', 1_000).current, 2, 'full of live windows: a newer one stays');
  t.same(counters.incr('old', 1_000).current, 1, 'the oldest went, and counts afresh');
});
