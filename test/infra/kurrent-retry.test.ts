import {
  AccessDeniedError,
  DeadlineExceededError,
  MaxAppendSizeExceededError,
  NotLeaderError,
  StreamDeletedError,
  TimeoutError,
  UnavailableError,
  UnknownError,
  WrongExpectedVersionError,
} from '@kurrent/kurrentdb-client';
import t from 'tap';
import { APPEND_RETRY_WAITS_MS, appendRetryWait } from '../../src/infra/event-store/kurrent-retry.js';

const waitsFor = (error: unknown): Array<number | undefined> => [1, 2, 3, 4].map((attempt) => appendRetryWait(error, attempt));

t.test('transient errors: tried again after growing waits, then given up', async (t) => {
  const transient: Array<[string, unknown]> = [
    // The client reads the leader from the metadata of the gRPC error, given here as the plain map it also accepts.
    ['not the leader', new NotLeaderError({ metadata: { 'leader-endpoint-host': 'node2', 'leader-endpoint-port': '2113' } } as unknown as ConstructorParameters<typeof NotLeaderError>[0])],
    ['server unavailable', new UnavailableError()],
    ['deadline passed', new DeadlineExceededError()],
    ['commit timed out', new TimeoutError()],
    // How the client reports a batch append the node did not handle: not ready, or too busy.
    ['node not ready', new UnknownError(undefined, 'Could not recognize Server Is Not Ready')],
    ['node too busy', new UnknownError(undefined, 'Could not recognize Server Is Busy')],
  ];
  for (const [name, error] of transient) {
    t.same(waitsFor(error), [...APPEND_RETRY_WAITS_MS, undefined], name);
  }
  t.ok(APPEND_RETRY_WAITS_MS.every((wait, i) => i === 0 || wait > APPEND_RETRY_WAITS_MS[i - 1]!), 'each wait longer than the last');
  t.ok(APPEND_RETRY_WAITS_MS.reduce((a, b) => a + b, 0) <= 1000, 'a second of waiting at most');
});

t.test('answers and failures that another attempt would not change: thrown at once', async (t) => {
  const final: Array<[string, unknown]> = [
    ['wrong expected version', new WrongExpectedVersionError(undefined, { streamName: 's', expected: 0n, current: 1n })],
    ['stream deleted', StreamDeletedError.fromStreamName('s')],
    ['append too large', MaxAppendSizeExceededError.fromMaxAppendSize(1024)],
    ['access denied', new AccessDeniedError()],
    ['unknown', new UnknownError()],
    ['unknown, another message', new UnknownError(undefined, 'Could not recognize BadRequest')],
    ['not a client error', new Error('boom')],
    ['not an error', undefined],
  ];
  for (const [name, error] of final) t.equal(appendRetryWait(error, 1), undefined, name);
});

t.test('a raw gRPC error the client passes on unconverted (an append to a node out of reach): read by its status code', async (t) => {
  const grpc = (code: number) => Object.assign(new Error(`${code} status`), { code, details: 'No connection established', metadata: {} });
  t.same(waitsFor(grpc(14)), [...APPEND_RETRY_WAITS_MS, undefined], 'unavailable: tried again');
  t.same(waitsFor(grpc(4)), [...APPEND_RETRY_WAITS_MS, undefined], 'deadline exceeded: tried again');
  t.equal(appendRetryWait(grpc(3), 1), undefined, 'invalid argument: thrown at once');
  t.equal(appendRetryWait(Object.assign(new Error('x'), { code: 14 }), 1), undefined, 'a code alone is not a gRPC status');
});
