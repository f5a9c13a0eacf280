import { MongoClient, MongoServerError } from 'mongodb';
import t from 'tap';
import { createServer } from 'node:net';
import { DEFAULT_TIMEOUT_MS, INDEX_BUILD, mongoClientOptions, openMongoReadModels } from '../../src/infra/read-models/mongo.js';
import { isStoreUnavailable } from '../../src/infra/outage.js';
import { afterError, backoffMs } from '../../src/infra/read-models/mongo-transaction.js';

/** What the driver makes of a connection string and the adapter's options (no server is contacted). */
const parsed = (url: string, timeoutMs?: number) => new MongoClient(url, mongoClientOptions(url, timeoutMs)).options;

t.test('waits for a server, a connection and a pooled connection are bounded, unless the connection string says otherwise', async (t) => {
  const options = parsed('mongodb://db1,db2,db3/feedback?replicaSet=rs0');
  t.equal(options.serverSelectionTimeoutMS, DEFAULT_TIMEOUT_MS, 'server selection: not the driver\'s 30 s');
  t.equal(options.connectTimeoutMS, DEFAULT_TIMEOUT_MS);
  t.equal(options.waitQueueTimeoutMS, DEFAULT_TIMEOUT_MS, 'a pooled connection: not for ever');
  t.equal((options as { ignoreUndefined?: boolean }).ignoreUndefined, true);
  t.equal(parsed('mongodb://db1/feedback', 1234).serverSelectionTimeoutMS, 1234, 'the configured bound');
  const own = parsed('mongodb://db1/feedback?serverselectiontimeoutms=9000&connectTimeoutMS=7000', 1234);
  t.equal(own.serverSelectionTimeoutMS, 9000, 'the string\'s own, however it spells the key');
  t.equal(own.connectTimeoutMS, 7000);
  t.equal(own.waitQueueTimeoutMS, 1234, 'and the bound for what it leaves out');
});

t.test('index builds wait for a majority of the members, not all of them', async (t) => {
  t.same(INDEX_BUILD, { commitQuorum: 'majority' });
});

t.test('a transaction is tried again as the driver says, until its bound', async (t) => {
  const labelled = (label: string, code = 112) => {
    const error = new MongoServerError({ message: 'x', code });
    error.addErrorLabel(label);
    return error;
  };
  const conflict = labelled('TransientTransactionError');
  const unknownCommit = labelled('UnknownTransactionCommitResult');
  t.equal(afterError(conflict, 'callback', 0, 100), 'run-again', 'a write conflict: the callback runs again');
  t.equal(afterError(conflict, 'commit', 0, 100), 'run-again', 'a commit that met one: from the start');
  t.equal(afterError(unknownCommit, 'commit', 0, 100), 'commit-again', 'a commit of unknown outcome: committed again');
  t.equal(afterError(labelled('UnknownTransactionCommitResult', 50), 'commit', 0, 100), 'throw', 'but not one that ran past its time limit');
  t.equal(afterError(unknownCommit, 'callback', 0, 100), 'throw', 'that label means nothing to a callback');
  for (const error of [conflict, unknownCommit]) t.equal(afterError(error, 'commit', 100, 100), 'throw', 'past the bound: the last error is thrown');
  t.equal(afterError(new MongoServerError({ message: 'x', code: 11000 }), 'callback', 0, 100), 'throw', 'a duplicate key');
  t.equal(afterError(new Error('lease lost'), 'callback', 0, 100), 'throw', 'an error of the callback\'s own');
  t.equal(afterError(undefined, 'callback', 0, 100), 'throw');
  t.equal(backoffMs(1, 1), 7.5, 'the driver\'s backoff: 5 ms growing by half');
  t.equal(backoffMs(30, 1), 500, 'at most 500 ms');
  t.equal(backoffMs(3, 0), 0, 'with jitter');
});

t.test('a server out of reach: opening gives up after the bound, as a store unavailable, without the credentials', async (t) => {
  // A port nobody listens on: bound, then closed.
  const port = await new Promise<number>((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
  const error = await openMongoReadModels(`mongodb://127.0.0.1:${port}/feedback?directConnection=true`, { timeoutMs: 200 }).then(
    () => undefined,
    (err: unknown) => err,
  );
  t.ok(error instanceof Error && isStoreUnavailable(error), 'the server selection error is kept as the cause');
});

t.test('the bounded transaction loop: runs again, commits again, returns a manual abort\'s value, and gives up at its bound', async (t) => {
  const { transact } = await import('../../src/infra/read-models/mongo-transaction.js');
  const labelled = (label: string) => {
    const error = new MongoServerError({ message: label, code: 112 });
    error.addErrorLabel(label);
    return error;
  };
  /** The session's transaction states as the loop drives them; `commits` fail with the errors given, in order. */
  const session = (commits: unknown[] = []) => {
    const log: string[] = [];
    let active = false;
    const s = {
      log,
      startTransaction: () => {
        active = true;
        log.push('start');
      },
      inTransaction: () => active,
      abortTransaction: async () => {
        active = false;
        log.push('abort');
      },
      commitTransaction: async () => {
        const failure = commits.shift();
        log.push(failure ? 'commit failed' : 'commit');
        if (failure) throw failure;
        active = false;
      },
    };
    return s;
  };
  const run = <T>(s: ReturnType<typeof session>, fn: () => Promise<T>, boundMs = 60_000, now = Date.now) => transact(s as never, fn, {}, boundMs, now);

  const conflicted = session();
  let calls = 0;
  t.equal(await run(conflicted, async () => (++calls < 3 ? Promise.reject(labelled('TransientTransactionError')) : 'done')), 'done', 'a write conflict: the callback runs again');
  t.same(conflicted.log, ['start', 'abort', 'start', 'abort', 'start', 'commit']);

  const unknown = session([labelled('UnknownTransactionCommitResult')]);
  t.equal(await run(unknown, async () => 1), 1);
  t.same(unknown.log, ['start', 'commit failed', 'commit'], 'a commit of unknown outcome is committed again, not run again');

  const commitConflict = session([labelled('TransientTransactionError')]);
  t.equal(await run(commitConflict, async () => 2), 2);
  t.same(commitConflict.log, ['start', 'commit failed', 'start', 'commit'], 'a commit that conflicted runs the whole transaction again');

  const aborted = session();
  t.equal(
    await run(aborted, async () => {
      await aborted.abortTransaction();
      return false;
    }),
    false,
    'a callback that aborts has its value returned, uncommitted',
  );
  t.same(aborted.log, ['start', 'abort']);

  const own = session();
  await t.rejects(run(own, async () => Promise.reject(new Error('lease lost'))), /lease lost/, 'an error of the callback\'s own is thrown at once');
  t.same(own.log, ['start', 'abort']);

  let clock = 0;
  const bounded = session();
  const last = await run(
    bounded,
    async () => {
      clock += 40;
      throw labelled('TransientTransactionError');
    },
    100,
    () => clock,
  ).then(
    () => undefined,
    (error: unknown) => error,
  );
  t.ok(last instanceof MongoServerError && last.hasErrorLabel('TransientTransactionError'), 'past its bound, the last error is thrown, its label kept (a 503)');
  t.same(bounded.log, ['start', 'abort', 'start', 'abort', 'start', 'abort'], 'three attempts fit in the bound');
});
