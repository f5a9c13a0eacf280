import t from 'tap';
import { lines, minHeightCss, reservedHeights } from '../../src/embed/reserve.js';

const q = (id: string, type = 'short_text', title = 'Your name') => ({ id, type, title });
const form = (questions: Array<ReturnType<typeof q>>, extra: object = {}) => ({ title: 'Join the beta', description: '', questions, ...extra });

t.test('text wraps between words, a word longer than a line anywhere', async (t) => {
  t.equal(lines('', 100, 10), 1, 'an empty text still takes its line');
  t.equal(lines('aaaa bbbb', 100, 10), 1);
  t.equal(lines('aaaa bbbb cccc', 100, 10), 2);
  t.equal(lines('a'.repeat(25), 100, 10), 3);
  t.equal(lines('one\ntwo', 100, 10), 2, 'a line break starts a line');
});

t.test('the height grows with what the first screen shows, and on a phone', async (t) => {
  const one = reservedHeights('form', form([q('a')]));
  const two = reservedHeights('form', form([q('a'), q('b', 'long_text')]));
  t.ok(two.desktop > one.desktop, 'another question');
  const long = reservedHeights('form', form([q('a', 'short_text', 'A question whose title is long enough to wrap onto a second line on a phone')]));
  t.ok(long.phone > long.desktop, 'a title that wraps on a phone');
  t.ok(reservedHeights('form', form([q('a')], { description: 'Two questions, one minute.' })).desktop > one.desktop, 'a description');
  const paged = reservedHeights('form', form([q('a'), q('b', 'long_text')], { pages: [{ question_ids: ['a'] }, { question_ids: ['b'] }] }));
  // Two pages add the progress bar and the first page's heading ("Page 1 of 2"): 12 + 24 + 24 px.
  t.same(paged, { desktop: one.desktop + 60, phone: one.phone + 60 }, 'only the first page counts, under its progress bar and heading');
  const titled = reservedHeights('form', form([q('a'), q('b', 'long_text')], { pages: [{ question_ids: ['a'], title: 'A title long enough to take two lines on a phone, one on a desktop' }, { question_ids: ['b'] }] }));
  t.ok(titled.phone - paged.phone > titled.desktop - paged.desktop, 'a page title that wraps on a phone');
  t.same(reservedHeights('form', form([q('a')], { presentation: 'one_by_one' })), { desktop: one.desktop + 12, phone: one.phone + 12 }, 'one question at a time: the progress bar');
  const poll = (options: string[]) => reservedHeights('poll', { question: 'Which plan?', options: options.map((text) => ({ text })) });
  t.ok(poll(['A', 'B', 'C']).desktop > poll(['A', 'B']).desktop, 'a poll: another option');
});

t.test('one CSS min-height: the phone height up to 360 px, the desktop height from 640 px', async (t) => {
  t.equal(minHeightCss({ desktop: 300, phone: 300 }), '300px');
  t.equal(minHeightCss({ desktop: 300, phone: 328 }), 'clamp(300px, calc(328px - (100vw - 360px) * 0.1), 328px)');
});
