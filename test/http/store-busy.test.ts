import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { isStoreUnavailable } from '../../src/infra/outage.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';

// A short wait keeps the test quick, and shows the setting is the one the embedded store waits for.
const env = { STORE_TIMEOUT_MS: '300' };

t.test('a store held by another writer past the wait (STORE_TIMEOUT_MS): 503 store_unavailable with Retry-After, nothing stored, and the same request passes once it is free', async (t) => {
  const { app, services } = await testApp(t, { env });
  const biz = await owner(services);
  // Another process holding the file's write lock (an admin command, a backup taking a write lock): longer than the service waits for it.
  const other = new Database(join(services.config.DATA_DIR, DATABASE_FILE));
  t.teardown(() => other.close());
  const head = await services.events.headPosition();
  other.prepare('BEGIN IMMEDIATE').run();
  const create = () => app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'nps', title: 'Held' } });
  const asked = Date.now();
  const held = await create();
  t.equal(held.statusCode, 503);
  t.ok(Date.now() - asked < 4000, 'refused after the configured wait, not the default 5 s');
  t.match(held.json(), { statusCode: 503, code: 'store_unavailable', error: 'Service Unavailable', message: /Retry in a few seconds/ });
  t.equal(held.headers['retry-after'], '5');
  t.notMatch(held.body, /SQLITE|busy|locked/i, 'no driver message');
  other.prepare('ROLLBACK').run();
  t.equal(await services.events.headPosition(), head, 'nothing of it was stored');
  t.equal((await create()).statusCode, 201, 'sent again once the store is free, it is created');
});

t.test('a guarded submission refused while the store is held: 503, none of its events stored, and the visitor\'s retry is taken, whole, not called a duplicate', async (t) => {
  const { app, services } = await testApp(t, { env });
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz, { settings: { prevent_duplicates: true, network_limit_per_hour: 3, max_responses: 5 } });
  const submit = async () =>
    app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, remoteAddress: '198.51.100.20', payload: { answers: { rating: 3 }, _token: await tokenFor(app, 'widgets', widget), metadata: { fingerprint: 'visitor' } } });
  const token = await tokenFor(app, 'widgets', widget);
  const other = new Database(join(services.config.DATA_DIR, DATABASE_FILE));
  t.teardown(() => other.close());
  const head = await services.events.headPosition();
  other.prepare('BEGIN IMMEDIATE').run();
  const held = await submit();
  t.match(held.json(), { statusCode: 503, code: 'store_unavailable' });
  other.prepare('ROLLBACK').run();
  t.equal(await services.events.headPosition(), head, 'none of its events was stored');
  const again = await submit();
  t.equal(again.statusCode, 200, 'sent again, it is taken');
  const types = (await services.events.readAll({ after: head, limit: 10 })).map((event) => event.type);
  t.same(types, ['SubmissionGuarded', 'NetworkSubmissionCounted', 'SubmissionSlotReserved', 'ResponseSubmitted'], 'recorded once, whole');
  const repeat = await app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, remoteAddress: '198.51.100.20', payload: { answers: { rating: 4 }, _token: token, metadata: { fingerprint: 'visitor' } } });
  t.match(repeat.json(), { statusCode: 409, code: 'duplicate_submission' }, 'a third is a duplicate');
  const after = (await services.events.readAll({ after: head, limit: 10 })).map((event) => event.type);
  t.equal(after.length, 4, 'and takes no slot: nothing of the refused duplicate is stored');
});

t.test('what each driver says of a store out of reach is told apart from other failures, through the causes it is wrapped in', async (t) => {
  const named = (name: string) => Object.assign(new Error('x'), { name });
  for (const error of [
    Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' }),
    Object.assign(new Error('x'), { code: 'SQLITE_BUSY_SNAPSHOT' }),
    Object.assign(new Error('x'), { code: 'SQLITE_LOCKED' }),
    Object.assign(new Error('x'), { type: 'unavailable' }),
    Object.assign(new Error('x'), { type: 'deadline-exceeded' }),
    Object.assign(new Error('x'), { type: 'not-leader' }),
    named('MongoServerSelectionError'),
    named('MongoNetworkTimeoutError'),
    new Error('wrapped', { cause: new Error('again', { cause: Object.assign(new Error('x'), { code: 'SQLITE_BUSY' }) }) }),
  ]) {
    t.ok(isStoreUnavailable(error), `${error.message} ${JSON.stringify(error)}`);
  }
  for (const error of [new Error('x'), Object.assign(new Error('x'), { code: 'SQLITE_CONSTRAINT' }), Object.assign(new Error('x'), { code: 'SQLITE_FULL' }), Object.assign(new Error('x'), { type: 'stream-deleted' }), named('MongoServerError'), null, 'SQLITE_BUSY']) {
    t.notOk(isStoreUnavailable(error), String(error));
  }
});

t.test('what the drivers say of a store that is failing over, not ready, too busy or slow to confirm: unavailable; their final answers are not', async (t) => {
  const { CancelledError, UnknownError, AccessDeniedError } = await import('@kurrent/kurrentdb-client');
  const { MongoServerError, MongoWriteConcernError, MongoNetworkError } = await import('mongodb');
  const labelled = (label: string) => {
    const error = new MongoServerError({ message: 'x', code: 112 });
    error.addErrorLabel(label);
    return error;
  };
  const unavailable: Array<[string, unknown]> = [
    ['kurrent: the call cancelled by the server (a node stepping down)', new CancelledError()],
    ['kurrent: node not ready', new UnknownError(undefined, 'Could not recognize Server Is Not Ready')],
    ['kurrent: node too busy', new UnknownError(undefined, 'Server Is Too Busy')],
    ['mongo: retryable write left after the driver\'s retry', labelled('RetryableWriteError')],
    ['mongo: transaction conflict left after withTransaction\'s retries', labelled('TransientTransactionError')],
    ['mongo: commit of unknown outcome', labelled('UnknownTransactionCommitResult')],
    ['mongo: majority did not confirm in time', new MongoWriteConcernError({ writeConcernError: { code: 64, errmsg: 'waiting for replication timed out' }, ok: 1 } as unknown as ConstructorParameters<typeof MongoWriteConcernError>[0])],
    ['mongo: primary stepped down', new MongoServerError({ message: 'x', code: 189 })],
    ['mongo: read past its maxTimeMS', new MongoServerError({ message: 'operation exceeded time limit', code: 50 })],
    ['mongo: network', new MongoNetworkError('x')],
    ['mongo: wrapped', new Error('write failed', { cause: labelled('TransientTransactionError') })],
  ];
  for (const [name, error] of unavailable) t.ok(isStoreUnavailable(error), name);
  const final: Array<[string, unknown]> = [
    ['kurrent: another unknown error', new UnknownError(undefined, 'Could not recognize BadRequest')],
    ['kurrent: access denied', new AccessDeniedError()],
    ['mongo: duplicate key', new MongoServerError({ message: 'x', code: 11000 })],
    ['mongo: another label', labelled('NoWritesPerformed')],
    ['not a driver: a code that is a mongo one', Object.assign(new Error('x'), { code: 189 })],
  ];
  for (const [name, error] of final) t.notOk(isStoreUnavailable(error), name);
});
