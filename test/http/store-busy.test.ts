import { join } from 'node:path';
import Database from 'better-sqlite3';
import t from 'tap';
import { isStoreUnavailable } from '../../src/infra/outage.js';
import { DATABASE_FILE } from '../../src/infra/sqlite.js';
import { owner, publishedWidget, testApp, tokenFor } from '../support/app.js';

t.test('a store held by another writer past the wait: 503 store_unavailable with Retry-After, nothing stored, and the same request passes once it is free', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  // Another process holding the file's write lock (an admin command, a backup taking a write lock): longer than the service waits for it.
  const other = new Database(join(services.config.DATA_DIR, DATABASE_FILE));
  t.teardown(() => other.close());
  const head = await services.events.headPosition();
  other.prepare('BEGIN IMMEDIATE').run();
  const create = () => app.inject({ method: 'POST', url: '/api/widgets', headers: biz.headers, payload: { widget_type: 'nps', title: 'Held' } });
  const held = await create();
  t.equal(held.statusCode, 503);
  t.match(held.json(), { statusCode: 503, code: 'store_unavailable', error: 'Service Unavailable', message: /Retry in a few seconds/ });
  t.equal(held.headers['retry-after'], '5');
  t.notMatch(held.body, /SQLITE|busy|locked/i, 'no driver message');
  other.prepare('ROLLBACK').run();
  t.equal(await services.events.headPosition(), head, 'nothing of it was stored');
  t.equal((await create()).statusCode, 201, 'sent again once the store is free, it is created');
});

t.test('a submission the store stops taking after part of it was recorded (its duplicate guard) is a 500, not a 503 that says nothing was stored', async (t) => {
  const { app, services } = await testApp(t);
  const biz = await owner(services);
  const widget = await publishedWidget(app, biz, { settings: { prevent_duplicates: true } });
  const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });
  const append = services.events.append.bind(services.events);
  // The store refuses the n-th append of the next submission, as a file held by another writer would.
  const refuseAppend = (n: number) => {
    let calls = 0;
    services.events.append = async (...args) => (++calls === n ? Promise.reject(busy()) : append(...args));
    t.teardown(() => {
      services.events.append = append;
    });
  };
  const submit = async (fingerprint: string) =>
    app.inject({ method: 'POST', url: `/api/widgets/${widget}/submit`, remoteAddress: '198.51.100.20', payload: { answers: { rating: 3 }, _token: await tokenFor(app, 'widgets', widget), metadata: { fingerprint } } });
  refuseAppend(1);
  const first = await submit('first');
  t.match(first.json(), { statusCode: 503, code: 'store_unavailable' }, 'refused at its first event: nothing was stored, and it may be sent again');
  services.events.append = append;
  t.equal((await submit('first')).statusCode, 200, 'sent again, it is taken');
  refuseAppend(2);
  const partial = await submit('second');
  t.match(partial.json(), { statusCode: 500, code: 'internal_error' }, 'refused after its guard was stored');
  t.notMatch(partial.body, /SQLITE|locked/);
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
