/**
 * A refusal is an answer, not a fault: it is made without a stack (capturing
 * one cost every 4xx, a flood's 429s among them, more than the rest of the
 * error), while a 5xx keeps the stack its log line needs.
 */
import t from 'tap';
import { AppError } from '../../src/kernel/errors.js';

const frames = (error: Error) => (error.stack ?? '').split('\n').filter((line) => line.trimStart().startsWith('at ')).length;

t.test('a 4xx is made without a stack, with its message and code', async (t) => {
  const error = new AppError('rate_limited', 'Too many requests');
  t.equal(frames(error), 0);
  t.match(error, { code: 'rate_limited', message: 'Too many requests', statusCode: 429, name: 'AppError' });
  t.ok(error instanceof Error);
});

t.test('a 5xx keeps its stack and its cause', async (t) => {
  const cause = new Error('disk full');
  const error = new AppError('internal_error', 'Something went wrong', undefined, { cause });
  t.ok(frames(error) > 0, 'frames where it was made');
  t.equal(error.cause, cause);
});

t.test('the limit of stack frames is left as it was, for every other error', async (t) => {
  const before = Error.stackTraceLimit;
  new AppError('not_found', 'Not found');
  t.equal(Error.stackTraceLimit, before);
  t.ok(frames(new Error('other')) > 0);
});
