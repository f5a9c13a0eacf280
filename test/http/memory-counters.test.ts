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

t.test('no flood of other keys evicts a live window; ended ones are dropped', async (t) => {
  let now = 0;
  const counters = new MemoryCounters(() => now);
  counters.incr('limited', 86_400_000);
  for (let i = 0; i < 120_000; i++) counters.incr(`other-${i}`, 60_000);
  t.equal(counters.incr('limited', 86_400_000).current, 2, 'a day-long window keeps its count under 120,000 other keys');
  now = 60_000;
  for (let i = 0; i < 120_000; i++) counters.incr(`later-${i}`, 60_000);
  t.ok(counters.size <= 120_002, `the first flood's ended windows were dropped (${counters.size} held)`);
  t.equal(counters.incr('limited', 86_400_000).current, 3, 'and the live one stays');
});

t.test('ended windows are dropped a few at each count, never all at once, and none is left behind', async (t) => {
  let now = 0;
  const counters = new MemoryCounters(() => now);
  for (let i = 0; i < 100_000; i++) counters.incr(`visitor-${i}`, 60_000);
  counters.incr('day', 86_400_000);
  now = 60_000;
  counters.incr('after', 60_000);
  t.ok(counters.size >= 100_000 - 4, `one count after 100,000 windows ended dropped a few of them, not all (${counters.size} held)`);
  for (let i = 0; i < 25_000; i++) counters.incr('after', 60_000);
  t.equal(counters.size, 2, 'a quarter as many counts later every ended window is gone; the live ones stay');
  t.equal(counters.incr('day', 86_400_000).current, 2, 'the day-long window kept its count');
});

t.test("a key that starts a new window before its ended one is dropped keeps the new one's count", async (t) => {
  let now = 0;
  const counters = new MemoryCounters(() => now);
  for (let i = 0; i < 100; i++) counters.incr(`visitor-${i}`, 60_000);
  now = 60_000;
  t.same(counters.incr('visitor-99', 60_000), { current: 1, ttl: 60_000 }, 'its window ended: counted afresh, the ended one still queued');
  for (let i = 0; i < 100; i++) counters.incr('other', 60_000);
  t.equal(counters.incr('visitor-99', 60_000).current, 2, 'the drop of the ended window left the new one alone');
});

t.test("windows of many lengths are each dropped once their own has ended, and only then", async (t) => {
  let now = 0;
  const counters = new MemoryCounters(() => now);
  // An object's own limit may use any window from a second to a day: a thousand lengths, longest first.
  for (let seconds = 1000; seconds >= 1; seconds--) counters.incr(`object-${seconds}`, seconds * 1000);
  now = 500_500;
  for (let i = 0; i < 2000; i++) counters.incr('visitor', 60_000_000);
  t.equal(counters.size, 501, 'the 500 windows of 500 s or less are gone, the 500 longer ones and the visitor held');
  t.equal(counters.incr('object-501', 501_000).current, 2, 'a window of 501 s still counts');
  t.equal(counters.incr('object-500', 500_000).current, 1, 'one of 500 s starts afresh');
});
